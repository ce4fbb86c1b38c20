"""Threshold calibration: the cosine similarity at which a chosen share of impostor pairs is (wrongly) accepted.

Uses every genuine (same identity) and impostor (different identity) pair of a labelled embedding set — for the
shipped model, the held-out validation identities, never LFW.
"""

from __future__ import annotations

import numpy as np


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


def calibrate(embeddings: np.ndarray, labels: np.ndarray, fars=(1e-3, 1e-2)) -> dict:
    """{"far_1e-3": {"cosine": t, "tar": ..., "far_measured": ...}, ...} plus pair counts."""
    genuine, impostor = pair_similarities(embeddings, labels)
    result: dict = {"genuine_pairs": int(len(genuine)), "impostor_pairs": int(len(impostor))}
    for far in fars:
        threshold = threshold_at_far(impostor, far)
        result[f"far_{far:.0e}".replace("e-0", "e-")] = {
            "cosine": round(threshold, 4),
            "tar": round(float(np.mean(genuine >= threshold)), 4),
            "far_measured": float(np.mean(impostor >= threshold)),
        }
    # FAR as a function of the threshold, for the UI's slider: (cosine threshold, FAR) pairs.
    result["far_curve"] = [[round(threshold_at_far(impostor, far), 4), far]
                           for far in (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 0.5)]
    return result
