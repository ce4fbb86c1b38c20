"""Grouping unknown faces into people: each new face joins the group most of whose faces it matches, or starts one.

Why this rule and not the usual ones. Single linkage (join any group that holds one matching face) chains: two
strangers who each resemble a third end up one "person", and in a memory of thousands of faces there are always
a few such pairs. Full clustering of everything at each read would move faces between groups under the user's
eyes and costs the square of the memory. Here a face is placed once, in arrival order, and only into a group
where it matches at least half of the faces (a majority vote at a strict pairwise threshold, from the model
card's false-accept curve), so one accidental match never merges two people. The price: a person whose photos
look unlike each other may form two groups; naming one of them and then the other as the same person is allowed
(the second becomes added photos).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

BLOCK = 1024  # new faces compared at a time: a block of similarities is BLOCK x kept faces floats (40 MB at 10,000)


def assign_groups(ids: np.ndarray, embeddings: np.ndarray, groups: np.ndarray, threshold: float) -> dict[int, int]:
    """Groups for the faces not grouped yet (`groups` -1), in id order: {face id: group id}. A new group is named
    after its first face. `embeddings` are unit vectors [N, D] in id order; placed faces keep their group."""
    groups = groups.copy()
    sizes = Counter(int(g) for g in groups if g >= 0)
    pending = np.flatnonzero(groups < 0)
    placed: dict[int, int] = {}
    for start in range(0, len(pending), BLOCK):
        rows = pending[start:start + BLOCK]
        similarities = embeddings[rows] @ embeddings.T
        for row, similarity in zip(rows, similarities):
            matching = (groups >= 0) & (similarity >= threshold)
            group = _best_group(groups[matching], similarity[matching], sizes)
            group = int(ids[row]) if group is None else group
            groups[row] = group
            sizes[group] += 1
            placed[int(ids[row])] = group
    return placed


def _best_group(matched_groups: np.ndarray, matched_similarities: np.ndarray, sizes: Counter) -> int | None:
    """The group with the largest share of its faces matched, if at least half are (ties: the closer one)."""
    best, best_key = None, None
    for group in np.unique(matched_groups):
        hits = matched_groups == group
        count, size = int(hits.sum()), sizes[int(group)]
        if 2 * count < size:
            continue
        key = (count / size, float(matched_similarities[hits].mean()))
        if best_key is None or key > best_key:
            best, best_key = int(group), key
    return best


def centrality(embeddings: np.ndarray) -> np.ndarray:
    """Each face's mean similarity to the others of its group: the most typical faces first to enroll from."""
    if len(embeddings) < 2:
        return np.ones(len(embeddings))
    similarities = embeddings @ embeddings.T
    return (similarities.sum(axis=1) - np.diag(similarities)) / (len(embeddings) - 1)
