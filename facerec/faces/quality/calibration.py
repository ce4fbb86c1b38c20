"""Fitting the enrollment quality score (`facerec.faces.quality.score`) to measured recognition outcomes.

Used by `scripts/calibrate_quality.py` (held-out CelebA identities) and `benchmarks/enrollment_quality.py` (its
validity on LFW); NumPy only, so the fit needs no extra dependency.
"""

from __future__ import annotations

import numpy as np

from facerec.faces.quality.score import LOW_SHARE, QualityModel

RIDGE = 1e-3  # keeps the Newton steps finite when a feature separates the outcomes perfectly


def one_shot_outcomes(enrolled: np.ndarray, enrolled_labels: np.ndarray, others: np.ndarray,
                      others_labels: np.ndarray, queries: np.ndarray, query_labels: np.ndarray,
                      threshold: float, enrolled_from: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For each enrollment i (unit embedding [E, D], its person's label): how many of its person's query photos a
    one-shot gallery names correctly, and of how many, when it stands alone for its person beside `others` (one
    enrolled face per other person). Named correctly: its similarity to the enrollment beats every other person's
    enrolled face and reaches `threshold`. `enrolled_from` [E]: the query row of the photo each enrollment was
    made from (-1: none), which is not asked about. Returns (successes [E], trials [E])."""
    to_others = queries @ others.T  # [Q, O]
    enrolled_from = np.full(len(enrolled), -1) if enrolled_from is None else np.asarray(enrolled_from)
    successes, trials = np.zeros(len(enrolled)), np.zeros(len(enrolled))
    for label in np.unique(enrolled_labels):
        rows, mine = np.flatnonzero(enrolled_labels == label), np.flatnonzero(query_labels == label)
        best_other = np.max(np.where(others_labels[None, :] != label, to_others[mine], -np.inf), axis=1)
        to_enrollment = queries[mine] @ enrolled[rows].T  # [q, e]
        asked = mine[:, None] != enrolled_from[rows][None, :]
        named = (to_enrollment > best_other[:, None]) & (to_enrollment >= threshold) & asked
        successes[rows], trials[rows] = named.sum(axis=0), asked.sum(axis=0)
    return successes, trials


def fit(rows: np.ndarray, successes: np.ndarray, trials: np.ndarray, iterations: int = 50
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Binomial logistic regression by Newton's method on standardised design rows [N, F].
    Returns (means, scales, coefficients, intercept)."""
    keep = trials > 0
    rows, successes, trials = rows[keep], successes[keep], trials[keep]
    means, scales = rows.mean(axis=0), rows.std(axis=0)
    scales[scales == 0] = 1.0
    design = np.hstack([(rows - means) / scales, np.ones((len(rows), 1))])
    weights = np.zeros(design.shape[1])
    for _ in range(iterations):
        probability = 1.0 / (1.0 + np.exp(-design @ weights))
        gradient = design.T @ (successes - trials * probability) - RIDGE * weights
        hessian = (design * (trials * probability * (1 - probability))[:, None]).T @ design
        step = np.linalg.solve(hessian + RIDGE * np.eye(len(weights)), gradient)
        weights += step
        if np.max(np.abs(step)) < 1e-8:
            break
    return means, scales, weights[:-1], float(weights[-1])


def fitted_model(rows: np.ndarray, successes: np.ndarray, trials: np.ndarray, ordinary: np.ndarray,
                 model_sha256: str, source: dict) -> QualityModel:
    """The fit over all design rows; `ordinary`: the rows of the photos as they are, whose median is the typical
    photo and whose `LOW_SHARE` quantile of scores is `low_score`."""
    means, scales, coefficients, intercept = fit(rows, successes, trials)
    typical = np.median(ordinary, axis=0)
    model = QualityModel(means, scales, coefficients, intercept, 0.0, typical, model_sha256, source)
    low_score = float(np.quantile(model.predict(ordinary), LOW_SHARE))
    return QualityModel(means, scales, coefficients, intercept, low_score, typical, model_sha256, source)
