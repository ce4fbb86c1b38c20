"""The gallery's database (SQLAlchemy 2.x): the source of truth for identities and their faces.

Tables: `identities`, `faces` (embedding, model id, photo sha256, box, landmarks, optional JPEG crop) and
`journal`, one row per face added or removed, written in the same transaction. The journal's last sequence
number fingerprints the database state: an index saved at sequence s is brought up to date by replaying the
rows after s, so a process never trusts an index blindly. SQLite runs in WAL mode with a busy timeout, so
readers and writers in several threads and processes do not block or corrupt each other.

Durability: `synchronous=FULL`, so a commit is on disk (the WAL fsynced) before the call returns; a power cut
cannot take back a commit the index or a user has already seen. Journal sequence numbers come from AUTOINCREMENT
and are never handed out twice. The database file (and its -wal/-shm files, which SQLite creates with the same
mode) is readable by its owner only.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sqlalchemy import (
    JSON, DateTime, ForeignKey, Integer, LargeBinary, String, Text, create_engine, event, func, select,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, sessionmaker

from .errors import UnusableFile

# Finds a name that differs only in the letter case of A-Z (`facerec.names.name_key`) without a table scan.
NAME_KEY_INDEX = "ix_identities_name_lower"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class Identity(Base):
    __tablename__ = "identities"
    __table_args__ = {"sqlite_autoincrement": True}  # ids are never reused, so a journal entry names one face
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, index=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    faces: Mapped[list["Face"]] = relationship(back_populates="identity", cascade="all, delete-orphan",
                                               order_by="Face.id")


class Face(Base):
    __tablename__ = "faces"
    __table_args__ = {"sqlite_autoincrement": True}
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    identity_id: Mapped[int] = mapped_column(ForeignKey("identities.id", ondelete="CASCADE"), index=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    model_id: Mapped[str] = mapped_column(String(200), index=True)
    photo_sha256: Mapped[str] = mapped_column(String(64), index=True)
    box: Mapped[list] = mapped_column(JSON)
    landmarks: Mapped[list] = mapped_column(JSON)
    crop_jpeg: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    identity: Mapped[Identity] = relationship(back_populates="faces")

    @property
    def vector(self) -> np.ndarray:
        return np.frombuffer(self.embedding, dtype=np.float32)


class JournalEntry(Base):
    __tablename__ = "journal"
    __table_args__ = {"sqlite_autoincrement": True}  # a sequence number is never reused, even after a delete
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    op: Mapped[str] = mapped_column(String(8))  # "add" or "remove"
    face_id: Mapped[int] = mapped_column(Integer)


class Setting(Base):
    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


def make_engine(url: str, for_writes: bool = False) -> Engine:
    """Engine for any SQLAlchemy URL. SQLite gets WAL, foreign keys and a generous busy timeout; the write
    engine opens every transaction with BEGIN IMMEDIATE, so concurrent writers queue for the lock instead of
    failing to upgrade a read lock half-way through."""
    is_sqlite = url.startswith("sqlite")
    engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False} if is_sqlite else {})
    if is_sqlite:
        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(connection, _record) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")  # see the module docstring: durable commits
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()
            if for_writes:
                connection.isolation_level = None  # we emit BEGIN ourselves

        if for_writes:
            @event.listens_for(engine, "begin")
            def _immediate(connection) -> None:
                connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


class Store:
    """Thin access layer over the tables. `writing()` is one write transaction; `reading()` a read session."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = database_file(url)
        if self.path is not None:
            _make_private(self.path)
        self.write_engine = make_engine(url, for_writes=True)
        self.read_engine = make_engine(url) if url.startswith("sqlite") else self.write_engine
        try:
            Base.metadata.create_all(self.write_engine)
            self._ensure_name_key_index()
        except SQLAlchemyError as error:
            self.dispose()
            where = self.path or make_url(url).render_as_string(hide_password=True)
            reason = " ".join(str(getattr(error, "orig", None) or error).split())[:200]
            raise UnusableFile(f"cannot open the gallery database {where} ({reason}); restore it from a backup. "
                               "Nothing was changed.") from None
        self._writes = sessionmaker(self.write_engine, expire_on_commit=False)
        self._reads = sessionmaker(self.read_engine, expire_on_commit=False)

    def _ensure_name_key_index(self) -> None:
        """Galleries made before the index existed get it once (create_all adds no index to an existing table)."""
        with self.read_engine.connect() as connection:
            if self.url.startswith("sqlite") and connection.exec_driver_sql(
                    "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (NAME_KEY_INDEX,)).first():
                return
        with self.write_engine.begin() as connection:
            connection.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {NAME_KEY_INDEX} ON identities (lower(name))")

    def writing(self) -> Session:
        """A session for one write transaction: use as `with store.writing() as s, s.begin(): ...`."""
        return self._writes()

    def session(self) -> Session:
        """A session for reads."""
        return self._reads()

    def dispose(self) -> None:
        self.write_engine.dispose()
        self.read_engine.dispose()

    def journal_head(self, session: Session | None = None) -> int:
        """Sequence number of the latest journal row (0 for an empty gallery): the database fingerprint."""
        if session is None:
            with self.session() as session:
                return self.journal_head(session)
        return int(session.scalar(select(func.coalesce(func.max(JournalEntry.seq), 0))))

    def journal_entry(self, seq: int) -> tuple[str, int] | None:
        """(op, face id) of the journal row `seq`, or None when there is none."""
        with self.session() as session:
            row = session.execute(select(JournalEntry.op, JournalEntry.face_id).where(JournalEntry.seq == seq)).first()
            return (str(row[0]), int(row[1])) if row else None

    def journal_since(self, seq: int) -> list[tuple[int, str, int]]:
        with self.session() as session:
            rows = session.execute(
                select(JournalEntry.seq, JournalEntry.op, JournalEntry.face_id)
                .where(JournalEntry.seq > seq).order_by(JournalEntry.seq)
            )
            return [(int(s), str(o), int(f)) for s, o, f in rows]

    def embeddings(self, face_ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(face ids [N] int64, embeddings [N, D] float32) of all faces, or of the given ids."""
        with self.session() as session:
            query = select(Face.id, Face.embedding).order_by(Face.id)
            if face_ids is None:
                rows = session.execute(query).all()
            else:
                rows = [row for chunk in chunked(face_ids) for row in session.execute(query.where(Face.id.in_(chunk)))]
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, 512), np.float32)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        return ids, np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])

    def face_labels(self, face_ids: list[int] | None = None) -> dict[int, tuple[int, str]]:
        """{face id: (identity id, name)} for every face, or only for the given face ids."""
        query = select(Face.id, Identity.id, Identity.name).join(Identity)
        with self.session() as session:
            if face_ids is None:
                rows = list(session.execute(query))
            else:
                rows = [r for chunk in chunked(face_ids) for r in session.execute(query.where(Face.id.in_(chunk)))]
            return {int(f): (int(i), str(n)) for f, i, n in rows}

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        with self.session() as session:
            row = session.get(Setting, key)
            return row.value if row else default

    def set_setting(self, key: str, value) -> None:
        with self.writing() as session, session.begin():
            session.merge(Setting(key=key, value=value if isinstance(value, str) else json.dumps(value)))

    def counts(self) -> tuple[int, int]:
        with self.session() as session:
            return (int(session.scalar(select(func.count(Identity.id)))),
                    int(session.scalar(select(func.count(Face.id)))))


def chunked(ids: list, size: int = 500):
    """Split long id lists: SQLite limits the number of bound parameters in one statement."""
    ids = list(ids)
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def database_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for in-memory or other databases)."""
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
