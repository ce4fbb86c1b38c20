"""The stranger-match promise in galleries of several photos per person (#28): `facerec eval --open-set
--photos-per-person 1,3,5`, and `benchmarks/open_set_photos.py` on LFW.

Gallery: every person with more photos than the largest k, k of them enrolled (a seeded order per person, so a
larger k adds photos to a smaller k's), the photos beyond the largest k searched (mated searches, the same for every
k: identified when the top person is right and at or above the threshold). Strangers: the people with one photo
(non-mated searches: a false match when any enrolled face reaches the threshold). Each k is scored at the
threshold the policy sets, with the gallery's own stranger tail measured on its enrolled faces as the app does
(disjoint from every stranger), under the policy's rule (a person with k photos is k ** exponent chances) and under
the face-count rule (k chances). The promise is kept when the measured FPIR is at most the accepted rate.
Intervals: 95% bootstrap over people (`facerec.evaluation.open_set.Outcomes`, as the open-set eval's).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from facerec.errors import InvalidArgument
from facerec.evaluation.open_set import Outcomes, percent
from facerec.openset.cohort import RawCosine, Scorer, normalised
from facerec.openset.per_person import PhotoCounts
from facerec.openset.population_tail import measure_population_tail
from facerec.openset.threshold_policy import ThresholdPolicy

def evaluate_photos_per_person(people: dict[str, np.ndarray], strangers: np.ndarray, policy: ThresholdPolicy,
                               photos: tuple[int, ...] = (1, 3, 5), seed: int = 51,
                               scorer: Scorer | None = None) -> dict:
    """`people`: name -> unit embeddings [n, D] of their photos (only those with more than max(photos) count);
    `strangers`: unit embeddings [S, D] of people never enrolled. One row per k in `photos`. Scores are those
    `scorer` gives (the gallery's: cohort-normalised on a card calibrated on them), as identify decides."""
    scorer = scorer or RawCosine()
    rng = np.random.default_rng(seed)
    most = max(photos)
    names = sorted(name for name, vectors in people.items() if len(vectors) > most)
    if not names or not len(strangers):
        raise InvalidArgument(f"needs people with more than {most} photos and people with one photo")
    order = {name: rng.permutation(len(people[name])) for name in names}
    queries = np.concatenate([people[n][order[n][most:]] for n in names])
    query_owner = np.concatenate([[i] * (len(people[n]) - most) for i, n in enumerate(names)])
    rules = {"policy": policy, "face_count": ThresholdPolicy(replace(policy.calibration, photo_exponent=1.0),
                                                             policy.fpir)}
    query_statistics, stranger_statistics = scorer.statistics(queries), scorer.statistics(strangers)
    rows = []
    for k in photos:
        enrolled = np.concatenate([people[n][order[n][:k]] for n in names])
        enrolled_owner = np.repeat(np.arange(len(names)), k)
        theirs = scorer.statistics(enrolled)
        tail = measure_population_tail(enrolled, enrolled_owner, statistics=theirs, ceiling=policy.calibration.ceiling)
        scores = normalised(queries @ enrolled.T, query_statistics, theirs)
        best_owner, top = enrolled_owner[scores.argmax(axis=1)], scores.max(axis=1)
        stranger_top = normalised(strangers @ enrolled.T, stranger_statistics, theirs).max(axis=1)
        row = {"photos_per_person": k, "people": len(names), "enrolled_faces": int(len(enrolled)),
               "mated_searches": int(len(queries)), "non_mated_searches": int(len(strangers)),
               "gallery_tail_people": None if tail is None else tail.people}
        for label, rule_policy in rules.items():
            rule = rule_policy.for_gallery(len(enrolled), len(names), population=tail,
                                           photo_counts=PhotoCounts.of_people(np.full(len(names), k)))
            named = stranger_top >= rule.threshold
            found = (best_owner == query_owner) & (top >= rule.threshold)
            non_mated, mated = Outcomes(len(named)), Outcomes(len(names))  # a stranger is one person each
            non_mated.add(np.arange(len(named)), named)
            mated.add(query_owner, found)
            row[label] = {"threshold": round(rule.threshold, 4), "expected_fpir": rule.expected_fpir,
                          "effective_comparisons": rule.effective_comparisons or float(len(enrolled)),
                          "fpir": float(named.mean()), "fpir_interval": non_mated.interval(rng),
                          "dir": float(found.mean()), "dir_interval": mated.interval(rng),
                          "promise_kept": bool(policy.pinned_threshold is not None or named.mean() <= policy.fpir)}
        row["dir_gained_vs_face_count"] = row["policy"]["dir"] - row["face_count"]["dir"]
        rows.append(row)
    return {"accepted_fpir": policy.fpir, "exponent": policy.calibration.photo_exponent, "rows": rows,
            "promise_kept": f"{sum(r['policy']['promise_kept'] for r in rows)} of {len(rows)}"}


def markdown_table(result: dict) -> str:
    lines = ["| photos per person | enrolled faces | threshold | measured FPIR (95% interval) | DIR (95% interval) | "
             "promise kept | face-count rule: threshold, FPIR, DIR |", "|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        policy, faces = row["policy"], row["face_count"]
        lines.append(f"| {row['photos_per_person']} | {row['enrolled_faces']:,} | {policy['threshold']:.4f} | "
                     f"{percent(policy['fpir'], policy['fpir_interval'])} | {percent(policy['dir'], policy['dir_interval'])} | "
                     f"{'yes' if policy['promise_kept'] else 'no'} | {faces['threshold']:.4f}, {percent(faces['fpir'])}, "
                     f"{percent(faces['dir'])} |")
    return "\n".join(lines)
