"""Calibration: the per-comparison false-accept rate FAR(t) of a similarity threshold t, down to ~1e-9.

Measured on identities the model never saw (for the shipped model: the 150 held-out celeba112 identities, never
LFW). Every pair of photos of different identities is an impostor pair (2.9 million from 150 identities), every
pair of the same identity a genuine pair. Where impostor pairs are plentiful (FAR >= 1e-3) FAR(t) is their share
at or above t; beyond, the declustered generalized Pareto tail of `facerec.openset.stranger_tail` (the estimator
a gallery's own tail uses too) carries it down to the rates a large gallery needs (a 1% stranger-match rate among
5,000 enrolled faces needs FAR ~2e-6).

Impostor pairs are not independent (the 2.9 million pairs come from 11,175 pairs of people), so the tail's shape
is fitted to one peak per pair of people, and the uncertainty comes from a bootstrap over identities: people are
resampled with replacement and everything is estimated again, the cut-off held. The result is the model card's
`calibration` section, read at run time by `facerec.openset.threshold_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from facerec.openset.cohort import AS_NORM, COSINE, CohortStatistics, normalised
from facerec.openset.stranger_tail import (INTERVAL, RESAMPLES, SEED, FarCurve, StrangerPairs, cutoff_rank,
                                           empirical_threshold_at_far, fit_tail, percentile_interval,
                                           resampled_people)

CALIBRATION_VERSION = 4  # 3: the tail declustered (one peak per pair of people), the cut-off held in resamples;
#                         4: `score` names the scale the curve is on (`cohort.COSINE` or `cohort.AS_NORM`)
FAR_LEVELS = tuple(float(10 ** -e) for e in np.arange(0.5, 9.01, 0.25))  # 0.32 ... 1e-9, four per decade
MIN_EMPIRICAL_PAIRS = 10  # an empirical threshold is shown next to the fitted one where >= 10 pairs lie above it


def pair_similarities(embeddings: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(genuine, impostor) cosine similarities over all unordered pairs of unit embeddings [N, D]."""
    similarities = embeddings @ embeddings.T
    upper = np.triu(np.ones(similarities.shape, dtype=bool), k=1)
    same = labels[:, None] == labels[None, :]
    return similarities[upper & same], similarities[upper & ~same]


@dataclass
class LabelledPairs:
    """Every impostor pair's score, highest first, with the identity index of each side; and every genuine
    pair's score with its identity. Identity indices are 0..identities-1."""

    impostor: np.ndarray
    impostor_a: np.ndarray
    impostor_b: np.ndarray
    genuine: np.ndarray
    genuine_identity: np.ndarray
    photos_per_identity: np.ndarray

    @property
    def identities(self) -> int:
        return len(self.photos_per_identity)

    @classmethod
    def of(cls, embeddings: np.ndarray, labels, statistics: CohortStatistics | None = None) -> "LabelledPairs":
        _, index = np.unique(np.asarray(labels), return_inverse=True)
        similarities = embeddings.astype(np.float32) @ embeddings.astype(np.float32).T
        if statistics is not None:  # cohort-normalised scores (`facerec.openset.cohort`)
            similarities = normalised(similarities, statistics, statistics)
        rows, cols = np.triu_indices(len(index), k=1)
        scores = similarities[rows, cols].astype(np.float64)
        same = index[rows] == index[cols]
        order = np.argsort(-scores[~same], kind="stable")
        return cls(scores[~same][order], index[rows][~same][order].astype(np.int32),
                   index[cols][~same][order].astype(np.int32), scores[same], index[rows][same].astype(np.int32),
                   np.bincount(index) if len(index) else np.zeros(0, np.int64))

    def strangers(self) -> StrangerPairs:
        return StrangerPairs(self.impostor, self.impostor_a, self.impostor_b, self.photos_per_identity)


def far_curve(pairs: LabelledPairs, above: int, identity_weights: np.ndarray | None = None,
              ceiling: float = 1.0) -> FarCurve | None:
    """FAR(t) with each identity counted `identity_weights[i]` times (a bootstrap resample; None = once each),
    the tail's cut-off at the `above`-th highest impostor pair; None when too few pairs of people exceed it."""
    strangers = pairs.strangers()
    tail = fit_tail(strangers, above, identity_weights, ceiling)
    if tail is None:
        return None
    cumulative = np.cumsum(strangers.weights(identity_weights))
    return FarCurve(pairs.impostor, cumulative / cumulative[-1], tail)


