"""Vector engines behind one interface (`base.VectorIndex`: add, remove, search, sync).

- `faiss_index.FaceIndex`: FAISS in this process (`flat`, `flat16`, `hnsw`), a cache of the database saved in the
  gallery folder and kept up to date from the database's journal. The embedded default; on PostgreSQL, a
  replica-local copy that follows the journal, which is commit-ordered there too.
- `pgvector_index.PgVectorIndex` (`pgvector`, PostgreSQL only, its default): search runs in SQL over the faces
  table's HNSW index, so replicas hold no copy.
"""

from __future__ import annotations

from facerec.settings import Settings
from facerec.storage import Store
from facerec.vectors.base import VectorIndex
from facerec.vectors.faiss_index import INDEX_KINDS as FAISS_KINDS, FaceIndex
from facerec.vectors.pgvector_index import PgVectorIndex

INDEX_KINDS = (*FAISS_KINDS, PgVectorIndex.kind)


def open_index(settings: Settings, store: Store, model_id: str) -> VectorIndex:
    """The index `settings.resolved_index_kind` names, up to date with the database."""
    kind = settings.resolved_index_kind
    if kind not in INDEX_KINDS:
        raise ValueError(f"index kind must be one of {', '.join(INDEX_KINDS)}")
    if kind == PgVectorIndex.kind:
        return PgVectorIndex(store, ef_search=settings.hnsw_ef_search)
    return FaceIndex.open(settings.home, store, model_id, kind, hnsw_m=settings.hnsw_m,
                          ef_search=settings.hnsw_ef_search)


__all__ = ["INDEX_KINDS", "FaceIndex", "PgVectorIndex", "VectorIndex", "open_index"]
