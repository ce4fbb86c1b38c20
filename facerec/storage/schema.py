"""The gallery's tables (SQLAlchemy 2.x declarative): the source of truth for identities and their faces.

- `identities`: one row per person (name unique, optional note).
- `faces`: embedding, model id, photo sha256, box, landmarks, optional JPEG crop; belongs to one identity.
- `journal`: one row per face added or removed, written in the same transaction as the change. Its last
  sequence number fingerprints the database state: a vector index saved or last caught up at sequence s is
  brought up to date by replaying the rows after s, so a process never trusts an index blindly.
- `settings`: key/value pairs.

Ids are never reused (AUTOINCREMENT), so a journal row names one face forever.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
from sqlalchemy import JSON, DateTime, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

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
