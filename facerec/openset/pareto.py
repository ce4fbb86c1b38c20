"""The generalized Pareto tail: how often impostor similarities exceed a threshold beyond what the data reach.

Above a high threshold u, the excess y = score - u of impostor scores follows a generalized Pareto distribution
(GPD, the peaks-over-threshold theorem), with survival S(y) = (1 + shape * y / scale) ** (-1 / shape):
shape < 0 is a tail that ends (cosine scores cannot pass 1), shape = 0 the exponential tail. Fitting it lets a
false-accept rate of 1e-7 be estimated from a few million impostor pairs, whose own resolution stops near 1e-6.

The fit is Zhang & Stephens' (2009) estimator: a posterior mean over a grid of the profile likelihood, with no
optimiser and no starting point, so it is fast, deterministic and never fails to converge. Each excess may carry
a weight (a bootstrap multiplicity).
"""

from __future__ import annotations

import numpy as np


def fit_generalized_pareto(excesses: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float]:
    """(shape, scale) of the GPD fitted to positive excesses over a threshold (any order), optionally weighted.

    Zhang & Stephens, "A new and efficient estimation method for the generalized Pareto distribution",
    Technometrics 51 (2009); the same estimator as PSIS's `gpdfit`, without its prior on the shape.
    """
    order = np.argsort(excesses)
    x = np.asarray(excesses, np.float64)[order]
    c = np.ones_like(x) if weights is None else np.asarray(weights, np.float64)[order]
    keep = c > 0
    x, c = x[keep], c[keep]
    if len(x) < 10 or x[0] <= 0:
        raise ValueError("the GPD fit needs at least 10 positive excesses")
    n, total = len(x), float(c.sum())
    grid = 30 + int(np.sqrt(n))
    # Candidate values of b = -shape / scale, spread around the data's scale (the authors' grid).
    b = 1.0 - np.sqrt(grid / (np.arange(1, grid + 1) - 0.5))
    b = b / (3.0 * x[int(n / 4 + 0.5) - 1]) + 1.0 / x[-1]
    shapes = (np.log1p(-b[:, None] * x[None, :]) * c).sum(axis=1) / total
    profile = total * (np.log(-b / shapes) - shapes - 1.0)
    posterior = np.exp(profile - profile.max())
    b_mean = float((b * posterior).sum() / posterior.sum())
    shape = float((np.log1p(-b_mean * x) * c).sum() / total)
    return shape, -shape / b_mean


def pareto_survival(excess: np.ndarray | float, shape: float, scale: float) -> np.ndarray:
    """P(Y >= y) for the GPD; 0 beyond the end point of a bounded tail (shape < 0)."""
    y = np.maximum(np.asarray(excess, np.float64), 0.0)
    if abs(shape) < 1e-9:
        return np.exp(-y / scale)
    base = 1.0 + shape * y / scale
    return np.where(base > 0, np.abs(base) ** (-1.0 / shape), 0.0)


def pareto_quantile(survival: np.ndarray | float, shape: float, scale: float) -> np.ndarray:
    """The excess y with P(Y >= y) = survival (inverse of `pareto_survival`), survival in (0, 1]."""
    p = np.asarray(survival, np.float64)
    if abs(shape) < 1e-9:
        return -scale * np.log(p)
    return scale / shape * (p ** (-shape) - 1.0)
