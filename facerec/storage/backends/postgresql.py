"""PostgreSQL with pgvector: one gallery shared by many app replicas, its vectors searched in SQL.

URL: `postgresql+psycopg://user:password@host/database` (the `postgres` extra: psycopg 3 and pgvector).

- **Writers queue for one lock.** Every write transaction begins by taking a transaction-scoped advisory lock
  (`pg_advisory_xact_lock`), held until it commits or rolls back (also when its process is killed: the server
  ends the session). So, as on SQLite, the checks a write repeats inside its transaction (name taken, same photo,
  look-alike) see every earlier commit, and no other write commits in between. It also makes the journal a
  commit-ordered change feed: a sequence number is drawn only while holding the lock, so sequence order is
  commit order, and a replica that has read the journal up to s has seen every change up to s. (Without the lock,
  PostgreSQL hands out sequence numbers at insert time and transactions commit in any order: a replica that read
  seq 11 would never apply a seq 10 committed after it.) Reads take no lock.
- **Schema by one command.** `facerec db upgrade --db URL` (`upgrade`) creates the pgvector extension, the tables,
  the indexes (the faces' search index: HNSW over each embedding's projection onto the model's principal
  subspace, `facerec.storage.backends.projection`) and records `SCHEMA_VERSION`; it is idempotent and takes the
  write lock, so two at once are safe. Opening a gallery checks the version and never changes the schema itself:
  app replicas can run as a role without the rights to create extensions or tables.
- **Embeddings as `halfvec(512)`**: 16-bit floats, half the disk and cache of `vector(512)` per face; similarities
  against them are within ~1e-3 of the float32 ones and identify's answers at a million faces are unchanged
  (`benchmarks/pgvector_million.py`). Python sends and receives float32 arrays either way.
- Commits are durable by PostgreSQL's defaults (`synchronous_commit=on`).
"""

from __future__ import annotations

import struct

import numpy as np
from sqlalchemy import create_engine, event, func, literal_column, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from facerec.errors import UnusableFile
from facerec.storage.schema import ADDED_COLUMNS, NAME_KEY_INDEX, Base
from facerec.storage.vector_text import vector_from_db
from facerec.storage.backends.base import Backend
from facerec.storage.backends.projection import OLD_VECTOR_INDEX, Projection, install

SCHEMA_VERSION = 9  # 2: the sightings table; 3: the API keys table (was created at run time before);
#                    4: where each face came from, and the sightings' aligned faces (`schema.ADDED_COLUMNS`);
#                    5: the strangers table (suggested people, opt-in); 6: each face's cohort statistics and
#                    each sighting's score; 7: the replaced_faces table (templates kept for an undo);
#                    8: faces.embedding as halfvec(512), searched through its projection (`projection`);
#                    9: the negative_faces table ("not this person")
SCHEMA_VERSION_KEY = "schema_version"
WRITE_LOCK = 0x66616365  # the advisory lock key every write transaction takes ("face")
SIGHTINGS_LOCK = 0x73696768  # the one sightings' writes take instead ("sigh"): they queue only among themselves
_UPPER, _LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"


