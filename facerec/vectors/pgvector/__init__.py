"""pgvector: the faces table is the index. Search runs in SQL on the PostgreSQL server, over the HNSW index that
`facerec db upgrade` creates on each face's projection onto the model's principal subspace
(`facerec.storage.backends.projection`): the graph proposes `REFINE_FACTOR` candidates per face asked for and the
same query re-scores them with the whole stored embedding, so the similarities returned are the exact inner
products of the stored vectors (`halfvec`, against the float32 query) and only the candidate set is approximate.
At a million faces proposing two or four per face changed no answer of identify's and cost latency, so the graph
proposes exactly the faces asked for (`benchmarks/pgvector_million.py`).

Nothing is held in this process but a count: a face is searchable the moment its transaction commits, in every
replica, so there is no copy to load, save, replay or rebuild. `hnsw.ef_search` (`Settings.hnsw_ef_search`; at
least the candidates asked for, at most pgvector's 1,000) trades recall for speed as on FAISS's graph:
`benchmarks/pgvector_million.py` measures identify's answers against exact search at a million faces.

`len()` is kept from the journal (one aggregate over its new rows on each `sync`) rather than counted: a count
of a million rows would cost more than the search it sizes the threshold for.
"""

from __future__ import annotations

import threading

import numpy as np
from sqlalchemy import text

from facerec.errors import UnusableFile
from facerec.storage import Store
from facerec.storage.backends.projection import VECTOR_INDEX, projected
from facerec.vectors.base import VectorIndex

MAX_EF_SEARCH = 1000  # pgvector's limit; an index scan returns at most ef_search rows
REFINE_FACTOR = 1  # graph candidates per face asked for, all re-scored: more cost latency, not answers (pgvector_million)
QUERY = "CAST(%(query)s AS vector(512))"
_EF_SEARCH = "facerec.hnsw.ef_search"  # the value a pooled connection's session was last set to (connection.info)


def search_sql(k: int, candidates: int | None) -> str:
    """The `k` faces nearest to `%(query)s` (float32 vector) by their stored embedding: among the `candidates`
    the projected index proposes, or over the whole table when `candidates` is None (an exact scan)."""
    rows = "faces"
    if candidates is not None:
        rows = (f"(SELECT id, embedding FROM faces ORDER BY {projected('embedding')} <#> "
                f"{projected(f'CAST({QUERY} AS halfvec(512))')} LIMIT {candidates}) AS candidates")
    return f"SELECT id, embedding::vector(512) <#> {QUERY} AS distance FROM {rows} ORDER BY distance LIMIT {k}"


class PgVectorIndex(VectorIndex):
    kind = "pgvector"

    def __init__(self, store: Store, ef_search: int = 256) -> None:
        if store.backend.name != "postgresql":
            raise UnusableFile("the pgvector index needs a PostgreSQL gallery database (--db "
                               "postgresql+psycopg://...); use the flat, flat16 or hnsw index with SQLite")
        self.store, self.ef_search = store, ef_search
        self.seq, self._count = 0, 0
        self.lock = threading.Lock()  # threads share one gallery: one of them moves `seq` and the count at a time
        self.rebuild(store)

    def __len__(self) -> int:
        return self._count

    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        """The rows are the index: committed faces are already searchable, so only this replica's count
        follows (`sync` applies the journal's adds and removes the same way, in bulk)."""
        with self.lock:
            self._count += len(ids)

    def remove(self, ids: np.ndarray) -> None:
        with self.lock:
            self._count -= len(ids)

    def sync(self, store: Store) -> None:
        """Follow the journal's adds and removes since `seq` (sequence order is commit order: see
        `facerec.storage.backends.postgresql`), in one aggregate query."""
        with self.lock, store.session() as session:
            head, added, removed = session.execute(text(
                "SELECT max(seq), count(*) FILTER (WHERE op = 'add'), count(*) FILTER (WHERE op = 'remove') "
                "FROM journal WHERE seq > :seq"), {"seq": self.seq}).one()
            if head is not None:
                self._count += int(added) - int(removed)
                self.seq = int(head)

    def rebuild(self, store: Store) -> None:
        """Count the faces and read the journal head in one statement (one snapshot)."""
        with self.lock, store.session() as session:
            head, faces = session.execute(text(
                "SELECT (SELECT coalesce(max(seq), 0) FROM journal), (SELECT count(*) FROM faces)")).one()
            self.seq, self._count = int(head), int(faces)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = max(1, int(k))
        similarities = np.full((len(queries), k), -np.inf, np.float32)
        ids = np.full((len(queries), k), -1, np.int64)
        with self.store.read_engine.connect() as connection:
            if k > MAX_EF_SEARCH:  # more than an index scan can return: an exact scan
                sql = search_sql(k, candidates=None)
            else:  # one round trip per query: no transaction, and the session's ef_search set once
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
                candidates = k * REFINE_FACTOR
                ef_search = min(MAX_EF_SEARCH, max(self.ef_search, candidates))
                if connection.info.get(_EF_SEARCH) != ef_search:
                    connection.exec_driver_sql(f"SET hnsw.ef_search = {ef_search}")
                    connection.info[_EF_SEARCH] = ef_search
                sql = search_sql(k, min(candidates, ef_search))
            for row, query in enumerate(queries):
                found = connection.exec_driver_sql(sql, {"query": query}).all()
                for column, (face_id, distance) in enumerate(found):
                    ids[row, column], similarities[row, column] = face_id, -distance
        width = max(1, min(k, int((ids >= 0).sum(axis=1).max(initial=0))))
        return np.minimum(similarities[:, :width], np.float32(1.0)), ids[:, :width]  # rounding never above 1

    def memory(self) -> dict:
        """{"index_bytes": the HNSW index on disk, "shared_buffers_bytes": PostgreSQL's page cache}: a search walks
        the graph's pages, and when they do not fit in `shared_buffers` each one is copied in from the operating
        system's cache again (several times slower at a million faces: benchmarks/pgvector_choices.py)."""
        with self.store.read_engine.connect() as connection:
            index, buffers = connection.exec_driver_sql(
                f"SELECT coalesce(pg_relation_size(to_regclass('{VECTOR_INDEX}')), 0), "
                "pg_size_bytes(current_setting('shared_buffers'))").one()
        return {"index_bytes": int(index), "shared_buffers_bytes": int(buffers)}

    def reconstruct_all(self) -> tuple[np.ndarray, np.ndarray]:
        """The table's own vectors: there is no other copy."""
        return self.store.faces.embeddings()

