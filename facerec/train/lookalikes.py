"""Look-alike batches: part of every batch made of identities the teacher finds alike, so the strict tail is trained.

Why: the impostor pairs that decide a strict threshold are look-alikes (the 2,880 impostor pairs above the 1e-3
cut-off came from only 356 pairs of people), and random batches of 128 crops from thousands of identities almost
never hold two of them. The teacher (dlib's network, trained on ~3 million faces) says who looks like whom: each
identity's nearest other identities by the cosine of their mean teacher descriptors (crop and mirror), computed
once with numpy. A look-alike batch share then draws an identity, one of its look-alikes, and two photos of each.
"""

from __future__ import annotations

import numpy as np


def nearest_identities(targets: np.ndarray, labels: np.ndarray, k: int = 5) -> np.ndarray:
    """[C, k] the k nearest other identities of each identity 0..C-1 (cosine of the unit mean teacher target of
    its crops and their mirrors; `targets` [N, 2, 128] unit, NaN where a crop has none; labels -1 ignored)."""
    classes = int(labels.max()) + 1
    known = (labels >= 0) & ~np.isnan(targets[:, 0, 0])
    sums = np.zeros((classes, targets.shape[2]), np.float64)
    np.add.at(sums, labels[known], targets[known].sum(axis=1))
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    means = np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0).astype(np.float32)
    nearest = np.empty((classes, k), np.int64)
    for start in range(0, classes, 1024):  # [1024, C] similarities at a time
        similarities = means[start:start + 1024] @ means.T
        rows = np.arange(len(similarities))
        similarities[rows, start + rows] = -np.inf  # not itself
        similarities[:, norms[:, 0] == 0] = -np.inf  # nor identities without a target
        nearest[start:start + 1024] = np.argsort(-similarities, axis=1)[:, :k]
    return nearest


class LookalikeRows:
    """Draws look-alike groups of training rows: an identity, one of its nearest identities, `per_identity`
    photos of each (with replacement where an identity has fewer)."""

    def __init__(self, labels: np.ndarray, nearest: np.ndarray, per_identity: int = 2) -> None:
        self.nearest, self.per_identity = nearest, per_identity
        self.by_label = [np.flatnonzero(labels == k) for k in range(len(nearest))]
        self.drawable = np.array([k for k, rows in enumerate(self.by_label) if len(rows)], np.int64)

    def rows(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` rows made of look-alike pairs of identities."""
        chosen: list[np.ndarray] = []
        total = 0
        while total < count:
            first = int(rng.choice(self.drawable))
            second = int(rng.choice(self.nearest[first]))
            for identity in (first, second):
                rows = self.by_label[identity]
                if len(rows):
                    chosen.append(rng.choice(rows, self.per_identity, replace=len(rows) < self.per_identity))
                    total += self.per_identity
        return np.concatenate(chosen)[:count]
