"""The gallery's own stranger tail: how alike its different people are, read from its enrolled faces.

Why: the model card's FAR(t) is measured on 150 held-out CelebA identities. A user's people can be more alike than
those (one family, one team, one kind of photo), and then every stranger scores higher against them than the card
expects, by more as the gallery grows and the threshold moves deeper into the tail: with model v6's card, on LFW,
an accepted 1% stranger-match rate gave 1.2% at 100 people and 1.7% at 4,848. Yet every pair of faces of two
different enrolled people IS a stranger comparison from the user's own population, so a gallery of a few hundred
people measures its own tail: the generalized Pareto tail (`facerec.openset.tail`, as in `facerec.openset.calibrate`) fitted to
its highest between-people similarities. `facerec.openset.threshold_policy` then uses the higher of the card's and the
gallery's thresholds for the accepted rate: never less safe than the card, and right for the people enrolled.

The gallery cannot know it holds two people who are one (a duplicate under two names); such a pair scores like a
very close stranger and raises the tail: the safe side. Cost: one pass over at most SAMPLE_FACES faces (a seeded
sample beyond that: the per-comparison rate of a sample estimates the whole gallery's), ~1 s for 4,000 faces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from facerec.openset.calibrate import MIN_EXCEEDANCES, TAIL_RATE
from facerec.openset.tail import fit_generalized_pareto, pareto_quantile, pareto_survival

MIN_PEOPLE = 300  # below, the tail's noise (+-0.02 in the threshold) would raise it for nothing
SAMPLE_FACES = 4000
SAMPLE_SEED = 0
RESAMPLES = 200
_ROWS_PER_PASS = 512


@dataclass(frozen=True)
class PopulationTail:
    """FAR(t) above `threshold` among the gallery's own between-people pairs: rate x S(t - threshold), S the
    fitted generalized Pareto survival; and the same fitted again on each of RESAMPLES resamples of its people.

    What the policy reads is the median of the resampled estimates (`far`, `threshold_at_far`), robust to the
    one person whose look-alikes dominate the extreme pairs. How noisy it is (one-photo galleries of training
    identities): the threshold for 1% moves by +-0.022 at 300 people, +-0.012 at 1,000; hence MIN_PEOPLE, since
    the policy takes the higher of the card's threshold and this one and so turns noise into a higher threshold
    (the safe side, at some cost in identifications). A one-sided lower bound instead would not raise it at all
    where it matters: its 95% interval is ~0.02 wide even at 2,700 people, where a handful of people make most
    of the extreme pairs."""

    threshold: float  # the score above which the tail is fitted
    rate: float  # share of the between-people pairs above it
    shape: float
    scale: float
    pairs: int  # between-people pairs measured
    people: int  # people among the faces measured
    faces: int  # faces measured (a sample beyond SAMPLE_FACES)
    resampled: tuple[tuple[float, float, float], ...] = ()  # (rate, shape, scale) per resample of the people

    def far(self, score: float) -> float | None:
        """The per-comparison false-accept rate at `score` in the gallery's own pairs; below the tail, the share
        above the tail's threshold (a lower bound: the gallery keeps no finer record there)."""
        if score < self.threshold:
            return self.rate
        rates = [rate * pareto_survival(score - self.threshold, shape, scale)
                 for rate, shape, scale in self._fits()]
        return float(np.median(rates))

    def threshold_at_far(self, far: float) -> float | None:
        """The score at which the gallery's own rate is `far` (None when `far` is not in the tail)."""
        scores = [self.threshold + pareto_quantile(far / rate, shape, scale)
                  for rate, shape, scale in self._fits() if 0 < far < rate]
        if len(scores) < len(self._fits()):
            return None
        return min(1.0, float(np.median(scores)))

    def _fits(self) -> tuple[tuple[float, float, float], ...]:
        return self.resampled or ((self.rate, self.shape, self.scale),)

    def to_dict(self) -> dict:
        return {"threshold": round(self.threshold, 5), "rate": float(f"{self.rate:.4g}"),
                "shape": round(self.shape, 4), "scale": round(self.scale, 5), "pairs": self.pairs,
                "people": self.people, "faces": self.faces, "resamples": len(self.resampled)}


def measure_population_tail(embeddings: np.ndarray, identity_ids: np.ndarray,
                            seed: int = SAMPLE_SEED) -> PopulationTail | None:
    """The tail of the similarities between faces of different people among unit `embeddings` [N, D] (person
    `identity_ids` [N]); None with fewer than MIN_PEOPLE people."""
    embeddings = np.asarray(embeddings, np.float32)
    identity_ids = np.asarray(identity_ids)
    if len(np.unique(identity_ids)) < MIN_PEOPLE:
        return None
    rng = np.random.default_rng(seed)
    if len(embeddings) > SAMPLE_FACES:
        rows = np.sort(rng.choice(len(embeddings), SAMPLE_FACES, replace=False))
        embeddings, identity_ids = embeddings[rows], identity_ids[rows]
        if len(np.unique(identity_ids)) < MIN_PEOPLE:
            return None
    person = np.unique(identity_ids, return_inverse=True)[1]
    faces_per_person = np.bincount(person)
    pairs = _between_people_pairs(faces_per_person, np.ones(len(faces_per_person)))
    keep = int(min(pairs - 1, max(MIN_EXCEEDANCES, math.ceil(TAIL_RATE * pairs))))
    top, first, second = _highest_between_people(embeddings, person, keep + 1)
    threshold = float(top[keep])  # the (keep + 1)-th highest: the tail is the `keep` scores above it
    excesses, first, second = top[:keep] - threshold, first[:keep], second[:keep]
    positive = excesses > 0
    shape, scale = fit_generalized_pareto(excesses[positive])
    resampled = []
    for _ in range(RESAMPLES):  # people drawn with replacement: a pair counts w_a x w_b times
        weights = np.bincount(rng.integers(0, len(faces_per_person), len(faces_per_person)),
                              minlength=len(faces_per_person)).astype(np.float64)
        pair_weights = weights[person[first]] * weights[person[second]]
        resampled_pairs = _between_people_pairs(faces_per_person, weights)
        if pair_weights[positive].sum() <= 0 or np.count_nonzero(pair_weights[positive]) < 10:
            continue
        fitted = fit_generalized_pareto(excesses[positive], pair_weights[positive])
        resampled.append((float(pair_weights.sum() / resampled_pairs), *fitted))
    return PopulationTail(threshold, keep / pairs, shape, scale, int(pairs), len(faces_per_person),
                          len(embeddings), tuple(resampled))


def _between_people_pairs(faces_per_person: np.ndarray, weights: np.ndarray) -> float:
    """Unordered pairs of faces of different people, each person counted `weights` times."""
    counted = np.asarray(faces_per_person, np.float64) * weights
    return float((counted.sum() ** 2 - (counted ** 2).sum()) / 2)


def _highest_between_people(embeddings: np.ndarray, person: np.ndarray,
                            count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The `count` highest similarities over unordered pairs of faces of different people, highest first, with
    the two faces (rows) of each."""
    best = np.zeros(0, np.float32)
    best_first = best_second = np.zeros(0, np.int64)
    columns = np.arange(len(embeddings))
    for start in range(0, len(embeddings), _ROWS_PER_PASS):
        block = embeddings[start:start + _ROWS_PER_PASS] @ embeddings.T
        rows = np.arange(start, start + len(block))
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
