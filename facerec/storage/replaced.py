"""The replaced_faces table (`facerec.storage.schema.ReplacedFace`): templates a learned face took the place of.

A face set aside leaves the faces table (journalled as removed, so no index searches it) and keeps everything it
was here; restored, it goes back under its own id (journalled as added: the same face, the same embedding, so a
journal row still names one face). Only one step is kept: a set-aside face is restored only by undoing the face
that replaced it, and when that face is itself replaced, what it had replaced is forgotten, so the table holds at
most one face per learned template. Writes take the caller's write transaction.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from facerec.storage.faces import FacesTable
from facerec.storage.journal import JournalTable
from facerec.storage.rows import decoded
from facerec.storage.schema import Face, ReplacedFace

KEPT = ("identity_id", "embedding", "model_id", "photo_sha256", "box", "landmarks", "crop_jpeg", "created_at",
        "origin", "learned_from", "learned_by")  # what a face was, and is again when restored


class ReplacedFacesTable:
    def __init__(self, faces: FacesTable) -> None:
        self.faces = faces  # a restored face is written as the faces table writes every face

    def set_aside(self, session: Session, face: Face, replaced_by: int) -> None:
        """Keep `face` (about to be removed by the caller) as replaced by the face `replaced_by`; what `face` had
        replaced is forgotten (one step back, see the module)."""
        self.forget(session, self.held_by(session, [face.id]))
        session.add(ReplacedFace(face_id=face.id, replaced_by=int(replaced_by),
                                 **{column: getattr(face, column) for column in KEPT}))

    def held_by(self, session: Session, face_ids: list[int]) -> list[ReplacedFace]:
        """The faces these faces replaced."""
        if not face_ids:
            return []
        return list(session.scalars(select(ReplacedFace).where(ReplacedFace.replaced_by.in_(face_ids))
                                    .order_by(ReplacedFace.face_id)))

    def learned_from(self, session: Session, sighting_id: int) -> list[ReplacedFace]:
        """Set-aside faces learned from this sighting."""
        return list(session.scalars(select(ReplacedFace).where(ReplacedFace.learned_from == int(sighting_id))))

    def restore(self, session: Session, kept: ReplacedFace) -> int:
        """Make a set-aside face a template again, under its own id (journalled); returns the id."""
        values = {column: getattr(kept, column) for column in KEPT}
        face = self.faces.new_row({**values, "id": kept.face_id, "embedding": decoded(kept.embedding)})
        session.delete(kept)
        session.add(face)
        session.flush()
        JournalTable.record(session, "add", [face.id])
        return int(face.id)

    def forget(self, session: Session, kept: list[ReplacedFace]) -> None:
        for row in kept:
            session.delete(row)
        session.flush()

    def remove_person(self, session: Session, identity_id: int) -> None:
        """Every face set aside of a person (also done by ON DELETE CASCADE; explicit, as for sightings)."""
        session.execute(delete(ReplacedFace).where(ReplacedFace.identity_id == identity_id))

    def clear(self, session: Session) -> int:
        """Every face set aside (the gallery changed model: their embeddings no longer compare); how many."""
        return int(session.execute(delete(ReplacedFace)).rowcount or 0)
