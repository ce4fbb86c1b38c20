"""Embedding metrics, exactly as `shared/specs/embedding_metrics.md` specifies them.

`ClosestIsPositiveAccuracy` and `MedianDistances` are small state machines (`update` / `compute` / `reset`) used by
training validation, the gallery-health report and `facerec eval`. They take NumPy arrays or torch tensors (torch
is never imported here) and return Python floats.

Geometry: Euclidean distance on the embeddings exactly as given. Nearest-neighbour search runs block-wise
(squared distances expanded in float64, then the winner's distance recomputed directly as
sqrt(sum((a - b)^2))), so 20,000 x 512 embeddings need tens of MB at a time, not n^2 memory.

The `all` list of MedianDistances holds every pair distance exactly while the scored set has at most
`EXACT_ALL_PAIRS_LIMIT` (10,000) rows. Above that it holds a seeded uniform sample of `ALL_PAIRS_SAMPLE` pairs
(with replacement, i < j), and `compute()` marks its result `estimated=True` with a note saying so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

EXACT_ALL_PAIRS_LIMIT = 10_000
ALL_PAIRS_SAMPLE = 2_000_000
ALL_PAIRS_SEED = 0
_BLOCK_BYTES = 64 * 1024 * 1024

MEDIAN_KEYS = (
    "MedianDistance",
    "MedianClosestDistance",
    "MedianClosestPositiveDistance",
    "MedianClosestVsClosestPositiveDistance",
)


class MedianDistanceResult(dict):
    """The dict `MedianDistances.compute()` returns: the four spec keys, plus `estimated` and `note` attributes
    telling whether `MedianDistance` came from a sample of pairs rather than every pair."""

    def __init__(self, values: dict[str, float], estimated: bool = False, note: str = "") -> None:
        super().__init__(values)
        self.estimated = estimated
        self.note = note


def to_numpy(values: Any) -> np.ndarray:
    """NumPy view of an array-like or torch tensor (detached, on CPU, bf16/fp16 widened to float32)."""
    if hasattr(values, "detach") and hasattr(values, "cpu"):
        tensor = values.detach().cpu()
        if tensor.dtype.is_floating_point and tensor.element_size() < 4:
            tensor = tensor.float()
        return tensor.numpy()
    return np.asarray(values)


def lower_median(values: np.ndarray) -> float:
    """Median taking the lower middle value for even counts (like torch.median); NaN when empty."""
    if values.size == 0:
        return float("nan")
    k = (values.size - 1) // 2
    return float(np.partition(values, k)[k])


class NearestNeighbours:
    """Per-row nearest other row and nearest positive of one scored set (the spec's common ground).

    Attributes ([B] arrays): `closest_index` (-1 when the row has no other row), `closest_distance`,
    `closest_positive_distance` (NaN when the row has no positive), `has_positive` (bool: the row counts).
    """

    def __init__(self, embeddings: np.ndarray, labels: np.ndarray) -> None:
        count = embeddings.shape[0]
        data = embeddings.astype(np.float64, copy=False)
        squared_norms = np.einsum("ij,ij->i", data, data)
        # float32 shortlisting unless the values would overflow it (|e|^2 beyond ~1e37)
        fast = embeddings.astype(np.float32, copy=False) if squared_norms.max(initial=0.0) < 1e30 else data
        # float32 expansion is only used to shortlist candidates: anything within its rounding error of the
        # minimum is re-measured exactly in float64 (see _fill), so the winner and its distance are exact.
        self._tolerance = 1e-5 * (squared_norms.max(initial=0.0) + 1.0)
        fast_norms = squared_norms.astype(fast.dtype)
        self.closest_index = np.full(count, -1, dtype=np.int64)
        self.closest_distance = np.full(count, np.nan)
        self.closest_positive_distance = np.full(count, np.nan)
        self.has_positive = np.zeros(count, dtype=bool)
        rows_per_block = max(1, _BLOCK_BYTES // (4 * max(count, 1)))
        for start in range(0, count, rows_per_block):
            stop = min(count, start + rows_per_block)
            block = fast_norms[start:stop, None] + fast_norms[None, :] - 2.0 * (fast[start:stop] @ fast.T)
            rows = np.arange(start, stop)
            block[rows - start, rows] = np.inf  # never the row itself
            self._fill(data, rows, block, self.closest_index, self.closest_distance, None)
        self._fill_positives(data, labels)

    def _fill_positives(self, data: np.ndarray, labels: np.ndarray) -> None:
        """Nearest positive per row, label group by label group (positives are only ever same-label rows)."""
        order = np.argsort(labels, kind="stable")  # rows of a group stay in ascending index order
        boundaries = np.flatnonzero(np.diff(labels[order])) + 1
        for group in np.split(order, boundaries):
            if len(group) < 2:
                continue
            members = data[group]
            norms = np.einsum("ij,ij->i", members, members)
            squared = norms[:, None] + norms[None, :] - 2.0 * (members @ members.T)
            np.fill_diagonal(squared, np.inf)
            tolerance = 1e-9 * (1.0 + norms.max())
            minimum = squared.min(axis=1)
            near = squared <= (minimum + tolerance)[:, None]
            single = near.sum(axis=1) == 1
            chosen = squared.argmin(axis=1)
            exact = np.sqrt(((members[chosen] - members) ** 2).sum(axis=1))
            for offset in np.flatnonzero(~single):  # near-ties: re-measure every candidate directly
                candidates = np.flatnonzero(near[offset])
                exact[offset] = np.sqrt(((members[candidates] - members[offset]) ** 2).sum(axis=1)).min()
            self.closest_positive_distance[group] = exact
            self.has_positive[group] = True

    def _fill(self, data, rows, block, index_out, distance_out, valid) -> None:
        """Argmin per row with exact tie handling: where several candidates lie within rounding of the minimum,
        they are re-measured directly and the smallest exact distance wins, lowest index first."""
        minimum = block.min(axis=1)
        first = block.argmin(axis=1)
        tolerance = np.full(minimum.shape, self._tolerance)
        near_count = (block <= (minimum + tolerance)[:, None]).sum(axis=1)
        usable = np.isfinite(minimum) if valid is None else np.isfinite(minimum) & valid
        single = usable & (near_count == 1)
        chosen = first[single]
        if index_out is not None:
            index_out[rows[single]] = chosen
        distance_out[rows[single]] = np.sqrt(((data[chosen] - data[rows[single]]) ** 2).sum(axis=1))
        for offset in np.flatnonzero(usable & (near_count > 1)):
            row = rows[offset]
            candidates = np.flatnonzero(block[offset] <= minimum[offset] + tolerance[offset])
            exact = np.sqrt(((data[candidates] - data[row]) ** 2).sum(axis=1))
            best = int(np.argmin(exact))  # first minimum = lowest index, since candidates are ascending
            if index_out is not None:
                index_out[row] = candidates[best]
            distance_out[row] = exact[best]


def all_pair_distances(embeddings: np.ndarray) -> tuple[np.ndarray, bool]:
    """Distances of unordered pairs {i, j}, i < j, as float32: every pair up to EXACT_ALL_PAIRS_LIMIT rows,
    else a seeded uniform sample. Returns (distances, estimated)."""
    count = embeddings.shape[0]
    data = embeddings.astype(np.float64, copy=False)
    if count < 2:
        return np.empty(0, np.float32), False
    if count <= EXACT_ALL_PAIRS_LIMIT:
        squared_norms = np.einsum("ij,ij->i", data, data)
        pieces = []
        rows_per_block = max(1, _BLOCK_BYTES // (8 * count))
        for start in range(0, count - 1, rows_per_block):
            stop = min(count - 1, start + rows_per_block)
            block = squared_norms[start:stop, None] + squared_norms[None, :] - 2.0 * (data[start:stop] @ data.T)
            upper = np.triu(np.ones((stop - start, count), dtype=bool), k=start + 1)
            # Near-zero squared distances lose their precision to cancellation: measure those pairs directly
            # (identical embeddings then come out exactly 0).
            scale = squared_norms[start:stop, None] + squared_norms[None, :]
            rows, cols = np.nonzero(upper & (block < 1e-6 * (1.0 + scale)))
            block[rows, cols] = ((data[start + rows] - data[cols]) ** 2).sum(axis=1)
            pieces.append(np.sqrt(np.maximum(block[upper], 0.0)).astype(np.float32))
        return np.concatenate(pieces), False
    rng = np.random.default_rng(ALL_PAIRS_SEED)
    first = rng.integers(0, count, ALL_PAIRS_SAMPLE)
    second = rng.integers(0, count - 1, ALL_PAIRS_SAMPLE)
    second = second + (second >= first)  # uniform over j != i
    distances = np.empty(ALL_PAIRS_SAMPLE, np.float32)
    compact = embeddings.astype(np.float32, copy=False)  # direct differences: no cancellation, float32 suffices
    step = 20_000
    for start in range(0, ALL_PAIRS_SAMPLE, step):
        i, j = first[start : start + step], second[start : start + step]
        distances[start : start + step] = np.sqrt(((compact[i] - compact[j]) ** 2).sum(axis=1))
    return distances, True


class _EmbeddingMetric:
    """Input checks, cross-batch memory and reset, shared by both metrics."""

    def __init__(self, cross_batch_memory_size: int | None = None) -> None:
        if cross_batch_memory_size is not None:
            valid = isinstance(cross_batch_memory_size, (int, float, np.integer, np.floating)) and not isinstance(
                cross_batch_memory_size, bool) and float(cross_batch_memory_size).is_integer()
            if not valid or cross_batch_memory_size < 1:
                raise ValueError("cross_batch_memory_size must be None or a positive integer")
            cross_batch_memory_size = int(cross_batch_memory_size)
        self.cross_batch_memory_size = cross_batch_memory_size
        self.reset()

    def reset(self) -> None:
        """Forget everything, the cross-batch memory included."""
        self._memory_embeddings: np.ndarray | None = None
        self._memory_labels: np.ndarray | None = None
        self._reset_scores()

    def update(self, embeddings: Any, labels: Any) -> None:
        """Add a batch: embeddings [B, D] float, labels [B] integer identity ids."""
        embeddings, labels = _validated(embeddings, labels)
        if self.cross_batch_memory_size is None:
            self._score(embeddings, labels)
            return
        if self._memory_embeddings is not None and self._memory_embeddings.shape[1] != embeddings.shape[1]:
            raise ValueError(
                f"embedding width {embeddings.shape[1]} differs from the memory's {self._memory_embeddings.shape[1]}"
            )
        if self._memory_embeddings is None:  # copies: the caller may reuse its buffers for the next batch
            self._memory_embeddings, self._memory_labels = embeddings.copy(), labels.copy()
        else:
            self._memory_embeddings = np.concatenate([self._memory_embeddings, embeddings])
            self._memory_labels = np.concatenate([self._memory_labels, labels])
        size = self.cross_batch_memory_size
        self._memory_embeddings = self._memory_embeddings[-size:]
        self._memory_labels = self._memory_labels[-size:]
        if len(self._memory_labels) >= size:
            self._score(self._memory_embeddings, self._memory_labels)

    def _reset_scores(self) -> None:
        raise NotImplementedError

    def _score(self, embeddings: np.ndarray, labels: np.ndarray) -> None:
        raise NotImplementedError


class ClosestIsPositiveAccuracy(_EmbeddingMetric):
    """Share of rows (that have a positive) whose nearest other row has the same label; NaN when none counted."""

    def _reset_scores(self) -> None:
        self.correct = 0
        self.total = 0

    def _score(self, embeddings: np.ndarray, labels: np.ndarray) -> None:
        neighbours = NearestNeighbours(embeddings, labels)
        counted = neighbours.has_positive
        self.total += int(counted.sum())
        self.correct += int((labels[neighbours.closest_index[counted]] == labels[counted]).sum())

    def compute(self) -> float:
        return self.correct / self.total if self.total else float("nan")


class MedianDistances(_EmbeddingMetric):
    """Medians (lower middle on even counts) of four distance lists; see the module docstring for `all`."""

    def _reset_scores(self) -> None:
        self._lists: dict[str, list[np.ndarray]] = {key: [] for key in MEDIAN_KEYS}
        self._estimated = False

    def _score(self, embeddings: np.ndarray, labels: np.ndarray) -> None:
        neighbours = NearestNeighbours(embeddings, labels)
        distances, estimated = all_pair_distances(embeddings)
        self._estimated |= estimated
        has_other = neighbours.closest_index >= 0
        counted = neighbours.has_positive
        positive = neighbours.closest_positive_distance[counted]
        self._lists["MedianDistance"].append(distances)
        self._lists["MedianClosestDistance"].append(neighbours.closest_distance[has_other])
        self._lists["MedianClosestPositiveDistance"].append(positive)
        self._lists["MedianClosestVsClosestPositiveDistance"].append(positive - neighbours.closest_distance[counted])

    def compute(self) -> MedianDistanceResult:
        values = {
            key: lower_median(np.concatenate(parts) if parts else np.empty(0)) for key, parts in self._lists.items()
        }
        note = ""
        if self._estimated:
            note = (
                f"MedianDistance estimated from a seeded uniform sample of {ALL_PAIRS_SAMPLE:,} pairs per scored set "
                f"(sets larger than {EXACT_ALL_PAIRS_LIMIT:,} rows)"
            )
        return MedianDistanceResult(values, estimated=self._estimated, note=note)


def _validated(embeddings: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    embeddings, labels = to_numpy(embeddings), to_numpy(labels)
    if embeddings.ndim != 2:
        raise ValueError(f"embeddings must have shape [B, D], got {embeddings.shape}")
    if labels.ndim != 1:
        raise ValueError(f"labels must have shape [B], got {labels.shape}")
    if embeddings.shape[0] != labels.shape[0]:
        raise ValueError(f"{embeddings.shape[0]} embeddings but {labels.shape[0]} labels")
    if not (np.issubdtype(embeddings.dtype, np.floating) or np.issubdtype(embeddings.dtype, np.integer)):
        raise ValueError(f"embeddings must be numeric, got dtype {embeddings.dtype}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be integer identity ids, got dtype {labels.dtype}")
    if not np.all(np.isfinite(embeddings)):
        raise ValueError("embeddings contain NaN or infinite values")
    return embeddings, labels.astype(np.int64, copy=False)
