"""The queries of the sightings table (`facerec.storage.schema.Sighting`): the recent-identifications memory.

Writes take the caller's write transaction (`Store.sightings_transaction()`), so a sighting and the trim that keeps the memory
at its capacity commit together; reads open their own session. Rows of another model than the one asked for are
never returned: their embeddings live in another space.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, ContextManager

import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from facerec.storage.schema import Sighting, utcnow

USER_LABELLED = ("confirmed", "corrected")  # sources a person vouched for: evicted last


@dataclass
class SightingRows:
    """Sightings in arrival order: ids [N], identity ids [N], embeddings [N, D], similarities [N], sources,
    times (UTC), and the scores [N] identifications were named at (NaN where none was kept)."""

    ids: np.ndarray
    identity_ids: np.ndarray
    embeddings: np.ndarray
    similarities: np.ndarray
    sources: list[str]
    seen_at: list[datetime]
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def select(self, keep: np.ndarray) -> SightingRows:
        """The rows where the boolean mask `keep` is true."""
        keep = np.asarray(keep, bool)
        return SightingRows(self.ids[keep], self.identity_ids[keep], self.embeddings[keep], self.similarities[keep],
                            [s for s, k in zip(self.sources, keep) if k], [t for t, k in zip(self.seen_at, keep) if k],
                            self.scores[keep])


class SightingsTable:
    def __init__(self, session: Callable[[], ContextManager[Session]]) -> None:
        self.session = session  # opens a read session (`Store.session`)

    def add(self, session: Session, identity_id: int, embedding: np.ndarray, model_id: str, similarity: float,
            source: str, capacity: int, seen_at: datetime | None = None, face: dict | None = None,
            score: float | None = None) -> int:
        """One sighting; then the oldest beyond `capacity` are dropped. Returns its id. `face`: its aligned crop
        (JPEG), box and landmarks, {"crop_jpeg", "box", "landmarks"}, when they are kept."""
        row = Sighting(identity_id=identity_id, embedding=np.asarray(embedding, np.float32).tobytes(),
                       model_id=model_id, similarity=float(similarity), source=source, seen_at=seen_at or utcnow(),
                       score=None if score is None else float(score),
                       **(face or {}))
        session.add(row)
        session.flush()
        self.trim(session, capacity)
        return int(row.id)

    def trim(self, session: Session, capacity: int) -> int:
        """Drop sightings beyond `capacity`, automatic ones first (oldest first), so that what a user confirmed or
        corrected is never evicted by a flood of identifications; how many went."""
        total = int(session.scalar(select(func.count(Sighting.id))))
        excess = total - capacity
        if excess <= 0:
            return 0
        removed = 0
        for user_labelled in (False, True):  # automatic first, then (only if they alone overflow) the user's
            is_labelled = Sighting.source.in_(USER_LABELLED)
            chosen = select(Sighting.id).where(is_labelled if user_labelled else ~is_labelled) \
                .order_by(Sighting.id).limit(excess - removed)
            ids = list(session.scalars(chosen))
            if ids:
                removed += int(session.execute(delete(Sighting).where(Sighting.id.in_(ids))).rowcount or 0)
            if removed >= excess:
                break
        return removed

    def embeddings_of(self, session: Session, identity_id: int, model_id: str,
                      latest: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids [N], embeddings [N, D]) of one person's sightings of this model; with `latest`, only the most
        recent that many."""
        query = select(Sighting.id, Sighting.embedding).where(Sighting.identity_id == identity_id,
                                                              Sighting.model_id == model_id)
        if latest is not None:
            query = query.order_by(Sighting.id.desc()).limit(latest)
        found = session.execute(query).all()
        if not found:
            return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
        return (np.array([r[0] for r in found], np.int64),
                np.stack([np.frombuffer(r[1], np.float32) for r in found]))

    def count_since(self, session: Session, identity_id: int, source: str, since: datetime) -> int:
        """This person's sightings of `source` kept at or after `since`."""
        return int(session.scalar(select(func.count(Sighting.id)).where(
            Sighting.identity_id == identity_id, Sighting.source == source, Sighting.seen_at >= since)))

    def get(self, session: Session, sighting_id: int) -> Sighting | None:
        return session.get(Sighting, sighting_id)

    def relabel(self, session: Session, sighting: Sighting, identity_id: int, source: str, similarity: float) -> None:
        sighting.identity_id, sighting.source, sighting.similarity = identity_id, source, float(similarity)
        session.flush()

    def remove(self, session: Session, sighting: Sighting) -> None:
        session.delete(sighting)
        session.flush()

    def remove_person(self, session: Session, identity_id: int) -> None:
        """Every sighting of a person (also done by the database's ON DELETE CASCADE; explicit, so it never
        depends on an engine's foreign-key setting)."""
        session.execute(delete(Sighting).where(Sighting.identity_id == identity_id))

    def clear(self, session: Session, keep_model_id: str | None = None) -> int:
        """Every sighting (or every one not of `keep_model_id`); how many went."""
        statement = delete(Sighting)
        if keep_model_id is not None:
            statement = statement.where(Sighting.model_id != keep_model_id)
        return int(session.execute(statement).rowcount or 0)

    def rows(self, model_id: str) -> SightingRows:
        """Every sighting of this model, oldest first."""
        with self.session() as session:
            found = session.execute(select(Sighting.id, Sighting.identity_id, Sighting.embedding, Sighting.similarity,
                                           Sighting.source, Sighting.seen_at, Sighting.score)
                                    .where(Sighting.model_id == model_id).order_by(Sighting.id)).all()
        if not found:
            return SightingRows(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 512), np.float32),
                                np.zeros(0), [], [], np.zeros(0))
        return SightingRows(np.array([r[0] for r in found], np.int64), np.array([r[1] for r in found], np.int64),
                            np.stack([np.frombuffer(r[2], np.float32) for r in found]),
                            np.array([r[3] for r in found], np.float64), [str(r[4]) for r in found],
                            [r[5] for r in found],
                            np.array([np.nan if r[6] is None else r[6] for r in found], np.float64))

    def count(self, model_id: str | None = None, identity_id: int | None = None) -> int:
        statement = select(func.count(Sighting.id))
        if model_id is not None:
            statement = statement.where(Sighting.model_id == model_id)
        if identity_id is not None:
            statement = statement.where(Sighting.identity_id == identity_id)
        with self.session() as session:
            return int(session.scalar(statement))
