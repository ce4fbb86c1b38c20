"""How often two different people score at or above t, far beyond what the measured pairs reach: the one
estimator of the stranger tail, used for the model card (`facerec.openset.calibrate`, held-out identities with
several photos each) and for a gallery's own people (`facerec.openset.population_tail`, its enrolled faces).

One cut-off rule: the tail starts below the top TAIL_RATE of the pairs of faces of different people, lowered where
needed until at least MIN_EXCEEDANCES pairs of people lie above it. One fit, declustered: pairs of faces are not
independent draws. Two people who look alike score high on most pairs of their photos, so one pair of people can
supply hundreds of exceedances, and a fit to every exceedance would count that one resemblance hundreds of times
(bending the shape towards it and narrowing its interval as if it were hundreds of independent strangers). The
generalized Pareto shape and scale are therefore fitted to cluster peaks: the highest exceedance of each pair of
people (runs declustering, Coles 2001 section 5.3, the cluster being a pair of people). The rate above the cut-off
stays the share of every pair of faces, because FAR(t) is per comparison of two faces, what the threshold policy
multiplies by the comparisons a stranger meets. With one photo per person each cluster is one pair and declustering
changes nothing. Fitting peaks rather than every exceedance is the cautious side: a peak is the largest of its
cluster's excesses.

One convention for the estimate and its uncertainty: the point estimate is the fit with every person counted
once; the interval is the percentile interval over RESAMPLES resamples of the people drawn with replacement (a
pair of faces counts w_a x w_b times), the cut-off held where the point estimate put it. One `threshold_at_far`:
`FarCurve` below, the empirical share where pairs are plentiful and the fitted tail beyond.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from facerec.openset.pareto import fit_generalized_pareto, pareto_quantile, pareto_survival

TAIL_RATE = 1e-3  # the tail is fitted to the pairs above the top 0.1% ...
MIN_EXCEEDANCES = 100  # ... and above it at least 100 pairs of people (their peaks are what is fitted)
MIN_CLUSTERS = 10  # the fit needs at least this many pairs of people above the cut-off
RESAMPLES = 200
INTERVAL = 0.95
SEED = 0


@dataclass(frozen=True)
class TailFit:
    """FAR(t) = rate x S(t - threshold) for t at or above `threshold`, S the generalized Pareto survival."""

    threshold: float  # the cut-off: the score above which the tail is fitted
    rate: float  # share of all pairs of faces of different people above it
    shape: float
    scale: float
    clusters: int  # pairs of people above the cut-off: the peaks the shape and scale were fitted to
    exceedances: int  # pairs of faces above the cut-off
    ceiling: float = 1.0  # no score passes it: 1 for cosines, none (inf) for cohort-normalised scores

    def far(self, scores) -> np.ndarray:
        """The per-comparison false-accept rate at each score (meant for scores at or above the cut-off)."""
        return self.rate * pareto_survival(np.asarray(scores, np.float64) - self.threshold, self.shape, self.scale)

    def threshold_at_far(self, fars) -> np.ndarray:
        """The score whose per-comparison false-accept rate is each given rate (meant for rates below `rate`);
        never above the ceiling (1 for cosines), which no score passes."""
        survival = np.minimum(np.asarray(fars, np.float64) / self.rate, 1.0)
        return np.minimum(self.threshold + pareto_quantile(survival, self.shape, self.scale), self.ceiling)

    def to_dict(self) -> dict:
        return {"threshold": round(self.threshold, 5), "rate": float(f"{self.rate:.4g}"),
                "shape": round(self.shape, 4), "scale": round(self.scale, 5), "clusters": self.clusters,
                "exceedances": self.exceedances, **({} if self.ceiling == 1.0 else
                                                    {"ceiling": None if np.isinf(self.ceiling) else self.ceiling})}

    @classmethod
    def from_dict(cls, data: dict) -> "TailFit":
        ceiling = data.get("ceiling", 1.0)
        return cls(float(data["threshold"]), float(data["rate"]), float(data["shape"]), float(data["scale"]),
                   int(data.get("clusters", data.get("exceedances", 0))), int(data.get("exceedances", 0)),
                   np.inf if ceiling is None else float(ceiling))


@dataclass(frozen=True)
class StrangerPairs:
    """The highest similarities between faces of different people, highest first, with each side's person
    (0..people-1), and how many faces each person has (so that every pair is counted, kept or not)."""

    scores: np.ndarray
    person_a: np.ndarray
    person_b: np.ndarray
    faces_per_person: np.ndarray

    def total(self, person_weights: np.ndarray | None = None) -> float:
        """Pairs of faces of different people, each person counted `person_weights` times (None: once)."""
        return pairs_between(self.faces_per_person, person_weights)

    def weights(self, person_weights: np.ndarray | None = None) -> np.ndarray:
        """How many times each kept pair counts: w_a x w_b (ones when every person counts once)."""
        if person_weights is None:
            return np.ones(len(self.scores))
        return person_weights[self.person_a] * person_weights[self.person_b]

    @property
    def people(self) -> int:
        return len(self.faces_per_person)


def pairs_between(faces_per_person: np.ndarray, person_weights: np.ndarray | None = None) -> float:
    """Unordered pairs of faces of different people, each person counted `person_weights` times (None: once)."""
    counted = np.asarray(faces_per_person, np.float64)
    if person_weights is not None:
        counted = counted * person_weights
    return float((counted.sum() ** 2 - (counted ** 2).sum()) / 2)


def top_share(total_pairs: float) -> int:
    """The pairs in the top TAIL_RATE of `total_pairs`, at least MIN_EXCEEDANCES: where the cut-off starts."""
    return max(MIN_EXCEEDANCES, math.ceil(TAIL_RATE * total_pairs))


def cutoff_rank(pairs: StrangerPairs) -> int:
    """How many of the highest pairs lie above the cut-off: the top TAIL_RATE of all pairs, or more until they
    span MIN_EXCEEDANCES pairs of people (as far as `pairs` reaches)."""
    share = min(len(pairs.scores) - 1, top_share(pairs.total()))
    _, first_seen = np.unique(_cluster_keys(pairs, len(pairs.scores)), return_index=True)
    if len(first_seen) < MIN_EXCEEDANCES:
        return len(pairs.scores) - 1
    return int(max(share, np.sort(first_seen)[MIN_EXCEEDANCES - 1] + 1))


def _cluster_keys(pairs: StrangerPairs, count: int) -> np.ndarray:
    """One number per pair of people, for the first `count` pairs of faces."""
    first = np.minimum(pairs.person_a[:count], pairs.person_b[:count]).astype(np.int64)
    second = np.maximum(pairs.person_a[:count], pairs.person_b[:count]).astype(np.int64)
    return first * pairs.people + second


def fit_tail(pairs: StrangerPairs, above: int, person_weights: np.ndarray | None = None,
             ceiling: float = 1.0) -> TailFit | None:
    """The declustered tail over the cut-off at pairs.scores[above] (the `above` pairs higher than it), with
    each person counted `person_weights` times; None when fewer than MIN_CLUSTERS pairs of people exceed it.
    `ceiling`: the score nothing passes (1 for cosines; inf for cohort-normalised scores)."""
    threshold = float(pairs.scores[above])
    excess = pairs.scores[:above] - threshold
    weights = pairs.weights(person_weights)[:above]
    total = pairs.total(person_weights)
    exceeding = (excess > 0) & (weights > 0)
    if total <= 0 or not exceeding.any():
        return None
    # Highest first, so each pair of people's first occurrence is its peak.
    _, peak = np.unique(_cluster_keys(pairs, above)[exceeding], return_index=True)
    if len(peak) < MIN_CLUSTERS:
        return None
    shape, scale = fit_generalized_pareto(excess[exceeding][peak], weights[exceeding][peak])
    return TailFit(threshold, float(weights[exceeding].sum() / total), shape, scale, len(peak),
                   int(exceeding.sum()), ceiling)


@dataclass(frozen=True)
class StrangerTail:
    """The point estimate of the tail and its fits on resamples of the people (for the interval)."""

    point: TailFit
    resampled: tuple[TailFit, ...]

    def far_interval(self, score: float) -> tuple[float, float] | None:
        return _pair([fit.far(score) for fit in self.resampled])


def measure_stranger_tail(pairs: StrangerPairs, resamples: int = RESAMPLES, seed: int = SEED,
                          rng: np.random.Generator | None = None, ceiling: float = 1.0) -> StrangerTail | None:
    """The point fit and `resamples` bootstrap fits over the people; None when the point fit is impossible."""
    above = cutoff_rank(pairs)
    point = fit_tail(pairs, above, ceiling=ceiling)
    if point is None:
        return None
    resampled = []
    for person_weights in resampled_people(pairs.people, resamples, np.random.default_rng(seed) if rng is None
                                           else rng):
        fit = fit_tail(pairs, above, person_weights, ceiling)
        if fit is not None:  # a degenerate resample (a few people drawn many times): too few clusters to fit
            resampled.append(fit)
    return StrangerTail(point, tuple(resampled))


def resampled_people(people: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """The bootstrap over people: for each of `resamples` draws of `people` people with replacement, how many
    times each person was drawn (float weights, 0 for those left out)."""
    for _ in range(resamples):
        yield np.bincount(rng.integers(0, people, people), minlength=people).astype(np.float64)


def percentile_interval(values) -> np.ndarray:
    """The INTERVAL percentile interval of bootstrap `values` along their first axis: [low, high] (each of the
    values' remaining shape)."""
    return np.percentile(np.asarray(values, np.float64), [100 * (1 - INTERVAL) / 2, 100 * (1 + INTERVAL) / 2],
                         axis=0)


def empirical_threshold_at_far(scores: np.ndarray, far, share_above: np.ndarray | None = None) -> np.ndarray:
    """The smallest threshold t with share(score >= t) <= far, from scores sorted highest first; `share_above[i]`
    is the (weighted) share of scores at or above scores[i] (None: each score counts once)."""
    if share_above is None:
        share_above = np.arange(1, len(scores) + 1) / len(scores)
    allowed = np.searchsorted(share_above, np.asarray(far, np.float64), side="right")
    return np.nextafter(scores[np.minimum(allowed, len(scores) - 1)], np.inf)


def empirical_threshold(scores: np.ndarray, far: float) -> float:
    """`empirical_threshold_at_far` of scores in any order, each counted once (the oracle threshold of an
    evaluation, read off the very scores it is then applied to)."""
    return float(empirical_threshold_at_far(np.sort(np.asarray(scores, np.float64))[::-1], far))


@dataclass(frozen=True)
class FarCurve:
    """FAR(t) over the whole range: the (weighted) share of the pairs at or above t where pairs are plentiful,
    the fitted tail above its cut-off."""

    scores: np.ndarray  # every pair's score, highest first
    share_above: np.ndarray  # share_above[i] = weighted share of pairs scoring >= scores[i]
    tail: TailFit

    def far(self, thresholds) -> np.ndarray:
        t = np.asarray(thresholds, np.float64)
        at_or_above = np.searchsorted(-self.scores, -t, side="right")
        empirical = np.where(at_or_above > 0, self.share_above[np.maximum(at_or_above, 1) - 1], 0.0)
        return np.where(t > self.tail.threshold, self.tail.far(t), empirical)

    def threshold_at_far(self, fars) -> np.ndarray:
        f = np.asarray(fars, np.float64)
        empirical = empirical_threshold_at_far(self.scores, f, self.share_above)
        return np.where(f < self.tail.rate, self.tail.threshold_at_far(f), np.minimum(empirical, self.tail.ceiling))


def _pair(values: list) -> tuple[float, float] | None:
    if not values:
        return None
    low, high = percentile_interval(values)
    return float(low), float(high)
