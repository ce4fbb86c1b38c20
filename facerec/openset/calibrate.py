"""Calibration: the per-comparison false-accept rate FAR(t) of a similarity threshold t, down to ~1e-9.

Measured on identities the model never saw (for the shipped model: the 150 held-out celeba112 identities, never
LFW). Every pair of photos of different identities is an impostor pair (2.9 million from 150 identities), every
pair of the same identity a genuine pair. Where impostor pairs are plentiful (FAR >= 1e-3) FAR(t) is their share
at or above t; beyond, a generalized Pareto tail (`facerec.openset.tail`) fitted to the top 0.1% carries it down to the
rates a large gallery needs (a 1% stranger-match rate among 5,000 enrolled faces needs FAR ~2e-6).

Impostor pairs are not independent (the 2.9 million pairs come from 11,175 pairs of people), so the uncertainty
comes from a bootstrap over identities: people are resampled with replacement and everything is estimated again.
The result is the model card's `calibration` section, read at run time by `facerec.openset.threshold_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from facerec.openset.tail import fit_generalized_pareto, pareto_quantile, pareto_survival

CALIBRATION_VERSION = 2
FAR_LEVELS = tuple(float(10 ** -e) for e in np.arange(0.5, 9.01, 0.25))  # 0.32 ... 1e-9, four per decade
TAIL_RATE = 1e-3          # the GPD is fitted to the impostor scores above the top 0.1% ...
MIN_EXCEEDANCES = 100     # ... or to the top 100 when there are fewer than 100,000 impostor pairs
RESAMPLES = 200
INTERVAL = 0.95
SEED = 0
MIN_EMPIRICAL_PAIRS = 10  # an empirical threshold is shown next to the fitted one where >= 10 pairs lie above it


def pair_similarities(embeddings: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(genuine, impostor) cosine similarities over all unordered pairs of unit embeddings [N, D]."""
    similarities = embeddings @ embeddings.T
    upper = np.triu(np.ones(similarities.shape, dtype=bool), k=1)
    same = labels[:, None] == labels[None, :]
    return similarities[upper & same], similarities[upper & ~same]


def threshold_at_far(impostor: np.ndarray, far: float) -> float:
    """Smallest threshold t with P(impostor similarity >= t) <= far (accept when similarity >= t)."""
    ordered = np.sort(impostor)[::-1]
    allowed = int(np.floor(far * len(ordered)))
    if allowed >= len(ordered):
        return float(ordered[-1])
    return float(np.nextafter(ordered[allowed], np.inf))


@dataclass
class LabelledPairs:
    """Every impostor pair's score, highest first, with the identity index of each side; and every genuine
    pair's score with its identity. Identity indices are 0..identities-1."""

    impostor: np.ndarray
    impostor_a: np.ndarray
    impostor_b: np.ndarray
    genuine: np.ndarray
    genuine_identity: np.ndarray
    identities: int

    @classmethod
    def of(cls, embeddings: np.ndarray, labels) -> "LabelledPairs":
        _, index = np.unique(np.asarray(labels), return_inverse=True)
        similarities = embeddings.astype(np.float32) @ embeddings.astype(np.float32).T
        rows, cols = np.triu_indices(len(index), k=1)
        scores = similarities[rows, cols].astype(np.float64)
        same = index[rows] == index[cols]
        order = np.argsort(-scores[~same], kind="stable")
        return cls(scores[~same][order], index[rows][~same][order].astype(np.int32),
                   index[cols][~same][order].astype(np.int32), scores[same], index[rows][same].astype(np.int32),
                   int(index.max()) + 1 if len(index) else 0)


@dataclass
class FarEstimate:
    """FAR(t) from one (possibly resampled) set of impostor pairs: the weighted empirical share above t, and the
    fitted tail above `tail_threshold`."""

    scores: np.ndarray          # impostor scores, highest first
    share_above: np.ndarray     # share_above[i] = weighted share of impostor pairs scoring >= scores[i]
    tail_threshold: float
    tail_rate: float            # share of impostor pairs above tail_threshold
    exceedances: int
    shape: float
    scale: float

    def far(self, thresholds) -> np.ndarray:
        """Per-comparison false-accept rate at each threshold (accept when similarity >= t)."""
        t = np.asarray(thresholds, np.float64)
        above = np.searchsorted(-self.scores, -t, side="right")  # how many scores are >= t
        empirical = np.where(above > 0, self.share_above[np.maximum(above, 1) - 1], 0.0)
        fitted = self.tail_rate * pareto_survival(t - self.tail_threshold, self.shape, self.scale)
        return np.where(t > self.tail_threshold, fitted, empirical)

    def threshold(self, fars) -> np.ndarray:
        """The threshold whose FAR is each given rate: the empirical quantile above the tail, the fitted one in it."""
        f = np.asarray(fars, np.float64)
        allowed = np.searchsorted(self.share_above, f, side="right")  # top scores whose share stays <= f
        empirical = np.nextafter(self.scores[np.minimum(allowed, len(self.scores) - 1)], np.inf)
        fitted = self.tail_threshold + pareto_quantile(np.minimum(f / self.tail_rate, 1.0), self.shape, self.scale)
        return np.minimum(np.where(f < self.tail_rate, fitted, empirical), 1.0)  # a cosine never exceeds 1


