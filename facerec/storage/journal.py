"""The journal: one row per face added or removed, written in the same transaction as the change.

Its sequence numbers follow commit order, so a reader that has seen sequence s has seen every change up to s: a
vector index at s is brought up to date by replaying the rows after it (`facerec.vectors.following`), and the
last row fingerprints the database.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from facerec.storage.rows import chunked, decoded
from facerec.storage.schema import Face, Identity, JournalEntry


class JournalTable:
    def __init__(self, session: Callable[[], Session]) -> None:
        self.session = session  # opens a read session (`Store.session`)

    def head(self, session: Session | None = None) -> int:
        """Sequence number of the latest journal row (0 for an empty gallery): the database fingerprint."""
        if session is None:
            with self.session() as session:
                return self.head(session)
        return int(session.scalar(select(func.coalesce(func.max(JournalEntry.seq), 0))))

    def entry(self, seq: int) -> tuple[str, int] | None:
        """(op, face id) of the journal row `seq`, or None when there is none."""
        with self.session() as session:
            row = session.execute(select(JournalEntry.op, JournalEntry.face_id).where(JournalEntry.seq == seq)).first()
            return (str(row[0]), int(row[1])) if row else None

    def since(self, seq: int) -> list[tuple[int, str, int]]:
        """(seq, op, face id) of every row after `seq`, in order."""
        with self.session() as session:
            rows = session.execute(select(JournalEntry.seq, JournalEntry.op, JournalEntry.face_id)
                                   .where(JournalEntry.seq > seq).order_by(JournalEntry.seq))
            return [(int(s), str(o), int(f)) for s, o, f in rows]

    def faces_added_since(self, session: Session, seq: int) -> list[tuple[int, str, np.ndarray]]:
        """(identity id, name, embedding) of every face the journal added after `seq` and still held."""
        face_ids = list(session.scalars(select(JournalEntry.face_id).where(JournalEntry.seq > seq,
                                                                           JournalEntry.op == "add")))
        return [(int(identity), str(name), decoded(vector)) for chunk in chunked(face_ids)
                for identity, name, vector in session.execute(select(Identity.id, Identity.name, Face.embedding)
                                                              .join(Identity).where(Face.id.in_(chunk)))]

    @staticmethod
    def record(session: Session, op: str, face_ids: list[int]) -> None:
        """Journal `op` ("add" or "remove") of these faces, inside the caller's write transaction."""
        if face_ids:
            session.execute(insert(JournalEntry), [{"op": op, "face_id": f} for f in face_ids])
