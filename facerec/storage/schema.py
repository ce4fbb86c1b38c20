"""The gallery's tables (SQLAlchemy 2.x declarative): the source of truth for identities and their faces.

- `identities`: one row per person (name unique, optional note).
- `faces`: embedding, model id, photo sha256, box, landmarks, optional JPEG crop, cohort statistics; belongs to
  one identity.
- `journal`: one row per face added or removed, written in the same transaction as the change. Its sequence
  numbers follow commit order (SQLite serialises writers, and the PostgreSQL backend makes its writers queue for
  one lock), so a reader that has seen sequence s has seen every change up to s: a vector index saved or last
  caught up at s is brought up to date by replaying the rows after s. The last one fingerprints the database.
- `sightings`: the recent-identifications memory (`facerec.gallery.sightings`): the embedding of a face that was
  identified as (or confirmed or corrected to) an enrolled person, when, how, and how similar it was to that
  person's enrolled faces. No photo. A bounded FIFO: the oldest rows go first. Deleted with their person.
- `replaced_faces`: templates a learned one took the place of (`facerec.gallery.templates`), out of every search,
  kept only so that undoing that learned face brings them back: at most one per learned template. Deleted with
  their person.
- `negative_faces`: faces an admin said are not a given person ("not this person"), each kept as that person's
  negative example (`facerec.gallery.negatives`): embedding, cohort statistics, optional crop. Bounded per person,
  deleted with their person, never searched.
- `strangers`: faces identify found no enrolled person for, kept only when the operator turned suggestions on
  (`facerec.gallery.strangers`): embedding, aligned crop, which photo (its sha256), when, and the group of faces
  of one unknown person it was put in. Bounded in count and age; forgotten when the option is off.
- `settings`: key/value pairs.

Ids are never reused (AUTOINCREMENT on SQLite, sequences on PostgreSQL), so a journal row names one face forever.
An embedding is float32 bytes on SQLite and a pgvector `halfvec(512)` on PostgreSQL (`Embedding`), so the server
can search it; Python sees bytes on both.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from facerec.storage.vector_text import vector_from_db

EMBEDDING_DIMENSION = 512  # the shipped model's; a PostgreSQL column (and its HNSW index) is made for one size
# Finds a name that differs only in the letter case of A-Z (`facerec.names.name_key`) without a table scan.
NAME_KEY_INDEX = "ix_identities_name_lower"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(moment: datetime | None) -> datetime | None:
    """A stored time as aware UTC: times are written in UTC, and SQLite hands them back without their zone."""
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


class Embedding(TypeDecorator):
    """A float32 embedding as bytes in Python: a BLOB on SQLite, `halfvec(512)` on PostgreSQL (pgvector: 16-bit
    floats, half the disk per face), where the driver moves it as a NumPy array (float32 out, float16 kept:
    `facerec.storage.backends.postgresql` registers the conversions)."""

    impl = LargeBinary
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name == "postgresql":
            from pgvector.sqlalchemy import HALFVEC

            return dialect.type_descriptor(HALFVEC(EMBEDDING_DIMENSION))
        return dialect.type_descriptor(LargeBinary())

    def bind_processor(self, dialect):
        if dialect.name != "postgresql":
            return super().bind_processor(dialect)
        return lambda value: None if value is None else np.frombuffer(value, dtype=np.float32)

    def result_processor(self, dialect, coltype):
        if dialect.name != "postgresql":
            return super().result_processor(dialect, coltype)
        return lambda value: None if value is None else vector_from_db(value).tobytes()


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


ORIGINS = ("enrolled", "added", "learned")
# Columns added to tables that galleries made before them already have (create_all adds no column): each backend's
# upgrade adds the missing ones, as (table, column, SQL type and default per dialect).
ADDED_COLUMNS = [
    ("faces", "origin", {"sqlite": "VARCHAR(16) NOT NULL DEFAULT 'enrolled'",
                         "postgresql": "VARCHAR(16) NOT NULL DEFAULT 'enrolled'"}),
    ("faces", "learned_from", {"sqlite": "INTEGER", "postgresql": "INTEGER"}),
    ("faces", "learned_by", {"sqlite": "VARCHAR(64)", "postgresql": "VARCHAR(64)"}),
    ("sightings", "crop_jpeg", {"sqlite": "BLOB", "postgresql": "BYTEA"}),
    ("faces", "cohort_mean", {"sqlite": "FLOAT", "postgresql": "DOUBLE PRECISION"}),
    ("sightings", "score", {"sqlite": "FLOAT", "postgresql": "DOUBLE PRECISION"}),
    ("faces", "cohort_sd", {"sqlite": "FLOAT", "postgresql": "DOUBLE PRECISION"}),
    ("sightings", "box", {"sqlite": "JSON", "postgresql": "JSON"}),
    ("sightings", "landmarks", {"sqlite": "JSON", "postgresql": "JSON"}),
]


class Face(Base):
    __tablename__ = "faces"
    __table_args__ = {"sqlite_autoincrement": True}
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    identity_id: Mapped[int] = mapped_column(ForeignKey("identities.id", ondelete="CASCADE"), index=True)
    embedding: Mapped[bytes] = mapped_column(Embedding)
    model_id: Mapped[str] = mapped_column(String(200), index=True)
    photo_sha256: Mapped[str] = mapped_column(String(64), index=True)
    box: Mapped[list] = mapped_column(JSON)
    landmarks: Mapped[list] = mapped_column(JSON)
    crop_jpeg: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Where the face came from (`ORIGINS`): the enrollment photo, a photo added, or a confirmed sighting learned as
    # a template (which one, and who confirmed it), so a template can be listed, removed and undone.
    origin: Mapped[str] = mapped_column(String(16), default="enrolled", server_default="enrolled")
    learned_from: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the sighting's id
    learned_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # "admin password", "API key 3", ...
    # The face's cohort statistics (`facerec.openset.cohort`): mean and spread of its top-K cosines against the
    # model's score cohort, so a score against it costs no product with the cohort. NULL until computed (a
    # gallery made before them gains them when opened or upgraded; `cohort_id` setting says which cohort).
    cohort_mean: Mapped[float | None] = mapped_column(Float, nullable=True)
    cohort_sd: Mapped[float | None] = mapped_column(Float, nullable=True)
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


class Sighting(Base):
    __tablename__ = "sightings"
    __table_args__ = {"sqlite_autoincrement": True}  # id order is arrival order: the FIFO drops the lowest ids
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    identity_id: Mapped[int] = mapped_column(ForeignKey("identities.id", ondelete="CASCADE"), index=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # float32; only ever read back, never searched
    model_id: Mapped[str] = mapped_column(String(200))
    similarity: Mapped[float] = mapped_column(Float)  # to the person's best-matching enrolled face, when seen
    # the score the identification compared with the threshold (`facerec.openset.cohort`); NULL for sightings kept
    # before scores, and for confirmed or corrected ones, which Health reads whatever their score
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    source: Mapped[str] = mapped_column(String(16))  # "identified", "confirmed" or "corrected"
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    # The aligned face and where it was in its photo (not the photo): what a confirmation needs to learn it as a
    # template with the checks of add-photo. Kept only with crops on, for as long as the sighting is.
    crop_jpeg: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    box: Mapped[list | None] = mapped_column(JSON, nullable=True)
    landmarks: Mapped[list | None] = mapped_column(JSON, nullable=True)


class ReplacedFace(Base):
    """A template a learned face replaced (a person keeps a bounded number of learned ones), set aside with
    everything it was, so that undoing the learned face (`replaced_by`) gives it back as the same face."""

    __tablename__ = "replaced_faces"
    face_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)  # its id as a face
    identity_id: Mapped[int] = mapped_column(ForeignKey("identities.id", ondelete="CASCADE"), index=True)
    replaced_by: Mapped[int] = mapped_column(Integer, index=True)  # the learned face in its place
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # float32; never searched while set aside
    model_id: Mapped[str] = mapped_column(String(200))
    photo_sha256: Mapped[str] = mapped_column(String(64))
    box: Mapped[list] = mapped_column(JSON)
    landmarks: Mapped[list] = mapped_column(JSON)
    crop_jpeg: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    origin: Mapped[str] = mapped_column(String(16))
    learned_from: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    learned_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


class NegativeFace(Base):
    """A face an admin said is *not* this person (`facerec.gallery.negatives`): a later face that resembles it more
    than the person's own faces is not named as them. Never searched by the index; bounded per person; deleted
    with the person."""

    __tablename__ = "negative_faces"
    __table_args__ = {"sqlite_autoincrement": True}
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    identity_id: Mapped[int] = mapped_column(ForeignKey("identities.id", ondelete="CASCADE"), index=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # float32
    model_id: Mapped[str] = mapped_column(String(200))
    cohort_mean: Mapped[float] = mapped_column(Float)
    cohort_sd: Mapped[float] = mapped_column(Float)
    crop_jpeg: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # only where crops are kept
    sighting_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    said_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Stranger(Base):
    """A face of someone not enrolled, kept for suggestions (opt-in, bounded, `facerec.gallery.strangers`)."""

    __tablename__ = "strangers"
    __table_args__ = {"sqlite_autoincrement": True}  # id order is arrival order: grouping and eviction follow it
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # float32; read back for grouping, never searched
    model_id: Mapped[str] = mapped_column(String(200), index=True)
    photo_sha256: Mapped[str] = mapped_column(String(64), index=True)  # which photo: a suggestion needs two
    crop_jpeg: Mapped[bytes] = mapped_column(LargeBinary)  # the aligned face, to show and to enroll from
    box: Mapped[list] = mapped_column(JSON)
    landmarks: Mapped[list] = mapped_column(JSON)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    group_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)  # None: not grouped yet


class Setting(Base):
    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class ApiKeyRow(Base):
    """A REST API key (`facerec.access.api_keys`): only its SHA-256 and its first characters are kept."""

    __tablename__ = "api_keys"
    __table_args__ = {"sqlite_autoincrement": True}  # a revoked key's id is never given to another
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    key_sha256: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    shown: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
