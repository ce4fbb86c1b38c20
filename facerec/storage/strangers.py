"""The strangers table's queries: faces of people who are not enrolled, kept for suggestions (opt-in).

What is kept and why is `facerec.gallery.strangers`'s business; here are only the reads and writes, each bounded:
the table never holds more than its capacity (oldest first out) nor anything older than its retention.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, ContextManager

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from facerec.storage.schema import Stranger, utcnow


@dataclass
class StrangerRows:
    """Kept faces of one model, oldest first: ids [N], embeddings [N, D], groups [N] (-1: not grouped yet),
    their photos' sha256 and when each was seen."""

    ids: np.ndarray
    embeddings: np.ndarray
    groups: np.ndarray
    photos: list[str]
    seen_at: list[datetime]

    def __len__(self) -> int:
        return len(self.ids)


class StrangersTable:
    def __init__(self, session: Callable[[], ContextManager[Session]]) -> None:
        self.session = session  # opens a read session (`Store.session`)

    def add(self, session: Session, embedding: np.ndarray, model_id: str, photo_sha256: str, face: dict,
            capacity: int) -> int:
        """One face ({"crop_jpeg", "box", "landmarks"}); then the oldest beyond `capacity` go. Returns its id."""
        row = Stranger(embedding=np.asarray(embedding, np.float32).tobytes(), model_id=model_id,
                       photo_sha256=photo_sha256, seen_at=utcnow(), **face)
        session.add(row)
        session.flush()
        excess = int(session.scalar(select(func.count(Stranger.id)))) - capacity
        if excess > 0:
            oldest = list(session.scalars(select(Stranger.id).order_by(Stranger.id).limit(excess)))
            session.execute(delete(Stranger).where(Stranger.id.in_(oldest)))
        return int(row.id)

    def of_photo(self, session: Session, model_id: str, photo_sha256: str) -> np.ndarray:
        """Embeddings [N, D] of the faces kept from this photo (to keep a photo sent again only once)."""
        found = list(session.scalars(select(Stranger.embedding).where(Stranger.model_id == model_id,
                                                                    Stranger.photo_sha256 == photo_sha256)))
        return np.stack([np.frombuffer(e, np.float32) for e in found]) if found else np.zeros((0, 0), np.float32)

    def rows(self, session: Session, model_id: str) -> StrangerRows:
        """Every kept face of this model, oldest first."""
        found = session.execute(select(Stranger.id, Stranger.embedding, Stranger.group_id, Stranger.photo_sha256,
                                       Stranger.seen_at).where(Stranger.model_id == model_id)
                                .order_by(Stranger.id)).all()
        if not found:
            return StrangerRows(np.zeros(0, np.int64), np.zeros((0, 0), np.float32), np.zeros(0, np.int64), [], [])
        return StrangerRows(np.array([r[0] for r in found], np.int64),
                            np.stack([np.frombuffer(r[1], np.float32) for r in found]),
                            np.array([-1 if r[2] is None else r[2] for r in found], np.int64),
                            [r[3] for r in found], [r[4] for r in found])

    def version(self, session: Session, model_id: str) -> tuple[int, int]:
        """(how many faces of this model are kept, the largest id): what a grouping was made of. Any face kept,
        forgotten or dismissed since changes it (ids are never reused); two index reads, whatever the count."""
        count, largest = session.execute(select(func.count(Stranger.id), func.max(Stranger.id))
                                         .where(Stranger.model_id == model_id)).one()
        return int(count), int(largest or 0)

    def place(self, session: Session, model_id: str, placed: dict[int, int]) -> dict[int, int]:
        """Put each face (id) in its group (id), in id order, where the face is still not grouped and its group
        still has faces (or is founded by a face placed here); what was placed. A grouping computed outside any
        transaction is written so: a face grouped meanwhile by another process keeps its group, and a face is
        never put into a group dismissed or named meanwhile (it waits for the next grouping)."""
        ungrouped = set(session.scalars(select(Stranger.id).where(Stranger.model_id == model_id,
                                                                  Stranger.group_id.is_(None))))
        groups = set(session.scalars(select(Stranger.group_id).where(Stranger.model_id == model_id,
                                                                     Stranger.group_id.is_not(None)).distinct()))
        accepted = {}
        for face, group in sorted(placed.items()):
            if face in ungrouped and (group in groups or group == face):
                accepted[face] = group
                groups.add(group)
        if accepted:
            session.execute(update(Stranger), [{"id": face, "group_id": group} for face, group in accepted.items()])
        return accepted

    def of_group(self, session: Session, model_id: str, group_id: int) -> list[Stranger]:
        return list(session.scalars(select(Stranger).where(Stranger.model_id == model_id,
                                                           Stranger.group_id == int(group_id))
                                    .order_by(Stranger.id)))

    def crops(self, session: Session, ids: list[int]) -> dict[int, bytes]:
        """The aligned faces (JPEG) of these kept faces."""
        return dict(session.execute(select(Stranger.id, Stranger.crop_jpeg).where(Stranger.id.in_(ids))).all())

    def remove_group(self, session: Session, model_id: str, group_id: int) -> int:
        """Forget every face of a group; how many went."""
        return int(session.execute(delete(Stranger).where(Stranger.model_id == model_id,
                                                          Stranger.group_id == int(group_id))).rowcount or 0)

    def remove_older_than(self, session: Session, moment: datetime) -> int:
        return int(session.execute(delete(Stranger).where(Stranger.seen_at < moment)).rowcount or 0)

    def clear(self, session: Session) -> int:
        """Every kept face; how many went."""
        return int(session.execute(delete(Stranger)).rowcount or 0)

    def count(self) -> int:
        with self.session() as session:
            return int(session.scalar(select(func.count(Stranger.id))))
