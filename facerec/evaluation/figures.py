"""Figures shared by every evaluation: genuine/impostor similarities, TAR at a FAR, and the spec's embedding
metrics over gallery + probe embeddings under their true labels."""

from __future__ import annotations

import numpy as np

from ..calibrate import threshold_at_far
from ..metrics import ClosestIsPositiveAccuracy, MedianDistances

FARS = (1e-3, 1e-2)


def genuine_impostor(queries, query_names, gallery, gallery_names) -> tuple[np.ndarray, np.ndarray]:
    """Similarities of each query to the gallery faces of its own name (genuine) and of every other (impostor)."""
    similarities = queries @ gallery.T
    same = np.array(query_names)[:, None] == np.array(gallery_names)[None, :]
    return similarities[same], similarities[~same]


def tar_at_far(genuine: np.ndarray, impostor: np.ndarray) -> dict:
    """{"1e-3": {"threshold", "tar"}, "1e-2": ...}; NaN where there are no impostor or genuine pairs."""
    result = {}
    for far in FARS:
        threshold = threshold_at_far(impostor, far) if len(impostor) else float("nan")
        tar = float(np.mean(genuine >= threshold)) if len(genuine) else float("nan")
        result[f"{far:.0e}".replace("e-0", "e-")] = {"threshold": round(threshold, 4), "tar": tar}
    return result


def embedding_metrics(gallery_vectors, gallery_names, query_vectors, query_names) -> dict:
    """ClosestIsPositiveAccuracy and the four MedianDistances over gallery + queries, labelled by name."""
    names = list(gallery_names) + list(query_names)
    index = {n: i for i, n in enumerate(sorted(set(names)))}
    labels = np.array([index[n] for n in names], dtype=np.int64)
    vectors = np.concatenate([gallery_vectors, query_vectors])
    accuracy, medians = ClosestIsPositiveAccuracy(), MedianDistances()
    if len(vectors):
        accuracy.update(vectors, labels)
        medians.update(vectors, labels)
    result = medians.compute()
    figures = {"closest_is_positive_accuracy": accuracy.compute(), "median_distances": dict(result)}
    if result.estimated:
        figures["median_distances_note"] = result.note
    return figures
