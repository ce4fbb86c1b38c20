"""FAISS search over the gallery's unit-length embeddings, keyed by the database's face ids.

- `flat` (default): `IndexIDMap2(IndexFlatIP)`, exact inner-product (= cosine) search.
- `flat16`: the same exhaustive search over vectors stored as float16: half the memory traffic, so about twice
  as fast on large galleries, with similarities off by at most ~1e-3.
- `hnsw`: `IndexHNSWFlat` (inner product) for large galleries; approximate (its recall is measured in
  `benchmarks/scale.py`). HNSW cannot delete, so a removal rebuilds it from the database.

The index is a cache of the database. It is saved as `index.faiss` with `index.json` recording the journal
sequence and model it reflects; `FaceIndex.open` replays the journal after that point, and rebuilds from the
database when the file is missing, unreadable, for another model, or disagrees with the face count.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from .store import Store

INDEX_FILE, INDEX_META_FILE = "index.faiss", "index.json"
INDEX_KINDS = ("flat", "flat16", "hnsw")


class FaceIndex:
    def __init__(self, kind: str = "flat", dimension: int = 512, hnsw_m: int = 32, ef_search: int = 64) -> None:
        if kind not in INDEX_KINDS:
            raise ValueError(f"index kind must be one of {', '.join(INDEX_KINDS)}")
        self.kind, self.dimension, self.hnsw_m, self.ef_search = kind, dimension, hnsw_m, ef_search
        self.seq = 0  # journal sequence this index reflects
        self.lock = threading.RLock()
        self._index = self._empty()

    def _empty(self):
        import faiss

        if self.kind == "flat":
            return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dimension))
        if self.kind == "flat16":
            return faiss.IndexIDMap2(faiss.IndexScalarQuantizer(
                self.dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT))
        hnsw = faiss.IndexHNSWFlat(self.dimension, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = 80
        hnsw.hnsw.efSearch = self.ef_search
        return faiss.IndexIDMap2(hnsw)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        if len(ids):
            with self.lock:
                self._index.add_with_ids(np.ascontiguousarray(embeddings, dtype=np.float32),
                                         np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray, store: Store) -> None:
        """Drop these face ids (HNSW cannot delete: it is rebuilt from the database instead)."""
        if not len(ids):
            return
        with self.lock:
            if self.kind != "hnsw":
                self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))
            else:
                self.rebuild(store)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(similarities [Q, k'] float32, face ids [Q, k'] int64) with k' = min(k, faces held), at least 1;
        ids are -1 where the index is empty."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        with self.lock:
            k = max(1, min(k, len(self)))
            if self.kind == "hnsw":
                import faiss

                faiss.downcast_index(self._index.index).hnsw.efSearch = max(self.ef_search, k)
            return self._index.search(queries, k)

    def reconstruct_all(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, embeddings) currently held."""
        import faiss

        with self.lock:
            ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
            if not len(ids):
                return ids, np.zeros((0, self.dimension), np.float32)
            return ids, np.stack([self._index.reconstruct(int(i)) for i in ids])

    def rebuild(self, store: Store) -> None:
        """Rebuild from the database, the source of truth. The new index is filled before it is swapped in,
        so a concurrent reader never sees a half-empty index."""
        with self.lock:
            seq = store.journal_head()
            ids, embeddings = store.embeddings()
            fresh = self._empty()
            if len(ids):
                fresh.add_with_ids(np.ascontiguousarray(embeddings, dtype=np.float32),
                                   np.ascontiguousarray(ids, dtype=np.int64))
            self._index, self.seq = fresh, seq

    def catch_up(self, store: Store) -> None:
        """Apply every database change made since this index's sequence (by this or any other process)."""
        with self.lock:
            changes = store.journal_since(self.seq)
            if not changes:
                return
            # Whatever happened to a face id since (added, removed, re-embedded, or its id reused after a
            # delete), the database now says what it is: drop the held vector and load the current one.
            touched = sorted({face_id for _seq, _op, face_id in changes})
            held = set(self.reconstruct_ids().tolist())
            stale = np.array([f for f in touched if f in held], np.int64)
            if self.kind == "hnsw" and len(stale):
                self.rebuild(store)  # HNSW cannot delete; the rebuilt index already holds every change
            else:
                self.remove(stale, store)
                ids, embeddings = store.embeddings(touched)
                self.add(ids, embeddings)
            self.seq = max(self.seq, changes[-1][0])
            if len(self) != store.counts()[1]:
                self.rebuild(store)

    def reconstruct_ids(self) -> np.ndarray:
        import faiss

        with self.lock:
            return faiss.vector_to_array(self._index.id_map).astype(np.int64)

    def save(self, folder: Path, model_id: str) -> None:
        """Write atomically (temp file + rename), so a crash never leaves a half-written index behind."""
        import faiss

        folder.mkdir(parents=True, exist_ok=True)
        with self.lock:
            tmp = folder / f".{INDEX_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
            faiss.write_index(self._index, str(tmp))
            os.replace(tmp, folder / INDEX_FILE)
            meta = {"seq": self.seq, "model_id": model_id, "kind": self.kind, "count": len(self),
                    "ids_digest": _ids_digest(self.reconstruct_ids())}
            tmp_meta = folder / f".{INDEX_META_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp_meta.write_text(json.dumps(meta))
            os.replace(tmp_meta, folder / INDEX_META_FILE)

    @classmethod
    def open(cls, folder: Path, store: Store, model_id: str, kind: str = "flat", **options) -> "FaceIndex":
        """Load the saved index if it is for this model and kind and can be replayed to the database's state;
        otherwise rebuild it from the database."""
        import faiss

        index = cls(kind, **options)
        try:
            meta = json.loads((folder / INDEX_META_FILE).read_text())
            if meta.get("model_id") != model_id or meta.get("kind") != kind:
                raise ValueError("index made for another model or kind")
            loaded = faiss.read_index(str(folder / INDEX_FILE))
            if loaded.ntotal != meta.get("count") or int(meta["seq"]) > store.journal_head():
                raise ValueError("index does not match its metadata or the database")
            index._index, index.seq = loaded, int(meta["seq"])
            if _ids_digest(index.reconstruct_ids()) != meta.get("ids_digest"):
                raise ValueError("index file and metadata come from different saves")
            index.catch_up(store)
        except Exception:  # missing, unreadable, stale beyond repair: the database decides
            index.rebuild(store)
        return index


def _ids_digest(ids: np.ndarray) -> str:
    """Fingerprint of the face ids an index holds: ties `index.json` to the `index.faiss` it was saved with."""
    import hashlib

    return hashlib.sha256(np.sort(np.asarray(ids, dtype=np.int64)).tobytes()).hexdigest()
