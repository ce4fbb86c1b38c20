"""SQLite, the embedded default: one file per gallery, shared by threads and processes on one machine.

WAL mode with a generous busy timeout, so readers and writers in several threads and processes do not block or
corrupt each other. The write engine opens every transaction with BEGIN IMMEDIATE, so concurrent writers queue
for the lock instead of failing to upgrade a read lock half-way through.

Durability: `synchronous=FULL`, so a commit is on disk (the WAL fsynced) before the call returns; a power cut
cannot take back a commit the index or a user has already seen. The database file (and its -wal/-shm files, which
SQLite creates with the same mode) is readable by its owner only.

Deleting forgets: `secure_delete` overwrites the content of deleted rows in the database file, and a write
connection that deleted anything checkpoints and truncates the WAL when it is handed back, so a deleted person's,
template's, sighting's or stranger's face is not left readable in `gallery.db` or `gallery.db-wal` (#48 row 8:
both crops of a deleted person were still in the -wal file 30 s later).
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url

from facerec.storage.backends.kinds import database_kind
from facerec.storage.schema import NAME_KEY_INDEX
from facerec.storage.backends.base import Backend

DELETED = "facerec_deleted"  # a connection's flag: its transaction deleted rows (the WAL is truncated when it is back)


class SQLiteBackend(Backend):
    name = "sqlite"

    def __init__(self, url: str) -> None:
        self.file = database_file(url)
        if self.file is not None:
            _make_private(self.file)
        super().__init__(url)

    def _engines(self) -> tuple[Engine, Engine]:
        return _engine(self.url, for_writes=True), _engine(self.url)

    def _ensure_name_key_index(self) -> None:
        """Without taking the write lock when the index is already there (the common case)."""
        with self.read_engine.connect() as connection:
            if connection.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?",
                                          (NAME_KEY_INDEX,)).first():
                return
        super()._ensure_name_key_index()


def _engine(url: str, for_writes: bool = False) -> Engine:
    """WAL, foreign keys and a generous busy timeout; the write engine begins with BEGIN IMMEDIATE."""
    engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(connection, _record) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")  # see the module docstring: durable commits
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.execute("PRAGMA secure_delete=ON")  # deleted rows' bytes are overwritten, not left in free pages
        cursor.close()
        if for_writes:
            connection.isolation_level = None  # we emit BEGIN ourselves

    if for_writes:
        @event.listens_for(engine, "begin")
        def _immediate(connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

        @event.listens_for(engine, "before_cursor_execute")
        def _note_deletes(connection, _cursor, statement, *_args) -> None:
            if statement.lstrip()[:6].upper() == "DELETE":
                connection.info[DELETED] = True

        @event.listens_for(engine.pool, "checkin")
        def _truncate_the_wal(dbapi_connection, record) -> None:
            """After a transaction that deleted rows: copy the WAL into the database (whose deleted bytes
            `secure_delete` zeroed) and truncate it, so no earlier page with the deleted face stays in it.
            Best effort: a reader in the middle of a long read can keep some frames until the next one."""
            if record is None or not record.info.pop(DELETED, False) or dbapi_connection is None:
                return
            try:
                dbapi_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            except Exception:  # noqa: BLE001 - a busy or closed database: the next delete's checkpoint catches up
                pass

    return engine


def database_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for in-memory or other databases; UnusableFile for a URL of no engine
    facerec keeps galleries in)."""
    database_kind(url)
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _make_private(path: Path) -> None:
    """Create the database file readable by its owner only (SQLite gives its -wal and -shm files the same mode),
    and take group/other access away from an existing one: it holds faces."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        for member in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            if member.exists() and member.stat().st_mode & 0o077:
                os.chmod(member, 0o600)
    except OSError:  # not ours to change, or no such folder: SQLite reports what it cannot do
        pass
