"""The faces table: each enrolled face's embedding (float32 vectors in and out), its photo and crop.

Reads open their own session; writes take the caller's write transaction and journal every face they add,
remove or re-embed (`facerec.storage.journal`), so the vector index can follow.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

import numpy as np
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from facerec.storage.journal import JournalTable
from facerec.storage.rows import chunked, decoded, encoded
from facerec.storage.schema import Face, Identity

EMPTY = np.zeros((0, 512), np.float32)


class FacesTable:
    def __init__(self, session: Callable[[], Session]) -> None:
        self.session = session  # opens a read session (`Store.session`)

    def embeddings(self, face_ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(face ids [N] int64, embeddings [N, D] float32) of all faces, or of the given ids."""
        with self.session() as session:
            query = select(Face.id, Face.embedding).order_by(Face.id)
            if face_ids is None:
                rows = session.execute(query).all()
            else:
                rows = [row for chunk in chunked(face_ids) for row in session.execute(query.where(Face.id.in_(chunk)))]
        if not rows:
            return np.zeros(0, np.int64), EMPTY
        return np.array([r[0] for r in rows], dtype=np.int64), np.stack([decoded(r[1]) for r in rows])

    def labels(self, face_ids: list[int] | None = None) -> dict[int, tuple[int, str]]:
        """{face id: (identity id, name)} for every face, or only for the given face ids."""
        query = select(Face.id, Identity.id, Identity.name).join(Identity)
        with self.session() as session:
            if face_ids is None:
                rows = list(session.execute(query))
            else:
                rows = [r for chunk in chunked(face_ids) for r in session.execute(query.where(Face.id.in_(chunk)))]
            return {int(f): (int(i), str(n)) for f, i, n in rows}

    def counts_per_person(self) -> tuple[np.ndarray, np.ndarray]:
        """(identity ids [P] int64, ascending; their face counts [P]) of every person with a face."""
        with self.session() as session:
            rows = session.execute(select(Face.identity_id, func.count(Face.id)).group_by(Face.identity_id)
                                   .order_by(Face.identity_id)).all()
        return np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64)

    def of_people(self, identity_ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(face ids [N], their identity ids [N], embeddings [N, D]) of these people's faces, by face id."""
        with self.session() as session:
            rows = sorted(row for chunk in chunked(identity_ids)
                          for row in session.execute(select(Face.id, Face.identity_id, Face.embedding)
                                                     .where(Face.identity_id.in_(chunk))))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), EMPTY
        return (np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
                np.stack([decoded(r[2]) for r in rows]))

    def of_photo(self, session: Session, photo_sha256: str) -> list[tuple[str, list, str]]:
        """(photo sha256, box, person's name) of every face enrolled from this photo."""
        return [tuple(row) for row in session.execute(
            select(Face.photo_sha256, Face.box, Identity.name).join(Identity)
            .where(Face.photo_sha256 == photo_sha256))]

    def photos_of(self, session: Session, identity_ids: list[int]) -> list[tuple[int, str, list]]:
        """(identity id, photo sha256, box) of every face of these people."""
        return [tuple(row) for chunk in chunked(identity_ids)
                for row in session.execute(select(Face.identity_id, Face.photo_sha256, Face.box)
                                           .where(Face.identity_id.in_(chunk)))]

    def crop(self, face_id: int) -> bytes | None:
        """The stored JPEG crop of a face (None in privacy mode, or when there is no such face)."""
        with self.session() as session:
            face = session.get(Face, face_id)
            return face.crop_jpeg if face else None

    def ids(self) -> list[int]:
        """Every face id, ascending."""
        with self.session() as session:
            return list(session.scalars(select(Face.id).order_by(Face.id)))

    def crops(self, face_ids: list[int]) -> dict[int, bytes | None]:
        """{face id: stored JPEG crop, or None in privacy mode} for those of `face_ids` that still exist."""
        with self.session() as session:
            return {face_id: crop for chunk in chunked(face_ids)
                    for face_id, crop in session.execute(select(Face.id, Face.crop_jpeg).where(Face.id.in_(chunk)))}

    def model_ids(self) -> list[str]:
        """Every model whose embeddings the gallery holds, sorted."""
        with self.session() as session:
            return sorted(session.scalars(select(Face.model_id).distinct()))

    def other_model_ids(self, model_id: str, limit: int = 5) -> list[str]:
        """Up to `limit` models other than `model_id` whose embeddings the gallery holds (sorted)."""
        with self.session() as session:
            # Two index lookups first: `model_id != ...` scans the whole index, and this runs on every identify.
            if all(session.scalar(select(Face.model_id).where(other).limit(1)) is None
                   for other in (Face.model_id < model_id, Face.model_id > model_id)):
                return []
            return sorted(session.scalars(select(Face.model_id).where(Face.model_id != model_id)
                                          .distinct().limit(limit)))

    # ----- writes (inside the caller's `writing()` transaction) -----------------------------------------------
    def add_many(self, session: Session, rows: list[dict], now: datetime) -> list[int]:
        """Faces in one statement, journalled; each row: identity_id, embedding (float32 vector), model_id,
        photo_sha256, box, landmarks, crop_jpeg (or None), optional created_at (else `now`). Returns the new
        face ids in row order."""
        if not rows:
            return []
        face_ids = list(session.scalars(insert(Face).returning(Face.id, sort_by_parameter_order=True),
                                        [{"created_at": now, **row, "embedding": encoded(row["embedding"])}
                                         for row in rows]))
        JournalTable.record(session, "add", face_ids)
        return face_ids

    def for_update(self, session: Session) -> list[Face]:
        return list(session.scalars(select(Face)))

    def replace_embedding(self, session: Session, face: Face, embedding: np.ndarray, model_id: str) -> None:
        """A face re-embedded by another model: journalled as a remove and an add of the same face."""
        face.embedding, face.model_id = encoded(embedding), model_id
        JournalTable.record(session, "remove", [face.id])
        JournalTable.record(session, "add", [face.id])


def face_row(values: dict) -> Face:
    """A new Face from the `add_many` row keys (but identity_id)."""
    return Face(**{**values, "embedding": encoded(values["embedding"])})
