"""Vector engines behind one interface (`base.VectorIndex`: add, remove, search, sync), one folder each.

- `faiss/`: FAISS in this process (`auto`, `flat`, `flat16`, `hnsw`), a copy of the database saved in the gallery
  folder. The embedded default (`auto`: exact, then a graph built in the background past a size); on PostgreSQL, a replica-local copy. Like any engine that keeps its own copy, it
  implements only `local.LocalVectors` (add, remove, search, its file); following the database's journal,
  rebuilding, saving and refusing another gallery's database are `following.JournalFollowingIndex`'s.
- `pgvector/` (`pgvector`, PostgreSQL only, its default): search runs in SQL over the faces table's HNSW index, so
  replicas hold no copy and there is nothing to follow.

`ENGINES` maps each kind `Settings.index_kind` accepts to the function that opens it; a new engine adds a folder
and one entry.
"""

from __future__ import annotations

from typing import Callable

from facerec.errors import InvalidArgument
from facerec.settings import Settings
from facerec.storage import Store
from facerec.vectors.base import VectorIndex
from facerec.vectors.faiss import KINDS as FAISS_KINDS, open_faiss_index
from facerec.vectors.pgvector import PgVectorIndex


def _faiss(kind: str) -> Callable[[Settings, Store, str], VectorIndex]:
    return lambda settings, store, model_id: open_faiss_index(settings.home, store, model_id, kind,
                                                              hnsw_m=settings.hnsw_m, ef_search=settings.hnsw_ef_search)


ENGINES: dict[str, Callable[[Settings, Store, str], VectorIndex]] = {
    **{kind: _faiss(kind) for kind in ("auto", *FAISS_KINDS)},
    PgVectorIndex.kind: lambda settings, store, _model_id: PgVectorIndex(store, ef_search=settings.hnsw_ef_search),
}
INDEX_KINDS = tuple(ENGINES)


def open_index(settings: Settings, store: Store, model_id: str) -> VectorIndex:
    """The index `settings.resolved_index_kind` names, up to date with the database."""
    kind = settings.resolved_index_kind
    if kind not in ENGINES:
        raise InvalidArgument(f"index kind must be one of {', '.join(INDEX_KINDS)}")
    return ENGINES[kind](settings, store, model_id)


__all__ = ["ENGINES", "INDEX_KINDS", "VectorIndex", "open_index"]
