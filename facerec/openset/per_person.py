"""How many chances a stranger gets against one person with k enrolled photos: the policy counts people, not faces.

A stranger is named when their best match over every enrolled person reaches the threshold, and a person's best
match is the highest of their k photos. If k photos of one person were k independent chances, a gallery's size
in faces would be the right count; if they were one chance (the same face k times), its size in people. Neither
is assumed: on identities the model never saw, `measure_photo_exponent` draws k photos of a person, takes a
stranger's best similarity to them, and compares how often that reaches a deep-tail threshold with how often one
photo does. The ratio m_k is the number of independent chances k photos are worth; it is summarised as
m_k = k ** exponent (least squares in log-log over k), measured at the deepest level the pairs resolve, because
the ratio grows deeper in the tail (photos of one person look alike, but their extremes much less so). The policy
then counts a gallery's stranger comparisons as sum over people of k ** exponent (`effective_comparisons`).

Measured for the shipped model (150 held-out CelebA identities, the 94 with >= 8 photos as targets; the card's
`calibration.photos_per_person`): k photos are far more than one chance and fewer than k (m_5 ~ 3-3.5), and the
estimate moves with the draws (the extremes cluster), so the policy uses the upper end of its bootstrap interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from facerec.openset.cohort import CohortStatistics, normalised

PHOTOS = (1, 2, 3, 5, 8)  # photos per person measured
LEVELS = (1e-3, 1e-4, 3e-5)  # per-photo false-accept rates at which the ratio is read (deepest last)
TARGET_MIN_PHOTOS = 8  # a target person needs max(PHOTOS) photos, so every k draws from the same people
DRAWS = 16  # random k-subsets per target person
BOOTSTRAP = 500
SEED = 0


def measure_photo_exponent(embeddings: np.ndarray, labels: np.ndarray, seed: int = SEED,
                           statistics: CohortStatistics | None = None) -> dict | None:
    """The card's `photos_per_person` section from unit `embeddings` [N, D] of held-out people (`labels` [N]):
    m_k at each level, and the exponent at the deepest level with its bootstrap over target people (None with
    fewer than 10 target people). The policy uses the upper bound (`exponent`): the extreme similarities come in
    clusters (a few look-alike pairs of people make most of them), so the point estimate moves a lot between
    draws, and counting too few chances would break the promise."""
    labels = np.asarray(labels)
    person = np.unique(labels, return_inverse=True)[1]
    members = [np.flatnonzero(person == p) for p in range(person.max() + 1)]
    targets = [p for p, rows in enumerate(members) if len(rows) >= TARGET_MIN_PHOTOS]
    if len(targets) < 10:
        return None
    similarities = np.asarray(embeddings, np.float32) @ np.asarray(embeddings, np.float32).T
    if statistics is not None:  # the scores the policy decides with (`facerec.openset.cohort`)
        similarities = normalised(similarities, statistics, statistics)
    rng = np.random.default_rng(seed)

    def best_of(k: int) -> list[np.ndarray]:
        """Per target person: strangers' best similarity to k random photos of them, over DRAWS draws."""
        found = []
        for target in targets:
            strangers = person != target
            found.append(np.concatenate([similarities[np.ix_(strangers, rng.choice(members[target], k,
                                                                                    replace=False))].max(axis=1)
                                         for _ in range(DRAWS)]))
        return found

    best = {k: best_of(k) for k in PHOTOS}
    table, counts = [], {}
    for level in LEVELS:
        threshold = float(np.quantile(np.concatenate(best[1]), 1 - level))
        counts = {k: np.array([np.count_nonzero(b >= threshold) for b in best[k]], np.float64) for k in PHOTOS}
        table.append({"per_photo_far": level, "threshold": round(threshold, 4),
                      "chances": {str(k): round(float(counts[k].sum() / max(counts[1].sum(), 1)), 3)
                                  for k in PHOTOS if k > 1}})
    # counts are now those of the deepest level; every target has the same number of draws per k
    estimates = []
    for _ in range(BOOTSTRAP):
        weights = np.bincount(rng.integers(0, len(targets), len(targets)), minlength=len(targets))
        single = weights @ counts[1]
        if single > 0:
            estimates.append(_exponent({k: (weights @ counts[k]) / single for k in PHOTOS if k > 1}))
    point = _exponent({k: counts[k].sum() / max(counts[1].sum(), 1) for k in PHOTOS if k > 1})
    low, high = (np.quantile(estimates, [0.05, 0.95]) if estimates else (point, 1.0))
    return {"exponent": round(float(high), 4), "exponent_point": round(point, 4),
            "exponent_interval_90": [round(float(low), 4), round(float(high), 4)], "levels": table,
            "target_people": len(targets), "draws_per_target": DRAWS, "bootstrap": BOOTSTRAP,
            "rule": "a person with k photos counts as k ** exponent stranger comparisons; exponent: the upper end "
                    "of the 90% bootstrap interval (over target people) of the log-log fit at the deepest level"}


def _exponent(chances: dict[int, float]) -> float:
    """Least-squares exponent through the origin of log(chances) on log(k), in [0, 1]."""
    ks = np.log(np.array(list(chances), np.float64))
    values = np.log(np.maximum(np.array(list(chances.values()), np.float64), 1.0))
    return float(np.clip((ks @ values) / (ks @ ks), 0.0, 1.0))


@dataclass(frozen=True)
class PhotoCounts:
    """How many photos the enrolled people have, as a histogram: `photos` (the distinct counts) and `people` (how
    many people have each). A gallery's census is a few rows however many people it holds, so the threshold of
    every identify sums a dozen terms, not one per person (a million powers cost 8 ms, most of a search)."""

    photos: np.ndarray
    people: np.ndarray

    @classmethod
    def of_people(cls, counts) -> PhotoCounts:
        """From each person's photo count."""
        photos, people = np.unique(np.asarray(counts, np.int64), return_counts=True)
        return cls(photos, people)


def effective_comparisons(photo_counts: PhotoCounts | None, faces: int, exponent: float | None) -> float:
    """The stranger comparisons a gallery stands for: sum over people of k ** exponent; its face count when the
    photos per person are not known or the card has no exponent (the face-count rule: never fewer chances)."""
    if photo_counts is None or exponent is None or exponent == 1.0 or not len(photo_counts.photos):
        return float(faces)  # k ** 1 is k: the sum is the face count
    return float(np.sum(photo_counts.people * np.asarray(photo_counts.photos, np.float64) ** exponent))
