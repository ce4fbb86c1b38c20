"""The negative_faces table (`facerec.storage.schema.NegativeFace`): faces an admin said are not a given person.

Read per search for the few people a face would be named as, so every replica sees a negative the moment it is
written; bounded per person (the oldest goes first), so reading them costs what a handful of faces cost.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from facerec.storage.rows import decoded
from facerec.storage.schema import NegativeFace


class NegativesTable:
    def __init__(self, session_factory) -> None:
        self.session = session_factory

    def add(self, session: Session, values: dict, most: int) -> int:
        """Keep one negative (`values`: identity_id, embedding float32 [D], model_id, cohort_mean, cohort_sd,
        crop_jpeg, sighting_id, said_by), dropping the person's oldest beyond `most`; returns its id."""
        embedding = np.asarray(values["embedding"], np.float32)
        row = NegativeFace(**{**values, "embedding": embedding.tobytes()})
        session.add(row)
        session.flush()
        ids = list(session.scalars(select(NegativeFace.id).where(NegativeFace.identity_id == values["identity_id"])
                                   .order_by(NegativeFace.id.desc())))
        if len(ids) > most:
            session.execute(delete(NegativeFace).where(NegativeFace.id.in_(ids[most:])))
        return int(row.id)

    def of_people(self, identity_ids: list[int], model_id: str) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """{identity id: (embeddings [k, D], cohort means [k], spreads [k])} of these people's negatives made by
        `model_id` (another model's do not compare)."""
        if not identity_ids:
            return {}
        with self.session() as session:
            rows = session.execute(select(NegativeFace.identity_id, NegativeFace.embedding, NegativeFace.cohort_mean,
                                          NegativeFace.cohort_sd)
                                   .where(NegativeFace.identity_id.in_([int(i) for i in identity_ids]),
                                          NegativeFace.model_id == model_id)).all()
        found: dict[int, list] = {}
        for identity_id, embedding, mean, sd in rows:
            found.setdefault(int(identity_id), []).append((decoded(embedding), mean, sd))
        return {identity: (np.stack([r[0] for r in kept]), np.array([r[1] for r in kept]),
                           np.array([r[2] for r in kept])) for identity, kept in found.items()}

    def listed(self, identity_id: int) -> list[NegativeFace]:
        with self.session() as session:
            return list(session.scalars(select(NegativeFace).where(NegativeFace.identity_id == int(identity_id))
                                        .order_by(NegativeFace.id)))

    def remove(self, session: Session, negative_id: int) -> NegativeFace | None:
        row = session.get(NegativeFace, int(negative_id))
        if row is not None:
            session.delete(row)
        return row

    def crop(self, negative_id: int) -> bytes | None:
        with self.session() as session:
            return session.scalar(select(NegativeFace.crop_jpeg).where(NegativeFace.id == int(negative_id)))

    def count(self) -> int:
        with self.session() as session:
            return int(session.scalar(select(func.count()).select_from(NegativeFace)) or 0)