def estimate_far(pairs: LabelledPairs, identity_weights: np.ndarray | None = None,
                 tail_rate: float = TAIL_RATE) -> FarEstimate:
    """FAR(t) with each identity counted `identity_weights[i]` times (a bootstrap resample; None = once each)."""
    if identity_weights is None:
        weights = np.ones(len(pairs.impostor))
    else:
        weights = identity_weights[pairs.impostor_a] * identity_weights[pairs.impostor_b]
    cumulative = np.cumsum(weights)
    if cumulative[-1] <= 0:
        raise ValueError("no impostor pairs (a resample of a single identity)")
    share_above = cumulative / cumulative[-1]
    rate = max(tail_rate, MIN_EXCEEDANCES / len(pairs.impostor))
    exceeding = int(np.searchsorted(share_above, rate, side="right"))
    tail_threshold = float(pairs.impostor[exceeding])
    excess = pairs.impostor[:exceeding] - tail_threshold
    keep = excess > 0
    shape, scale = fit_generalized_pareto(excess[keep], weights[:exceeding][keep])
    return FarEstimate(pairs.impostor, share_above, tail_threshold, float(share_above[exceeding - 1]),
                       int(keep.sum()), shape, scale)


def calibrate(embeddings: np.ndarray, labels, resamples: int = RESAMPLES, seed: int = SEED,
              fars=FAR_LEVELS) -> dict:
    """The model card's `calibration` section from unit embeddings [N, D] of labelled held-out photos.

    `curve` rows, one per FAR level: the threshold (`cosine`) with its bootstrap interval, the FAR interval at
    that threshold, the genuine-pair acceptance rate there (`tar`), whether the threshold comes from the data or
    the fitted tail, and the plain empirical threshold where at least 10 impostor pairs lie above it.
    """
    pairs = LabelledPairs.of(embeddings, labels)
    if pairs.identities < 3 or len(pairs.impostor) < 2 * MIN_EXCEEDANCES:
        raise ValueError("calibration needs at least 3 identities and 200 impostor pairs")
    fars = np.asarray(fars, np.float64)
    point = estimate_far(pairs)
    thresholds = point.threshold(fars)
    rng = np.random.default_rng(seed)
    replicate_thresholds, replicate_fars, shapes = [], [], []
    for _ in range(resamples):
        weights = np.bincount(rng.integers(0, pairs.identities, pairs.identities),
                              minlength=pairs.identities).astype(np.float64)
        try:
            replicate = estimate_far(pairs, weights)
        except ValueError:  # a degenerate resample (a few identities drawn many times): too few pairs to fit
            continue
        replicate_thresholds.append(replicate.threshold(fars))
        replicate_fars.append(replicate.far(thresholds))
        shapes.append(replicate.shape)
    low, high = 100 * (1 - INTERVAL) / 2, 100 * (1 + INTERVAL) / 2
    fitted = len(shapes)
    cosine_bounds = np.percentile(replicate_thresholds, [low, high], axis=0) if fitted else None
    far_bounds = np.percentile(replicate_fars, [low, high], axis=0) if fitted else None
    tar = np.mean(pairs.genuine[None, :] >= thresholds[:, None], axis=1) if len(pairs.genuine) else None
    curve = []
    for i, far in enumerate(fars):
        row = {"far": float(f"{far:.4g}"), "cosine": round(float(thresholds[i]), 5),
               "from": "tail" if far < point.tail_rate else "data"}
        if fitted:
            row["cosine_interval"] = [round(float(v), 5) for v in cosine_bounds[:, i]]
            row["far_interval"] = [float(f"{v:.3g}") for v in far_bounds[:, i]]
        if tar is not None:
            row["tar"] = round(float(tar[i]), 4)
        if far * len(pairs.impostor) >= MIN_EMPIRICAL_PAIRS:
            row["cosine_empirical"] = round(threshold_at_far(pairs.impostor, far), 5)
        curve.append(row)
    return {
        "version": CALIBRATION_VERSION,
        "identities": pairs.identities, "photos": int(len(embeddings)),
        "genuine_pairs": int(len(pairs.genuine)), "impostor_pairs": int(len(pairs.impostor)),
        "tail": {"model": "generalized Pareto (Zhang & Stephens 2009) fitted to the impostor scores above "
                          "`threshold`; FAR(t) = rate * S(t - threshold) there",
                 "threshold": round(point.tail_threshold, 5), "rate": float(f"{point.tail_rate:.4g}"),
                 "exceedances": point.exceedances, "shape": round(point.shape, 4), "scale": round(point.scale, 5),
                 **({"shape_interval": [round(float(v), 4) for v in np.percentile(shapes, [low, high])]}
                    if fitted else {})},
        "bootstrap": {"unit": "identity", "resamples": resamples, "fitted": fitted, "seed": seed,
                      "interval": INTERVAL},
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
