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
  the indexes (the HNSW index on `faces.embedding` with `vector_ip_ops`: inner product, which is the cosine for
  the gallery's unit vectors) and records `SCHEMA_VERSION`; it is idempotent and takes the write lock, so two
  at once are safe. Opening a gallery checks the version and never changes the schema itself: app replicas can
  run as a role without the rights to create extensions or tables.
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

SCHEMA_VERSION = 7  # 2: the sightings table; 3: the API keys table (was created at run time before);
#                    4: where each face came from, and the sightings' aligned faces (`schema.ADDED_COLUMNS`);
#                    5: the strangers table (suggested people, opt-in); 6: each face's cohort statistics and
#                    each sighting's score; 7: the replaced_faces table (templates kept for an undo)
SCHEMA_VERSION_KEY = "schema_version"
WRITE_LOCK = 0x66616365  # the advisory lock key every write transaction takes ("face")
SIGHTINGS_LOCK = 0x73696768  # the one sightings' writes take instead ("sigh"): they queue only among themselves
VECTOR_INDEX = "ix_faces_embedding_hnsw"
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64  # pgvector's defaults, measured in benchmarks/scale.py
_UPPER, _LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"


def register_vector_adapters(connection) -> None:
    """Let psycopg send NumPy float32 arrays as pgvector's binary `vector` (a bulk load's cost is otherwise
    printing floats as text) and read `vector` columns as NumPy arrays. Nothing to do on a database without the
    extension yet (`upgrade` creates it; a gallery does not open before)."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(connection, "vector")
    if not connection.autocommit:
        connection.rollback()  # hand the connection over idle, as the pool expects it
    if info is None:
        return

    class VectorDumper(Dumper):
        format, oid = Format.BINARY, info.oid

        def dump(self, obj):
            vector = np.asarray(obj, dtype=">f4")
            return struct.pack(">HH", len(vector), 0) + vector.tobytes()

    class VectorLoader(Loader):
        def load(self, data):
            return vector_from_db(bytes(data))

    connection.adapters.register_dumper(np.ndarray, VectorDumper)
    connection.adapters.register_loader(info.oid, VectorLoader)


def vector_index_ddl() -> str:
    """The HNSW index over the faces' embeddings (also what a bulk load that dropped it builds again)."""
    return (f"CREATE INDEX {VECTOR_INDEX} ON faces USING hnsw (embedding vector_ip_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})")


class PostgreSQLBackend(Backend):
    name = "postgresql"
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

    def upgrade(self) -> list[str]:
        """Create what is missing, in one transaction under the write lock; returns what it did."""
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
            if connection.execute(text("SELECT attstorage FROM pg_attribute WHERE attrelid = 'faces'::regclass "
                                       "AND attname = 'embedding'")).scalar() != "p":
                # A 512-float vector is 2 KB, just over PostgreSQL's TOAST threshold: kept inline, not in a side
                # table every read of it would have to follow.
                connection.exec_driver_sql("ALTER TABLE faces ALTER COLUMN embedding SET STORAGE PLAIN")
                done.append("faces.embedding stored inline")
            for name, ddl in ((NAME_KEY_INDEX, f"CREATE INDEX {NAME_KEY_INDEX} ON identities "
                                               f"({self._name_key_sql('name')})"),
                              (VECTOR_INDEX, vector_index_ddl())):
                if not connection.execute(text("SELECT 1 FROM pg_indexes WHERE indexname = :name "
                                               "AND schemaname = current_schema()"),
                                          {"name": name}).first():
                    connection.exec_driver_sql(ddl)
                    done.append(f"created index {name}")
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