def calibrate(embeddings: np.ndarray, labels, resamples: int = RESAMPLES, seed: int = SEED,
              fars=FAR_LEVELS, statistics: CohortStatistics | None = None) -> dict:
    """The model card's `calibration` section from unit embeddings [N, D] of labelled held-out photos: of their
    cohort-normalised scores with `statistics` (each photo's, `facerec.openset.cohort`), else of raw cosines.

    `curve` rows, one per FAR level: the threshold (`cosine`, or `score` on the normalised scale) with its
    bootstrap interval, the FAR interval at
    that threshold, the genuine-pair acceptance rate there (`tar`), whether the threshold comes from the data or
    the fitted tail, and the plain empirical threshold where at least 10 impostor pairs lie above it. `tail`:
    the point estimate's fitted tail, which the threshold policy reads beyond the data.
    """
    pairs = LabelledPairs.of(embeddings, labels, statistics)
    ceiling = 1.0 if statistics is None else np.inf
    if pairs.identities < 3 or len(pairs.impostor) < 200:
        raise ValueError("calibration needs at least 3 identities and 200 impostor pairs")
    fars = np.asarray(fars, np.float64)
    above = cutoff_rank(pairs.strangers())
    point = far_curve(pairs, above, ceiling=ceiling)
    if point is None:
        raise ValueError("calibration needs at least 10 pairs of identities above the tail's cut-off")
    thresholds = point.threshold_at_far(fars)
    replicate_thresholds, replicate_fars, shapes = [], [], []
    for weights in resampled_people(pairs.identities, resamples, np.random.default_rng(seed)):
        replicate = far_curve(pairs, above, weights, ceiling)
        if replicate is None:  # a degenerate resample (a few identities drawn many times): too few to fit
            continue
        replicate_thresholds.append(replicate.threshold_at_far(fars))
        replicate_fars.append(replicate.far(thresholds))
        shapes.append(replicate.tail.shape)
    fitted = len(shapes)
    cosine_bounds = percentile_interval(replicate_thresholds) if fitted else None
    far_bounds = percentile_interval(replicate_fars) if fitted else None
    tar = np.mean(pairs.genuine[None, :] >= thresholds[:, None], axis=1) if len(pairs.genuine) else None
    curve, key = [], "cosine" if statistics is None else "score"  # the rows name their thresholds' scale
    for i, far in enumerate(fars):
        row = {"far": float(f"{far:.4g}"), key: round(float(thresholds[i]), 5),
               "from": "tail" if far < point.tail.rate else "data"}
        if fitted:
            row[f"{key}_interval"] = [round(float(v), 5) for v in cosine_bounds[:, i]]
            row["far_interval"] = [float(f"{v:.3g}") for v in far_bounds[:, i]]
        if tar is not None:
            row["tar"] = round(float(tar[i]), 4)
        if far * len(pairs.impostor) >= MIN_EMPIRICAL_PAIRS:
            row[f"{key}_empirical"] = round(float(empirical_threshold_at_far(pairs.impostor, far)), 5)
        curve.append(row)
    return {
        "version": CALIBRATION_VERSION, "score": COSINE if statistics is None else AS_NORM,
        "identities": pairs.identities, "photos": int(len(embeddings)),
        "genuine_pairs": int(len(pairs.genuine)), "impostor_pairs": int(len(pairs.impostor)),
        "tail": {"model": "generalized Pareto (Zhang & Stephens 2009) fitted to the peak of each pair of "
                          "identities above `threshold` (declustered, facerec.openset.stranger_tail); "
                          "FAR(t) = rate * S(t - threshold) there, rate the share of every impostor pair",
                 **point.tail.to_dict(),
                 **({"shape_interval": [round(float(v), 4) for v in percentile_interval(shapes)]}
                    if fitted else {})},
        "bootstrap": {"unit": "identity", "resamples": resamples, "fitted": fitted, "seed": seed,
                      "interval": INTERVAL, "cutoff": "held at the point estimate's"},
        "curve": curve,
    }


def legacy_fields(calibration: dict) -> dict:
    """The card's older fields, kept for readers of the old format: `thresholds` (far_1e-2 ... far_1e-7: cosine
    and tar) and `far_curve` ([cosine, FAR] pairs)."""
    thresholds = {}
    for row in calibration["curve"]:
        exponent = -np.log10(row["far"])
        if abs(exponent - round(exponent)) < 1e-6 and 2 <= round(exponent) <= 7:
            thresholds[f"far_1e-{round(exponent)}"] = {"cosine": round(row["cosine"], 4), "tar": row.get("tar")}
    return {"thresholds": thresholds,
            "far_curve": [[round(row["cosine"], 4), row["far"]] for row in calibration["curve"]]}
