"""The gallery's own stranger tail: how alike its different people are, read from its enrolled faces.

Why: the model card's FAR(t) is measured on 150 held-out CelebA identities. A user's people can be more alike than
those (one family, one team, one kind of photo), and then every stranger scores higher against them than the card
expects, by more as the gallery grows and the threshold moves deeper into the tail: with model v6's card, on LFW,
an accepted 1% stranger-match rate gave 1.2% at 100 people and 1.7% at 4,848. Yet every pair of faces of two
different enrolled people IS a stranger comparison from the user's own population, so a gallery of a few hundred
people measures its own tail with the estimator the model card's calibration uses (`facerec.openset.stranger_tail`:
the declustered generalized Pareto tail of its highest between-people similarities, the same point estimate and
interval). `facerec.openset.threshold_policy` then uses the higher of the card's and the gallery's thresholds for
the accepted rate: never less safe than the card, and right for the people enrolled.

The gallery cannot know it holds two people who are one (a duplicate under two names); such a pair scores like a
very close stranger and raises the tail: the safe side. Cost: one pass over at most SAMPLE_FACES faces (a seeded
sample beyond that: the per-comparison rate of a sample estimates the whole gallery's), ~1 s for 4,000 faces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from facerec.openset.cohort import CohortStatistics, RawCosine, normalised
from facerec.openset.stranger_tail import (StrangerPairs, StrangerTail, TailFit, measure_stranger_tail,
                                           pairs_between, top_share)

MIN_PEOPLE = 300  # below, the tail's noise (+-0.02 in the threshold) would raise it for nothing
SAMPLE_FACES = 4000
SAMPLE_SEED = 0
_ROWS_PER_PASS = 512
CLUSTER_ROOM = 4  # pairs kept beyond the top share, for the cut-off to reach MIN_EXCEEDANCES pairs of people


@dataclass(frozen=True)
class PopulationTail:
    """The gallery's own stranger tail: FAR(t) = rate x S(t - threshold) above its cut-off (the point estimate
    of `facerec.openset.stranger_tail`, as on the model card), with the fits on resamples of its people.

    How noisy it is (one-photo galleries of training identities): the threshold for 1% moves by about +-0.02 at
    300 people and +-0.01 at 1,000; hence MIN_PEOPLE, since the policy takes the higher of the card's threshold
    and this one and so turns noise into a higher threshold (the safe side, at some cost in identifications)."""

    tail: StrangerTail
    pairs: int  # between-people pairs measured
    people: int  # people among the faces measured
    faces: int  # faces measured (a sample beyond SAMPLE_FACES)

    @property
    def fit(self) -> TailFit:
        return self.tail.point

    @property
    def threshold(self) -> float:
        return self.fit.threshold

    @property
    def rate(self) -> float:
        return self.fit.rate

    @property
    def resampled(self) -> tuple[TailFit, ...]:
        return self.tail.resampled

    def far(self, score: float) -> float:
        """The per-comparison false-accept rate at `score` in the gallery's own pairs; below the tail, the share
        above the tail's cut-off (a lower bound: the gallery keeps no finer record there)."""
        if score < self.fit.threshold:
            return self.fit.rate
        return float(self.fit.far(score))

    def threshold_at_far(self, far: float) -> float | None:
        """The score at which the gallery's own rate is `far` (None when `far` is not in the tail)."""
        if not 0 < far < self.fit.rate:
            return None
        return float(self.fit.threshold_at_far(far))

    def to_dict(self) -> dict:
        return {**self.fit.to_dict(), "pairs": self.pairs, "people": self.people, "faces": self.faces,
                "resamples": len(self.resampled)}


def measure_population_tail(embeddings: np.ndarray, identity_ids: np.ndarray, seed: int = SAMPLE_SEED,
                            statistics: CohortStatistics | None = None,
                            ceiling: float = 1.0) -> PopulationTail | None:
    """The tail of the scores between faces of different people among unit `embeddings` [N, D] (person
    `identity_ids` [N]); None with fewer than MIN_PEOPLE people. With `statistics` (each face's cohort
    statistics) the scores are cohort-normalised, as the policy's are (`ceiling`: inf for those), else cosines."""
    embeddings = np.asarray(embeddings, np.float32)
    identity_ids = np.asarray(identity_ids)
    if statistics is None:
        statistics = RawCosine().statistics(embeddings)
    if len(np.unique(identity_ids)) < MIN_PEOPLE:
        return None
    rng = np.random.default_rng(seed)
    if len(embeddings) > SAMPLE_FACES:
        rows = np.sort(rng.choice(len(embeddings), SAMPLE_FACES, replace=False))
        embeddings, identity_ids, statistics = embeddings[rows], identity_ids[rows], statistics[rows]
        if len(np.unique(identity_ids)) < MIN_PEOPLE:
            return None
    person = np.unique(identity_ids, return_inverse=True)[1]
    faces_per_person = np.bincount(person)
    total = pairs_between(faces_per_person)
    # The top share the cut-off starts from, and room beyond it where several photos per person cluster the
    # highest pairs (the cut-off goes lower until enough pairs of people lie above it).
    top, first, second = _highest_between_people(embeddings, person, int(min(total, CLUSTER_ROOM * top_share(total))),
                                                 statistics)
    tail = measure_stranger_tail(StrangerPairs(top.astype(np.float64), person[first], person[second],
                                               faces_per_person), rng=rng, ceiling=ceiling)
    if tail is None:
        return None
    return PopulationTail(tail, int(total), len(faces_per_person), len(embeddings))


def _highest_between_people(embeddings: np.ndarray, person: np.ndarray, count: int,
                            statistics: CohortStatistics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The `count` highest similarities over unordered pairs of faces of different people, highest first, with
    the two faces (rows) of each."""
    best = np.zeros(0, np.float32)
    best_first = best_second = np.zeros(0, np.int64)
    columns = np.arange(len(embeddings))
    for start in range(0, len(embeddings), _ROWS_PER_PASS):
        block = embeddings[start:start + _ROWS_PER_PASS] @ embeddings.T
        rows = np.arange(start, start + len(block))
        block = normalised(block, statistics[rows], statistics)
        valid = (columns[None, :] > rows[:, None]) & (person[rows, None] != person[None, :])
        row_index, column_index = np.nonzero(valid)
        scores = np.concatenate([best, block[row_index, column_index]])
        firsts = np.concatenate([best_first, rows[row_index]])
        seconds = np.concatenate([best_second, column_index])
        if len(scores) > count:
            kept = np.argpartition(scores, len(scores) - count)[-count:]
            scores, firsts, seconds = scores[kept], firsts[kept], seconds[kept]
        best, best_first, best_second = scores, firsts, seconds
    order = np.argsort(-best, kind="stable")
    return best[order], best_first[order], best_second[order]
