"""Gallery health from sightings, measured: a one-photo LFW gallery before and after identifying its people.

    python benchmarks/sightings_health.py [--data ../shared/data] [--people 100] [--json OUT]

1. A fresh gallery (SQLite + FAISS, the shipped model, default settings): `--people` LFW people with at least 5
   photos (the first in name order), each enrolled from photo 1 alone (`Gallery.enroll`, its largest face).
2. Their photos 2-5 identified (`Gallery.identify`): every named face is kept as a sighting.
3. `Gallery.health()` before and after: the enrolled-only figures (undefined without positives) and the figures
   over enrolled faces + sightings, the trend and the weak enrollments; and how long the report takes with the
   memory full (10,000 sightings: the real ones repeated with a little noise, labelled so), median of 3.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from facerec.faces.choice import largest_face_index  # noqa: E402
from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.words.health import trend_reading  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402

QUERIES = range(1, 5)  # photos 2-5


def figures(report: dict) -> dict:
    return {"closest_is_positive_accuracy": report["closest_is_positive_accuracy"], **report["median_distances"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/sightings_health.json"))
    args = parser.parse_args()
    people = [(n, p) for n, p in list_identities(Path(args.data) / "lfw").items() if len(p) >= 5][: args.people]
    with tempfile.TemporaryDirectory() as home, Gallery.open(home) as gallery:
        for name, photos in people:
            photo, faces = gallery.services().photos.detect(photos[0])
            gallery.enroll(photo, name, face_index=largest_face_index(faces), allow_lookalike=True,
                           allow_low_quality=True)
        before = gallery.health().to_dict()
        started = time.perf_counter()
        faces = named = right = 0
        for name, photos in people:
            for index in QUERIES:
                for match in gallery.identify(photos[index]):
                    faces += 1
                    named += match.name is not None
                    right += match.name == name
        identify_s = time.perf_counter() - started
        started = time.perf_counter()
        after = gallery.health().to_dict()
        health_s = time.perf_counter() - started
        memory = after["sightings"]
        seen = parts_of(gallery).store.sightings.rows(gallery.services().maintenance.model_id)
        rng = np.random.default_rng(0)
        with parts_of(gallery).store.transaction() as session:
            for row in range(10_000 - len(seen)):
                vector = seen.embeddings[row % len(seen)] + 0.02 * rng.standard_normal(512).astype(np.float32)
                parts_of(gallery).store.sightings.add(session, int(seen.identity_ids[row % len(seen)]),
                                            vector / np.linalg.norm(vector), gallery.services().maintenance.model_id, 0.0, "identified",
                                            gallery.services().settings.sightings_memory)
        full_s = []
        for _ in range(3):
            started = time.perf_counter()
            full = gallery.health()
            full_s.append(time.perf_counter() - started)
    result = {
        "people": len(people), "query_photos": len(people) * len(QUERIES), "faces_found": faces, "named": named,
        "named_right": right, "identify_ms_per_photo": round(1000 * identify_s / (len(people) * len(QUERIES)), 1),
        "enrolled_only": figures(before), "with_sightings": figures(after),
        "sightings": memory["sightings"], "people_seen": memory["people_seen"], "sources": memory["sources"],
        "trend_unit": memory["trend_unit"], "trend": [{k: t[k] for k in ("window", "sightings",
                                                                       "MedianClosestPositiveDistance",
                                                                       "closest_is_positive_accuracy")}
                                                    for t in memory["trend"]],
        "trend_reading": trend_reading(memory["trend"], memory["trend_unit"]), "weak_enrollments": len(memory["weak_enrollments"]),
        "weak_examples": [{k: w[k] for k in ("name", "sightings", "median_similarity", "reasons")}
                          for w in memory["weak_enrollments"][:5]],
        "health_s": round(health_s, 2),
        "health_s_with_10000_sightings_median_of_3": round(statistics.median(full_s), 2),
        "sightings_in_full_memory": full.sightings["sightings"],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_result(args.json, result, Settings().model_path, threads=0)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
