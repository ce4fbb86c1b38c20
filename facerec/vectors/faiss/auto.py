"""`auto`, the embedded default: exact search while it is fast, an approximate graph once the gallery outgrows it.

Exact search (`flat`) costs a scan of every face: well under a millisecond at a thousand faces, about a tenth of a
second per query at a million on two cores (`benchmarks/scale.py`). From `APPROXIMATE_FROM` faces the engine
builds FAISS's graph index (`hnsw`: a graph over the faces' principal subspace whose candidates are re-scored
exactly) in a background thread while the exact index keeps answering; what is written meanwhile is applied to
the exact index and logged, replayed onto the graph when it is ready, and the graph is swapped in. Before the
swap the graph's recall is measured on `RECALL_SAMPLE` of its own faces: for each, the nearest other face by the
graph against the nearest by exact search. Health shows which index serves and that recall (`describe`).

A graph that has collected tombstones past its share is rebuilt the same way, in the background, the graph it
replaces answering meanwhile. Below `EXACT_BELOW` faces (a gallery that shrank) the exact index comes back, built
at once from the graph's stored vectors (a copy, no model needed).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from facerec.vectors.faiss.vectors import FaissVectors
from facerec.vectors.local import LocalVectors

APPROXIMATE_FROM = 200_000  # exact search here: ~30 ms a query on two cores, the p99 the gallery aims under
EXACT_BELOW = 150_000  # hysteresis: a gallery hovering at the line does not rebuild back and forth
RECALL_SAMPLE = 200
RECALL_TARGET = 0.99  # identify's candidates as exact search's 99 times in 100 (#52), or exact search goes on
MAX_EF_SEARCH = 1024  # four times the default: past it a graph costs what exact search does at this size
RETRY_GROWTH = 1.1  # a graph that fell short or failed is tried again when the gallery is this much larger


class AutoVectors(LocalVectors):
    kind = "auto"
    reads_kinds = ("auto", "flat")  # a gallery saved by the exact default before `auto` opens without a rebuild

    def __init__(self, dimension: int = 512, hnsw_m: int = 32, ef_search: int = 256,
                 approximate_from: int = APPROXIMATE_FROM, exact_below: int = EXACT_BELOW,
                 recall_target: float = RECALL_TARGET) -> None:
        self.dimension, self.hnsw_m, self.ef_search = dimension, hnsw_m, ef_search
        self.approximate_from, self.exact_below, self.recall_target = approximate_from, exact_below, recall_target
        self.serving = FaissVectors("flat", dimension)
        self.recall: float | None = None  # the serving graph's recall@1 measured when it was built
        # the last graph not swapped in: {"faces", "recall" (None: its build failed), "retry_at" (faces)}
        self.declined: dict | None = None
        self._lock = threading.Lock()  # the swap against this process's reads and writes
        self._pending: list[tuple[str, np.ndarray, np.ndarray | None]] | None = None  # writes during a build
        self._builder: threading.Thread | None = None

    def _options(self) -> dict:
        return {"dimension": self.dimension, "hnsw_m": self.hnsw_m, "ef_search": self.ef_search,
                "approximate_from": self.approximate_from, "exact_below": self.exact_below,
                "recall_target": self.recall_target}

    @property
    def approximate(self) -> bool:
        return self.serving.kind == "hnsw"

    def __len__(self) -> int:
        return len(self.serving)

    def stored_count(self) -> int:
        return self.serving.stored_count()

    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        with self._lock:
            self.serving.add(ids, embeddings)
            if self._pending is not None and len(ids):
                self._pending.append(("add", np.array(ids, np.int64), np.array(embeddings, np.float32)))
        self._adapt()

    def remove(self, ids: np.ndarray) -> None:
        with self._lock:
            self.serving.remove(ids)
            if self._pending is not None and len(ids):
                self._pending.append(("remove", np.array(ids, np.int64), None))
        self._adapt()

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            return self.serving.search(queries, k)

    def ids(self) -> np.ndarray:
        return self.serving.ids()

    def vector(self, face_id: int) -> np.ndarray:
        return self.serving.vector(face_id)

    def vectors(self, face_ids: np.ndarray) -> np.ndarray:
        return self.serving.vectors(face_ids)

    def built(self, ids: np.ndarray, embeddings: np.ndarray) -> AutoVectors:
        """The exact index at once (a rebuild never waits for a graph); a graph follows in the background when the
        gallery is large enough."""
        fresh = AutoVectors(**self._options())
        fresh.serving = fresh.serving.built(ids, embeddings)
        fresh._adapt()
        return fresh

    def cannot_replay(self, changed: list[int], new: list[int]) -> bool:
        return self.serving.cannot_replay(changed, new)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a graph being built (tests, benchmarks); True when none is being built."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout)
        return self._builder is None or not self._builder.is_alive()

    def describe(self) -> dict:
        """Which index serves, for Health: {"index": "exact" | "approximate", "faces", "recall" (approximate:
        measured when built), "building" (a graph under construction), "approximate_from", "recall_target",
        "declined" (the last graph not swapped in, and the size at which one is tried again)}."""
        return {"index": "approximate" if self.approximate else "exact", "faces": len(self),
                "recall": self.recall, "recall_sample": RECALL_SAMPLE,
                "building": self._builder is not None and self._builder.is_alive(),
                "approximate_from": self.approximate_from, "recall_target": self.recall_target,
                "declined": None if self.declined is None else dict(self.declined)}

    # ----- switching ------------------------------------------------------------------------------------
    def _adapt(self) -> None:
        """Start a graph when the exact index has grown past the line (or the graph has degraded); go back to
        the exact index at once when the gallery shrank below `exact_below`."""
        with self._lock:
            if self._builder is not None and self._builder.is_alive():
                return
            if self.approximate and len(self.serving) < self.exact_below:
                ids = self.serving.ids()
                self.serving = FaissVectors("flat", self.dimension).built(ids, self.serving.vectors(ids))
                self.recall = None
                return
            wanted = (not self.approximate and len(self.serving) >= self.approximate_from) or \
                (self.approximate and self.serving.wants_rebuild())
            if not wanted or (self.declined and len(self.serving) < self.declined["retry_at"]):
                return
            ids = self.serving.ids()
            snapshot = (ids, self.serving.vectors(ids))
            self._pending = []
            self._builder = threading.Thread(target=self._build, args=snapshot, name="facerec-graph-build",
                                             daemon=True)
            self._builder.start()

    def _build(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        try:
            graph = FaissVectors("hnsw", self.dimension, self.hnsw_m, self.ef_search).built(ids, embeddings)
            recall = tuned_recall(graph, ids, embeddings, self.recall_target)
        except Exception:  # memory, mostly: the serving index is untouched and answers as before
            recall, graph = None, None
        with self._lock:
            if graph is None or recall < self.recall_target:
                retry_at = int(len(ids) * RETRY_GROWTH) + 1
                self.declined = {"faces": len(ids), "recall": recall, "retry_at": retry_at}
                self._pending = None
                return
            for op, changed, vectors in self._pending or []:
                if op == "add":
                    graph.add(changed, vectors)
                else:
                    graph.remove(changed)
            self.serving, self.recall, self._pending, self.declined = graph, recall, None, None

    # ----- saved beside the database ------------------------------------------------------------------------
    def write(self, path: Path) -> dict:
        with self._lock:
            return {"serving": self.serving.kind, "recall": self.recall, "ef_search": self.serving.ef_search,
                    **self.serving.write(path)}

    def read(self, path: Path, saved: dict) -> AutoVectors:
        fresh = AutoVectors(**self._options())
        kind = saved.get("serving", "flat")
        if kind not in ("flat", "hnsw"):
            raise ValueError("it names an index this engine does not serve")
        ef_search = int(saved.get("ef_search", self.ef_search))  # as tuned when the graph was built
        fresh.serving = FaissVectors(kind, self.dimension, self.hnsw_m, ef_search).read(path, saved)
        fresh.recall = saved.get("recall") if kind == "hnsw" else None
        fresh._adapt()
        return fresh


def tuned_recall(graph: FaissVectors, ids: np.ndarray, embeddings: np.ndarray, target: float) -> float:
    """The graph's recall at its `ef_search`, which is doubled (up to `MAX_EF_SEARCH`) until the recall reaches
    `target`; the graph keeps the `ef_search` it ends at. The exact side is scanned once for every try."""
    rows, nearest = exact_nearest_others(ids, embeddings)
    recall = graph_recall(graph, ids, embeddings, rows, nearest)
    while recall < target and graph.ef_search < MAX_EF_SEARCH:
        graph.ef_search = min(MAX_EF_SEARCH, 2 * graph.ef_search)
        recall = graph_recall(graph, ids, embeddings, rows, nearest)
    return recall


def exact_nearest_others(ids: np.ndarray, embeddings: np.ndarray, sample: int = RECALL_SAMPLE,
                         chunk: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """(`sample` rows of the faces, seeded; each one's similarity to its nearest other face by exact search): a
    scan in chunks of `chunk` faces, so it costs bounded memory at any size."""
    rows = np.random.default_rng(0).choice(len(ids), min(sample, len(ids)), replace=False)
    queries = np.ascontiguousarray(embeddings[rows], np.float32)
    nearest = np.full(len(rows), -np.inf, np.float32)
    for start in range(0, len(ids), chunk):
        products = queries @ embeddings[start:start + chunk].T
        own = (rows >= start) & (rows < start + chunk)
        products[np.flatnonzero(own), rows[own] - start] = -np.inf  # the face itself
        nearest = np.maximum(nearest, products.max(axis=1))
    return rows, nearest


def graph_recall(graph: FaissVectors, ids: np.ndarray, embeddings: np.ndarray, rows: np.ndarray,
                 nearest: np.ndarray) -> float:
    """How often the graph's nearest other face to each of `rows` is as near as exact search's (`nearest`)."""
    similarities, found = graph.search(np.ascontiguousarray(embeddings[rows], np.float32), 2)
    hits = 0
    for row, sims, neighbours, exact in zip(rows, similarities, found, nearest):
        other = [s for s, f in zip(sims, neighbours) if int(f) != int(ids[row]) and f >= 0]
        hits += bool(other) and other[0] >= exact - 1e-5
    return float(hits / len(rows))
