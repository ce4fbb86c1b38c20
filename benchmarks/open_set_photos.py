"""The stranger-match promise in galleries of 1, 3 and 5 photos per person (#28), on LFW.

    python benchmarks/open_set_photos.py --out benchmarks/results/open_set_photos.json   # ~10 min on 2 cores

Gallery: every LFW person with >= 6 photos, k of their photos enrolled (seeded), the others searched (mated
searches: identified when the top person is right and at or above the threshold). Strangers: the 4,069 LFW
people with one photo, never trained on (non-mated searches: a false match when any enrolled face reaches the
threshold). The gallery people have 3+ photos, so the model was trained on them (the LFW protocol allows it):
their own scores flatter the DIR, and strangers' scores against trained people may run lower than against
strangers-to-the-model, so this measures the promise on a gallery the model knows. Crops are the LFW cache's
(`facerec-train prepare`: the runtime's detector and alignment), embedded by the shipped model with its flip.

Each k is scored at the threshold the policy sets, with the gallery's own stranger tail measured on its enrolled
faces as the app does (disjoint from every stranger), under two rules: the policy's (a person with k photos counts
k ** exponent chances, the card's exponent) and today's face-count rule (k chances). The card's exponent is the
upper end of its interval; the point estimate's rule is reported too, for what it would gain and risk. Intervals:
95% bootstrap over people.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.cache import load_cache  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.evaluation.photos_per_person import evaluate_photos_per_person  # noqa: E402
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdPolicy  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

PHOTOS = (1, 3, 5)
MIN_PHOTOS = 6
SEED = 51


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lfw-cache", default="cache/lfw", type=Path)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    settings = Settings()
    faces, names, _paths = load_cache(args.lfw_cache)
    names = np.array(names)
    person = np.unique(names, return_inverse=True)[1]
    counts = np.bincount(person)
    gallery_rows = np.flatnonzero(counts[person] >= MIN_PHOTOS)
    stranger_rows = np.flatnonzero(counts[person] == 1)
    embedder = FaceEmbedder(settings.model_path, flip_tta=settings.flip_tta)
    rows = np.concatenate([gallery_rows, stranger_rows])
    embedded = np.concatenate([embedder.embed(np.asarray(faces[rows[i:i + 256]])) for i in range(0, len(rows), 256)])
    vectors = dict(zip(rows.tolist(), embedded))
    people = {}
    for row in gallery_rows:
        people.setdefault(str(names[row]), []).append(vectors[row])
    people = {name: np.stack(rows) for name, rows in people.items()}
    strangers = np.stack([vectors[r] for r in stranger_rows])
    card = settings.model_card()
    section = card["calibration"]["photos_per_person"]
    policy = ThresholdPolicy(ScoreCalibration.from_card(card, card["sha256"]))
    result = evaluate_photos_per_person(people, strangers, policy, PHOTOS, SEED)
    point = evaluate_photos_per_person(people, strangers, ThresholdPolicy(
        replace(policy.calibration, photo_exponent=section["exponent_point"])), PHOTOS, SEED)
    for row, other in zip(result["rows"], point["rows"]):
        row["point_estimate"] = other["policy"]
        print(row["photos_per_person"], {n: (row[n]["threshold"], round(row[n]["fpir"], 4), round(row[n]["dir"], 4))
                                         for n in ("policy", "face_count", "point_estimate")})
    write_result(args.out, {**result, "exponent_point": section["exponent_point"],
                            "gallery": f"LFW people with >= {MIN_PHOTOS} photos (trained on)",
                            "strangers": "LFW one-photo people (never trained on)"},
                 model_path=settings.model_path, threads=None)


if __name__ == "__main__":
    main()
