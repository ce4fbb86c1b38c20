"""Figures shared by every evaluation: genuine/impostor similarities, TAR at a FAR, and the spec's embedding
metrics over gallery + probe embeddings under their true labels."""

from __future__ import annotations

import random

import numpy as np

from facerec.openset.cohort import Scorer, normalised

from facerec.openset.stranger_tail import empirical_threshold
from facerec.metrics import ClosestIsPositiveAccuracy, MedianDistances

FARS = (1e-5, 1e-4, 1e-3, 1e-2)


def genuine_impostor(queries, query_names, gallery, gallery_names,
                     scorer: Scorer | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scores of each query against the gallery faces of its own name (genuine) and of every other (impostor):
    the scores `scorer` normalises (the ones the app decides with), or raw cosines without one."""
    similarities = queries @ gallery.T
    if scorer is not None:
        similarities = normalised(similarities, scorer.statistics(queries), scorer.statistics(gallery))
    same = np.array(query_names)[:, None] == np.array(gallery_names)[None, :]
    return similarities[same], similarities[~same]


def tar_at_far(genuine: np.ndarray, impostor: np.ndarray) -> dict:
    """{"1e-5": {"threshold", "tar"}, "1e-4": ..., "1e-3": ..., "1e-2": ...}; NaN where there are no impostor or
    genuine pairs (the empirical threshold at 1e-5 needs about 100,000 impostor pairs to mean much)."""
    result = {}
    for far in FARS:
        threshold = empirical_threshold(impostor, far) if len(impostor) else float("nan")
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


ENROL_SEED = 51  # as the LFW protocol's choice of the enrolled photo


def one_shot_draw(identities: list[str], seed: int = ENROL_SEED) -> tuple[list[int], list[int]]:
    """(gallery rows, query rows) of one draw of the one-shot protocol: per identity with 2+ photos one photo,
    chosen by `seed` (as the LFW protocol does), is enrolled, in the sorted order of the identities; every other
    photo of those identities is a query. One function, so every benchmark that compares options over seeded draws
    draws the same photos."""
    by_identity: dict[str, list[int]] = {}
    for row, name in enumerate(identities):
        by_identity.setdefault(name, []).append(row)
    rng = random.Random(seed)
    enrolled = {name: rng.choice(rows) for name, rows in sorted(by_identity.items()) if len(rows) >= 2}
    query_rows = [r for name, chosen in enrolled.items() for r in by_identity[name] if r != chosen]
    return list(enrolled.values()), query_rows


def one_shot_rank1(embeddings: np.ndarray, identities: list[str], euclidean: bool = False,
                   seed: int = ENROL_SEED) -> float:
    """Rank-1 of one-shot identification (`one_shot_draw`): every query is matched to its nearest enrolled photo
    (cosine, or Euclidean for the dlib teacher's raw descriptors)."""
    gallery_rows, query_rows = one_shot_draw(identities, seed)
    gallery, queries = embeddings[gallery_rows], embeddings[query_rows]
    if euclidean:
        scores = -((queries[:, None, :] - gallery[None, :, :]) ** 2).sum(-1)
    else:
        scores = queries @ gallery.T
    best = scores.argmax(axis=1)
    return float(np.mean([identities[gallery_rows[b]] == identities[q] for b, q in zip(best, query_rows)]))


def one_shot_rank1_over_draws(embeddings: np.ndarray, identities: list[str], draws: int = 30) -> float:
    """Mean of `one_shot_rank1` over `draws` seeded choices of the enrolled photos (seeds 0..draws-1). Why: on 150
    identities, which photo happens to be enrolled moves rank-1 by ~2 points (one draw's figure is a sample), so
    options that differ by less (centering, int8) are compared on the same draws, averaged."""
    return float(np.mean([one_shot_rank1(embeddings, identities, seed=seed) for seed in range(draws)]))
