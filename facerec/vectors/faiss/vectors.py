"""FAISS's own indexes as one engine (`FaissVectors`): `flat`, `flat16` and `hnsw`, described in the package's
docstring (`facerec.vectors.faiss`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from facerec.vectors.faiss.hnsw import (
    PROJECTION_MIN_FACES, is_graph_index, new_graph_index, search_parameters,
)
from facerec.vectors.local import LocalVectors

KINDS = ("flat", "flat16", "hnsw")  # and "auto" (`facerec.vectors.faiss.auto`): flat, then hnsw past a size
# Below this many vectors (4 MB) FAISS's own single-threaded scan takes well under a millisecond.
PARALLEL_SCAN_MIN = 2048
# From this many queries on FAISS itself multiplies in BLAS blocks, on every core and in bounded memory.
FAISS_BLAS_QUERIES = 20
TOMBSTONE_FRACTION = 0.1


class FaissVectors(LocalVectors):
    def __init__(self, kind: str = "flat", dimension: int = 512, hnsw_m: int = 32, ef_search: int = 256,
                 training: np.ndarray | None = None) -> None:
        """An empty index; `training` (the vectors it is about to hold) shapes an HNSW graph's projection."""
        if kind not in KINDS:
            raise ValueError(f"index kind must be one of {', '.join(KINDS)}")
        self.kind, self.dimension, self.hnsw_m, self.ef_search = kind, dimension, hnsw_m, ef_search
        self.faiss_index = self._empty(training)
        self.tombstones: set[int] = set()  # HNSW only: removed face ids still in the graph
        self._selector = None  # FAISS selector excluding the tombstones (with the objects it points to)
        self.built_for = 0  # faces held when the graph was built

    def _empty(self, training: np.ndarray | None):
        import faiss

        if self.kind == "flat":
            return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dimension))
        if self.kind == "flat16":
            return faiss.IndexIDMap2(faiss.IndexScalarQuantizer(
                self.dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT))
        return new_graph_index(self.dimension, self.hnsw_m, training)

    def _options(self) -> dict:
        return {"kind": self.kind, "dimension": self.dimension, "hnsw_m": self.hnsw_m, "ef_search": self.ef_search}

    def __len__(self) -> int:
        return int(self.faiss_index.ntotal) - len(self.tombstones)

    def stored_count(self) -> int:
        return int(self.faiss_index.ntotal)

    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        if len(ids):
            self.faiss_index.add_with_ids(np.ascontiguousarray(embeddings, dtype=np.float32),
                                          np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        """Deleted in place (flat kinds) or tombstoned (HNSW)."""
        if not len(ids):
            return
        if self.kind != "hnsw":
            self.faiss_index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))
        else:
            self._set_tombstones(self.tombstones | {int(i) for i in ids})

    def _set_tombstones(self, tombstones: set[int]) -> None:
        import faiss

        self.tombstones = tombstones
        if not tombstones:
            self._selector = None
            return
        batch = faiss.IDSelectorBatch(np.array(sorted(tombstones), dtype=np.int64))
        self._selector = (faiss.IDSelectorNot(batch), batch)  # keep `batch` alive: the Not points to it

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.kind == "flat" and len(self) >= PARALLEL_SCAN_MIN and len(queries) < FAISS_BLAS_QUERIES:
            return self._parallel_exact_search(queries, k)
        if self.kind != "hnsw":
            return self.faiss_index.search(queries, k)
        excluded = self._selector[0] if self._selector is not None else None
        return self.faiss_index.search(queries, k, params=search_parameters(self.faiss_index, self.ef_search, k,
                                                                            excluded))

    def _parallel_exact_search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k as a matrix product over views of FAISS's storage (no copy)."""
        import faiss

        flat = faiss.downcast_index(self.faiss_index.index)
        count = int(flat.ntotal)
        vectors = faiss.rev_swig_ptr(flat.get_xb(), count * self.dimension).reshape(count, self.dimension)
        ids = faiss.rev_swig_ptr(self.faiss_index.id_map.data(), count)
        scores = queries @ vectors.T  # [Q, count]
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]  # k <= count, checked by the caller
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        rows = np.take_along_axis(top, order, axis=1)
        return np.take_along_axis(top_scores, order, axis=1).astype(np.float32), ids[rows].astype(np.int64)

    def ids(self) -> np.ndarray:
        ids = self._physical_ids()
        return ids[~np.isin(ids, list(self.tombstones))] if self.tombstones else ids

    def _physical_ids(self) -> np.ndarray:
        import faiss

        return faiss.vector_to_array(self.faiss_index.id_map).astype(np.int64)

    def vector(self, face_id: int) -> np.ndarray:
        return self.faiss_index.reconstruct(int(face_id))

    def vectors(self, face_ids: np.ndarray) -> np.ndarray:
        return self.faiss_index.reconstruct_batch(np.ascontiguousarray(face_ids, dtype=np.int64))

    def built(self, ids: np.ndarray, embeddings: np.ndarray) -> FaissVectors:
        fresh = FaissVectors(**self._options(), training=embeddings)
        fresh.add(ids, embeddings)
        fresh.built_for = len(ids)
        return fresh

    def cannot_replay(self, changed: list[int], new: list[int]) -> bool:
        return self.kind == "hnsw" and bool(changed or self.tombstones.intersection(new))  # a node is forever

    def wants_rebuild(self) -> bool:
        """HNSW: tombstones past their share, or a graph built while the gallery was too small to estimate its
        principal subspace (over the full vectors), once the gallery reaches that size."""
        if self.kind != "hnsw":
            return False
        stored = self.stored_count()
        return len(self.tombstones) > TOMBSTONE_FRACTION * stored or self.built_for < PROJECTION_MIN_FACES <= stored

    def describe(self) -> dict:
        """Which index serves, for Health (`AutoVectors.describe`'s fields)."""
        return {"index": "approximate" if self.kind == "hnsw" else "exact", "faces": len(self), "recall": None,
                "building": False}

    def write(self, path: Path) -> dict:
        import faiss

        faiss.write_index(self.faiss_index, str(path))
        return {"ids_digest": _ids_digest(self._physical_ids()), "tombstones": sorted(self.tombstones),
                "built_for": self.built_for}

    def read(self, path: Path, saved: dict) -> FaissVectors:
        import faiss

        loaded = faiss.read_index(str(path))
        if self.kind == "hnsw" and not is_graph_index(loaded):
            raise ValueError("it is an HNSW index in an older layout")
        if self.kind != "hnsw" and is_graph_index(loaded):
            raise ValueError("it is an HNSW index, not a flat one")
        fresh = FaissVectors(**self._options())
        fresh.faiss_index = loaded
        if _ids_digest(fresh._physical_ids()) != saved.get("ids_digest"):
            raise ValueError("index.faiss and index.json come from different saves")
        fresh._set_tombstones({int(i) for i in saved.get("tombstones", [])})
        fresh.built_for = int(saved.get("built_for", loaded.ntotal))
        return fresh


def _ids_digest(ids: np.ndarray) -> str:
    """Fingerprint of the face ids an index holds: ties `index.json` to the `index.faiss` it was saved with."""
    return hashlib.sha256(np.sort(np.asarray(ids, dtype=np.int64)).tobytes()).hexdigest()
