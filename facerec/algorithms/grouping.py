"""Grouping unknown faces into people: each new face joins the group it matches best, if it matches enough of
that group's faces, or starts a group of its own.

Two faces "match" when their cosine is at least the strict pairwise threshold (the model card's cosine at a small
false-accept rate) and also stands out from what each of them scores against everyone else kept: their cohort
z-score (adaptive score normalisation, as in speaker and face verification) is at least MIN_Z. The second test is
what keeps look-alikes apart: in a memory of thousands of strangers, faces of one age, sex and origin crowd
together, and a cosine that separates two people in general is common among them; a face whose top cohort scores
are already high needs a much higher cosine to stand out. The cohort of a face is its COHORT_SIZE best scores
against the kept faces after its COHORT_SKIP best (which may be the same person). Those are the look-alikes only in a
memory of at least COHORT_MEMORY faces; in a smaller one the cohort is everyone (a z-score then means something
else), and there are too few pairs for crowds of look-alikes, so only the cosine is tested.

Why a face must match at least half of a group, and at least two of its faces once it has two: single linkage
(join any group holding one matching face) chains two strangers who each resemble a third into one "person".
Faces are placed once, in arrival order, so a group never changes under the user's eyes, and grouping costs only
the new faces against the memory. The price: a person whose photos look unlike each other may form two groups;
naming one and then the other with the same name is refused as a taken name, so add the second's photos by hand.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

import numpy as np

BLOCK = 256  # faces compared at a time: a block of similarities is BLOCK x kept faces float32 (20 MB at 20,000)
COHORT_SKIP, COHORT_SIZE = 5, 50
COHORT_MEMORY = 1_000  # kept faces from which the cohort test applies
MIN_Z = 6.0


class GroupingStopped(Exception):
    """The caller asked a grouping under way to stop (the gallery is closing); nothing of it was placed."""


def assign_groups(ids: np.ndarray, embeddings: np.ndarray, groups: np.ndarray, threshold: float,
                  min_z: float = MIN_Z, statistics: tuple[np.ndarray, np.ndarray] | None = None,
                  stop: Callable[[], bool] | None = None) -> dict[int, int]:
    """Groups for the faces not grouped yet (`groups` -1), in id order: {face id: group id}. A new group is named
    after its first face. `embeddings` are unit vectors [N, D] in id order; placed faces keep their group.
    `statistics`: each face's (mean, spread) against the model's score cohort; with them `threshold` applies to
    the normalised score identify decides with instead of the cosine (benchmarks/suggestions.py measures both).
    `stop`: asked between blocks of BLOCK faces; when it says so, GroupingStopped is raised (a closing gallery
    does not wait for a grouping of thousands of faces)."""
    groups = groups.copy()
    pending = np.flatnonzero(groups < 0)
    if not len(pending):
        return {}
    cohort = cohort_statistics(embeddings, stop)
    sizes = Counter(int(g) for g in groups if g >= 0)
    placed: dict[int, int] = {}
    for start in range(0, len(pending), BLOCK):
        _stop_if_asked(stop)
        rows = pending[start:start + BLOCK]
        similarities = embeddings[rows] @ embeddings.T
        for row, similarity in zip(rows, similarities):
            score = similarity if statistics is None else z_scores(similarity, row, statistics)
            matching = (groups >= 0) & (score >= threshold)
            if cohort is not None:
                matching &= z_scores(similarity, row, cohort) >= min_z
            group = _best_group(groups[matching], score[matching], sizes)
            group = int(ids[row]) if group is None else group
            groups[row] = group
            sizes[group] += 1
            placed[int(ids[row])] = group
    return placed


def cohort_statistics(embeddings: np.ndarray,
                      stop: Callable[[], bool] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(mean [N], spread [N]) of each face's cohort scores (see the module); None when too few faces are kept.
    `stop`: as in `assign_groups`."""
    count = len(embeddings)
    if count < max(COHORT_MEMORY, COHORT_SKIP + COHORT_SIZE + 1):
        return None
    means, spreads = np.empty(count), np.empty(count)
    for start in range(0, count, BLOCK):
        _stop_if_asked(stop)
        block = embeddings[start:start + BLOCK] @ embeddings.T
        block[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf  # not itself
        best = -np.partition(-block, COHORT_SKIP + COHORT_SIZE - 1, axis=1)[:, :COHORT_SKIP + COHORT_SIZE]
        best = -np.sort(-best, axis=1)[:, COHORT_SKIP:]
        means[start:start + len(block)] = best.mean(axis=1)
        spreads[start:start + len(block)] = np.maximum(best.std(axis=1), 1e-6)
    return means, spreads


def z_scores(similarity: np.ndarray, row: int, cohort: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Face `row`'s similarities to every kept face, each normalised by both faces' cohorts (averaged)."""
    means, spreads = cohort
    return 0.5 * ((similarity - means[row]) / spreads[row] + (similarity - means) / spreads)


def _best_group(matched_groups: np.ndarray, matched_similarities: np.ndarray, sizes: Counter) -> int | None:
    """The group with the largest share of its faces matched, when enough are (ties: the closer one)."""
    best, best_key = None, None
    for group in np.unique(matched_groups):
        hits = matched_groups == group
        count, size = int(hits.sum()), sizes[int(group)]
        if count < max((size + 1) // 2, min(size, 2)):
            continue
        key = (count / size, float(matched_similarities[hits].mean()))
        if best_key is None or key > best_key:
            best, best_key = int(group), key
    return best


def centrality(embeddings: np.ndarray) -> np.ndarray:
    """Each face's mean similarity to the others of its group: the most typical faces first to enroll from.
    Computed against the group's summed vector (a face's cosines to the others add up to its dot product with
    their sum), so a group of thousands of faces costs [N] floats, not an N x N matrix."""
    if len(embeddings) < 2:
        return np.ones(len(embeddings))
    embeddings = np.asarray(embeddings, np.float64)
    return (embeddings @ embeddings.sum(axis=0) - np.einsum("ij,ij->i", embeddings, embeddings)) / (len(embeddings) - 1)


def _stop_if_asked(stop: Callable[[], bool] | None) -> None:
    if stop is not None and stop():
        raise GroupingStopped()
