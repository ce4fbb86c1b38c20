"""Is the enrollment quality score valid? Recognition on LFW by the quality of the enrollment photo.

    facerec-train prepare ../shared/data/lfw cache/lfw      # once: RetinaFace + alignment of every LFW photo
    python benchmarks/enrollment_quality.py [--cache cache/lfw] [--json benchmarks/results/enrollment_quality.json]

The 779 LFW evaluation people (exactly two photos), one-shot, both ways: every person enrolled from photo 1 and
photo 2 identified, then the other way round (1,558 enrollments). Each enrollment photo gets the shipped quality
score (`facerec.faces.quality`, calibrated on held-out CelebA identities, never on LFW: this is its test). Outcome per
enrollment: is the other photo ranked first among the 779 enrolled (rank-1), and is it named at the threshold the
policy sets for a gallery of 779 faces. Reported: the lowest-quality tenth against the rest, the quartiles, the
enrollments the score flags as low against the others, and how often each reason is given. Photos the detector
missed (the cache's central-square fallbacks) have no landmarks and are left out, and counted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from facerec.datasets.cache import load_cache, read_results  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.openset.cohort import Cohort, cohort_path, normalised  # noqa: E402
from facerec.openset.model_card import policy_for  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.faces.quality import QualityModel  # noqa: E402
from facerec.faces.quality.calibration import one_shot_outcomes  # noqa: E402
from facerec.faces.quality.features import measure  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def rates(mask: np.ndarray, ranked_first: np.ndarray, named: np.ndarray, scores: np.ndarray) -> dict:
    return {"enrollments": int(mask.sum()), "mean_score": round(float(scores[mask].mean()), 3),
            "rank1": round(float(ranked_first[mask].mean()), 3),
            "named_at_threshold": round(float(named[mask].mean()), 3)}


def reason_kind(reason: str) -> str:
    """The reason without its figures, to count by: the cache keeps no face box, so a size reason's width would
    read "0 px" (the landmarks alone give the eye distance the score uses)."""
    return "small face" if reason.startswith("face is ") else reason.split(" (")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("cache/lfw"))
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/enrollment_quality.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    settings = Settings()
    embedder = FaceEmbedder(settings.model_path)
    model = QualityModel.load(settings.quality_calibration_path)
    faces, identities, _paths = load_cache(args.cache)
    results = {int(r["row"]): r for r in read_results(args.cache)}
    by_person: dict[str, list[int]] = {}
    for row, identity in enumerate(identities):
        by_person.setdefault(identity, []).append(row)
    pairs = [rows for rows in by_person.values() if len(rows) == 2]
    usable = [rows for rows in pairs if all(results[r]["status"] == "face" for r in rows)]
    rows = np.array(usable)  # [P, 2]
    embeddings = embedder.embed(np.asarray(faces[rows.ravel()])).reshape(len(rows), 2, -1)
    policy = policy_for(settings, embedder.sha256)
    threshold = policy.for_gallery(len(rows)).threshold
    # The threshold is on the normalised score when the card says so: each pair is scored as identify scores it
    # (until 1f797af this compared cosines with the score threshold, so "named at the threshold" read 0 everywhere)
    cohort = Cohort.load(cohort_path(settings.model_path)) if policy.calibration.normalised else None
    labels = np.arange(len(rows))
    ranked_first, named, scores, reasons = [], [], [], Counter()
    for enrolled_side in (0, 1):
        enrolled, queries = embeddings[:, enrolled_side], embeddings[:, 1 - enrolled_side]
        first, _trials = one_shot_outcomes(enrolled, labels, enrolled, labels, queries, labels, -1.0)
        own = np.sum(enrolled * queries, axis=1)  # each person's other photo against their enrolled one
        if cohort is not None:
            own = normalised(own, cohort.statistics(queries), cohort.statistics(enrolled))
        ranked_first += first.tolist()
        named += ((first > 0) & (own >= threshold)).tolist()
        for row in rows[:, enrolled_side]:
            landmarks = np.array(results[int(row)]["landmarks"].split(), np.float64).reshape(5, 2)
            quality = model.assess(measure(embedder, np.asarray(faces[row]), landmarks), 0.0)
            scores.append(quality.score)
            reasons.update(reason_kind(reason) for reason in quality.reasons)
    ranked_first, named, scores = np.array(ranked_first, bool), np.array(named, bool), np.array(scores)
    order = np.argsort(scores, kind="stable")
    tenth = np.zeros(len(scores), bool)
    tenth[order[: len(scores) // 10]] = True
    quartile = np.empty(len(scores), int)
    quartile[order] = np.arange(len(scores)) * 4 // len(scores)
    low = scores < model.low_score
    summary = {
        "people": len(rows), "enrollments": len(scores), "left_out_people_without_detection": len(pairs) - len(usable),
        "threshold_for_gallery": round(threshold, 4), "low_score": model.low_score,
        "lowest_tenth": rates(tenth, ranked_first, named, scores),
        "the_rest": rates(~tenth, ranked_first, named, scores),
        "quartiles": [rates(quartile == q, ranked_first, named, scores) for q in range(4)],
        "flagged_low": rates(low, ranked_first, named, scores) if low.any() else {"enrollments": 0},
        "not_flagged": rates(~low, ranked_first, named, scores),
        "reasons": dict(reasons.most_common()), "all": rates(np.ones(len(scores), bool), ranked_first, named, scores),
        "seconds": round(time.perf_counter() - started, 1), "model": settings.model_path.name,
        "quality_calibration": settings.quality_calibration_path.name,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_result(args.json, summary, settings.model_path, threads=0, embedder=embedder)
    print(json.dumps(summary, indent=1))
    print("\n| enrollment photos | enrollments | mean score | rank-1 | named at the threshold |")
    print("|---|---:|---:|---:|---:|")
    for label, key in (("lowest-quality tenth", "lowest_tenth"), ("the rest", "the_rest"),
                       ("flagged low", "flagged_low"), ("not flagged", "not_flagged")):
        band = summary[key]
        if band["enrollments"]:
            print(f"| {label} | {band['enrollments']} | {band['mean_score']:.3f} | {band['rank1']:.3f} | "
                  f"{band['named_at_threshold']:.3f} |")
    for number, band in enumerate(summary["quartiles"], 1):
        print(f"| quartile {number} | {band['enrollments']} | {band['mean_score']:.3f} | {band['rank1']:.3f} | "
              f"{band['named_at_threshold']:.3f} |")


if __name__ == "__main__":
    main()
