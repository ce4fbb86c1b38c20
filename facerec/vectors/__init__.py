"""Vector engines behind one interface (`base.VectorIndex`: add, remove, search, sync).

- `faiss_index.FaceIndex`: FAISS in this process (`flat`, `flat16`, `hnsw`), a cache of the database saved in the
  gallery folder and kept up to date from the database's journal. The embedded default.
"""

from __future__ import annotations

from ..settings import Settings
from ..storage import Store
from .base import VectorIndex
from .faiss_index import INDEX_KINDS as FAISS_KINDS, FaceIndex

INDEX_KINDS = FAISS_KINDS


def open_index(settings: Settings, store: Store, model_id: str) -> VectorIndex:
    """The index `settings.index_kind` names, up to date with the database."""
    return FaceIndex.open(settings.home, store, model_id, settings.index_kind, hnsw_m=settings.hnsw_m,
                          ef_search=settings.hnsw_ef_search)


__all__ = ["INDEX_KINDS", "FaceIndex", "VectorIndex", "open_index"]
