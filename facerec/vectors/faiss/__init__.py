"""FAISS in this process: the embedded default engine, a local copy of the database's embeddings.

- `auto` (the default): `flat` while exact search is fast, then `hnsw`, built in the background and swapped in
  (`auto.py`); Health says which serves and the recall it measured.
- `flat`: `IndexIDMap2(IndexFlatIP)`, exact inner-product (= cosine) search. FAISS scans the database
  with one thread when there are fewer than 20 queries (one photo's faces), so for large galleries the scan is
  done as one BLAS matrix product over FAISS's own vector storage, which uses every core: same vectors, same
  exact scores, about twice as fast on two cores (`benchmarks/scale.py`).
- `flat16`: the same exhaustive search over vectors stored as float16: half the memory, similarities off by at
  most ~1e-3.
- `hnsw`: approximate, for large galleries: an HNSW graph over the gallery's principal subspace whose candidates
  are re-scored exactly (`facerec.vectors.faiss.hnsw`; recall measured in `benchmarks/scale.py`). A graph cannot
  delete, and rebuilding one of a million faces takes minutes, so a removed face becomes a tombstone: still in the
  graph (searches walk through it), never returned (a FAISS id selector filters it out), saved with the index.
  Once tombstones pass `TOMBSTONE_FRACTION` of the graph a rebuild is asked for.

Following the database, saving and opening are `facerec.vectors.following`'s, as for any local engine.
"""

from __future__ import annotations

from pathlib import Path

from facerec.vectors.faiss.auto import AutoVectors
from facerec.vectors.faiss.vectors import (
    FAISS_BLAS_QUERIES, KINDS, PARALLEL_SCAN_MIN, TOMBSTONE_FRACTION, FaissVectors,
)
from facerec.vectors.local import LocalVectors


def faiss_engine(kind: str, **options) -> LocalVectors:
    """An empty FAISS engine of `kind`: one of `KINDS`, or "auto"."""
    if kind == "auto":
        return AutoVectors(**options)
    return FaissVectors(kind, **options)


def FaceIndex(kind: str = "flat", dimension: int = 512, hnsw_m: int = 32, ef_search: int = 256):  # noqa: N802
    """A FAISS copy of the gallery's embeddings that follows the database (empty until synced or filled)."""
    from facerec.vectors.following import JournalFollowingIndex

    return JournalFollowingIndex(faiss_engine(kind, dimension=dimension, hnsw_m=hnsw_m, ef_search=ef_search))


def open_faiss_index(folder: Path, store, model_id: str, kind: str = "flat", **options):
    """The FAISS copy saved in `folder`, opened and brought up to date (`JournalFollowingIndex.open`)."""
    from facerec.vectors.following import JournalFollowingIndex

    return JournalFollowingIndex.open(faiss_engine(kind, **options), folder, store, model_id)


__all__ = ["FAISS_BLAS_QUERIES", "KINDS", "PARALLEL_SCAN_MIN", "TOMBSTONE_FRACTION", "AutoVectors", "FaceIndex",
           "FaissVectors", "faiss_engine", "open_faiss_index"]
