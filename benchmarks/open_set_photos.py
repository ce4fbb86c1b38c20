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
from facerec.openset.population_tail import measure_population_tail  # noqa: E402
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdPolicy  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

PHOTOS = (1, 3, 5)
MIN_PHOTOS = 6
BOOTSTRAP = 1000
SEED = 51


def interval(hits: np.ndarray, owners: np.ndarray, rng: np.random.Generator) -> list[float]:
    """95% bootstrap interval of the rate of `hits`, resampling the people (`owners`) the searches belong to."""
    people, index = np.unique(owners, return_inverse=True)
    searches, positives = np.bincount(index), np.bincount(index, weights=hits.astype(np.float64))
    draws = np.stack([np.bincount(rng.integers(0, len(people), len(people)), minlength=len(people))
                      for _ in range(BOOTSTRAP)])
    rates = (draws @ positives) / np.maximum(draws @ searches, 1)
    return [float(v) for v in np.percentile(rates, [2.5, 97.5])]


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
    card = settings.model_card()
    section = card["calibration"]["photos_per_person"]
    calibration = ScoreCalibration.from_card(card, card["sha256"])
    rules = {"policy": ThresholdPolicy(calibration),
             "face_count": ThresholdPolicy(replace(calibration, photo_exponent=1.0)),
             "point_estimate": ThresholdPolicy(replace(calibration, photo_exponent=section["exponent_point"]))}
    strangers = np.stack([vectors[r] for r in stranger_rows])
    rng = np.random.default_rng(SEED)
    people = sorted(set(person[gallery_rows].tolist()))
    order = {p: rng.permutation(np.flatnonzero(person == p)) for p in people}  # one seeded order per person
    results = []
    for k in PHOTOS:
        enrolled_rows = np.concatenate([order[p][:k] for p in people])
        query_rows = np.concatenate([order[p][max(PHOTOS):] for p in people])  # the same queries for every k
        enrolled = np.stack([vectors[r] for r in enrolled_rows])
        enrolled_people = person[enrolled_rows]
        tail = measure_population_tail(enrolled, enrolled_people)
        queries = np.stack([vectors[r] for r in query_rows])
        query_scores = queries @ enrolled.T
        best = enrolled_people[query_scores.argmax(axis=1)]
        top = query_scores.max(axis=1)
        stranger_top = (strangers @ enrolled.T).max(axis=1)
        row = {"photos_per_person": k, "people": len(people), "enrolled_faces": int(len(enrolled_rows)),
               "mated_searches": int(len(query_rows)), "non_mated_searches": int(len(stranger_rows)),
               "gallery_tail_people": None if tail is None else tail.people}
        for name, policy in rules.items():
            rule = policy.for_gallery(len(enrolled_rows), len(people), population=tail,
                                      photo_counts=np.full(len(people), k))
            named = stranger_top >= rule.threshold
            found = (best == person[query_rows]) & (top >= rule.threshold)
            row[name] = {"threshold": round(rule.threshold, 4), "expected_fpir": rule.expected_fpir,
                         "effective_comparisons": rule.effective_comparisons or len(enrolled_rows),
                         "fpir": float(named.mean()), "fpir_interval": interval(named, stranger_rows, rng),
                         "dir": float(found.mean()), "dir_interval": interval(found, person[query_rows], rng)}
        row["dir_gained_vs_face_count"] = row["policy"]["dir"] - row["face_count"]["dir"]
        results.append(row)
        print(k, {n: (row[n]["threshold"], round(row[n]["fpir"], 4), round(row[n]["dir"], 4)) for n in rules})
    write_result(args.out, {"accepted_fpir": 0.01, "exponent": section["exponent"],
                            "exponent_point": section["exponent_point"], "rows": results,
                            "gallery": f"LFW people with >= {MIN_PHOTOS} photos (trained on)",
                            "strangers": "LFW one-photo people (never trained on)"},
                 model_path=settings.model_path, threads=None)


if __name__ == "__main__":
    main()