def register_vector_adapters(connection) -> None:
    """Let psycopg send NumPy float32 arrays as pgvector's binary `vector` (a bulk load's cost is otherwise
    printing floats as text) and read `vector` columns as NumPy arrays. Nothing to do on a database without the
    extension yet (`upgrade` creates it; a gallery does not open before)."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    infos = {name: TypeInfo.fetch(connection, name) for name in ("vector", "halfvec")}
    if not connection.autocommit:
        connection.rollback()  # hand the connection over idle, as the pool expects it
    if infos["vector"] is None:
        return

    class VectorDumper(Dumper):
        format, oid = Format.BINARY, infos["vector"].oid

        def dump(self, obj):
            vector = np.asarray(obj, dtype=">f4")
            return struct.pack(">HH", len(vector), 0) + vector.tobytes()

    class VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return np.frombuffer(bytes(data)[4:], dtype=">f4").astype(np.float32)

    class HalfVectorLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return np.frombuffer(bytes(data)[4:], dtype=">f2").astype(np.float32)

    class TextLoader(Loader):
        def load(self, data):
            return vector_from_db(bytes(data))

    connection.adapters.register_dumper(np.ndarray, VectorDumper)
    connection.adapters.register_loader(infos["vector"].oid, TextLoader)
    connection.adapters.register_loader(infos["vector"].oid, VectorLoader)
    if infos["halfvec"] is not None:
        connection.adapters.register_loader(infos["halfvec"].oid, TextLoader)
        connection.adapters.register_loader(infos["halfvec"].oid, HalfVectorLoader)


class PostgreSQLBackend(Backend):
    name = "postgresql"
    embedding_dtype = np.float16  # halfvec(512)
    advice = "check the URL, that the server is running and that this role may connect"

    def _engines(self) -> tuple[Engine, Engine]:
        try:
            import pgvector.sqlalchemy  # noqa: F401 - the vector column type
            import psycopg  # noqa: F401
        except ImportError:
            raise UnusableFile("a PostgreSQL gallery needs the 'postgres' extra: pip install 'facerec[postgres]'") \
                from None
        # Writes check a pooled connection is alive first (a server restart costs no failed enrollment); reads do
        # not spend that round trip: after a restart one read fails and the pool is renewed.
        writes, reads = create_engine(self.url, pool_pre_ping=True), create_engine(self.url)
        for engine in (writes, reads):
            event.listen(engine, "connect", lambda connection, _record: register_vector_adapters(connection))

        @event.listens_for(writes, "begin")
        def _queue(connection) -> None:
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")

        return writes, reads

    def _sightings_engine(self) -> Engine:
        """Sightings take their own advisory lock, not the gallery's: identify (which keeps each named face as a
        sighting) no longer waits for enrollments in every replica or for a whole reindex. They touch no journal
        and no face, so the gallery's ordering guarantees do not need them; their own lock keeps the memory's
        trimming to its capacity one writer at a time."""
        sightings = create_engine(self.url, pool_pre_ping=True)
        event.listen(sightings, "connect", lambda connection, _record: register_vector_adapters(connection))

        @event.listens_for(sightings, "begin")
        def _queue(connection) -> None:
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SIGHTINGS_LOCK})")

        return sightings

    def open(self) -> None:
        """Check that `upgrade` made this database's schema (it is never changed on open)."""
        advice = f"run `facerec db upgrade --db {self.describe()}` first"
        try:
            with self.read_engine.connect() as connection:
                found = connection.execute(text("SELECT value FROM settings WHERE key = :key"),
                                           {"key": SCHEMA_VERSION_KEY}).scalar()
        except SQLAlchemyError as error:
            if "settings" in str(error) and "does not exist" in str(error):
                raise UnusableFile(f"the gallery database {self.describe()} has no facerec tables: {advice}. "
                                   "Nothing was changed.") from None
            raise
        if found is None or int(found) < SCHEMA_VERSION:
            raise UnusableFile(f"the gallery database {self.describe()} has schema version {found or 'none'}, this "
                               f"facerec needs {SCHEMA_VERSION}: {advice}. Nothing was changed.")
        if int(found) > SCHEMA_VERSION:
            raise UnusableFile(f"the gallery database {self.describe()} has schema version {found}, made by a newer "
                               f"facerec (this one knows {SCHEMA_VERSION}); upgrade facerec. Nothing was changed.")

    def upgrade(self, projection: Projection | None = None) -> list[str]:
        """Create what is missing, in one transaction under the write lock; returns what it did. `projection`: the
        model's (`facerec.vectors.pgvector.projection`), needed to create the search index or fit it again."""
        done = []
        with self.write_engine.begin() as connection:
            if not connection.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).first():
                connection.exec_driver_sql("CREATE EXTENSION vector")
                done.append("created the pgvector extension")
            missing = [t.name for t in Base.metadata.sorted_tables
                       if not connection.dialect.has_table(connection, t.name)]
            Base.metadata.create_all(connection)
            done += [f"created table {name}" for name in missing]
            for table, column, types in ADDED_COLUMNS:
                # facerec's own schema only: a same-named table in another schema says nothing about ours (#48)
                if not connection.execute(text("SELECT 1 FROM information_schema.columns WHERE table_name = :table "
                                               "AND column_name = :column AND table_schema = current_schema()"),
                                          {"table": table, "column": column}).first():
                    connection.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {types['postgresql']}")
                    done.append(f"added column {table}.{column}")
            done += _embeddings_as_halfvec(connection)
            if not connection.execute(text("SELECT 1 FROM pg_indexes WHERE indexname = :name "
                                           "AND schemaname = current_schema()"), {"name": NAME_KEY_INDEX}).first():
                connection.exec_driver_sql(f"CREATE INDEX {NAME_KEY_INDEX} ON identities "
                                           f"({self._name_key_sql('name')})")
                done.append(f"created index {NAME_KEY_INDEX}")
            done += install(connection, projection)
            found = connection.execute(text("SELECT value FROM settings WHERE key = :key"),
                                       {"key": SCHEMA_VERSION_KEY}).scalar()
            if found is None or int(found) < SCHEMA_VERSION:
                connection.execute(text("INSERT INTO settings (key, value) VALUES (:key, :value) ON CONFLICT (key) "
                                        "DO UPDATE SET value = excluded.value"),
                                   {"key": SCHEMA_VERSION_KEY, "value": str(SCHEMA_VERSION)})
                done.append(f"schema version {found or 'none'} -> {SCHEMA_VERSION}")
        return done

    def name_key(self, column):
        """A-Z lower-cased, nothing else (PostgreSQL's lower() would fold other letters too, by locale)."""
        return func.translate(column, literal_column(f"'{_UPPER}'"), literal_column(f"'{_LOWER}'"))

    @staticmethod
    def _name_key_sql(column: str) -> str:
        return f"translate({column}, '{_UPPER}', '{_LOWER}')"


def _embeddings_as_halfvec(connection) -> list[str]:
    """Schema 7 -> 8: `faces.embedding` from `vector(512)` to `halfvec(512)`; its old index (over the whole
    vector) goes first, since the type change would otherwise rebuild it only to be dropped."""
    kind = connection.exec_driver_sql("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                                      "WHERE attrelid = 'faces'::regclass AND attname = 'embedding'").scalar()
    if kind == "halfvec(512)":
        return []
    connection.exec_driver_sql(f"DROP INDEX IF EXISTS {OLD_VECTOR_INDEX}")
    connection.exec_driver_sql("ALTER TABLE faces ALTER COLUMN embedding TYPE halfvec(512) "
                               "USING embedding::halfvec(512)")
    return [f"faces.embedding {kind} -> halfvec(512)"]
