"""Regrouping faces between people: merge two people into one, move one face to another person or a new one.

Why: one person enrolled twice (two spellings, a maiden name, two imports), or a face added or learned under the
wrong person, is fixed by moving faces, not by deleting and enrolling again (which loses learned faces, sightings
and their history). What moves: with a merge, every face of the source (enrolled and added become the target's
added photos, learned stay learned), their sightings, set-aside templates and negative examples; the source
person is then gone. With a move, one face (never a person's last: delete or merge instead).

Checks (stated in docs/app.md): a merge is refused when no face of one person matches a face of the other at the
claim level (verify's threshold, `GalleryThresholds.for_claims`), unless `force`: two different people merged by
a slip would make every photo of either name the other. A photo enrolled in both (the same photo and face) is kept
once. A face moved to someone is refused when it does not match their own photos at the claim level, unless
`force`. Every moved face is journalled (removed and added again under its new person), so every replica's index
and every cached threshold follows. Undo: an export taken first (`facerec export`) holds the gallery as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import InvalidArgument
from facerec.gallery.enrollment import same_face
from facerec.gallery.people import find_identity, refuse_taken_name
from facerec.gallery.search import Search
from facerec.names import clean_name
from facerec.storage.schema import Face


@dataclass
class Regrouped:
    """What a merge or a move did: the faces moved to `name`, duplicates dropped, and the best score between the
    two people's faces that the check read (None when forced without one)."""

    name: str
    identity_id: int
    moved: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    removed_person: str | None = None
    best_score: float | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "identity_id": self.identity_id, "moved_face_ids": self.moved,
                "duplicate_face_ids": self.duplicates, "removed_person": self.removed_person,
                "best_score": None if self.best_score is None else round(self.best_score, 4)}


class Regroup:
    def __init__(self, core: Core, *, search: Search) -> None:
        self._store, self._index, self._thresholds, self._search = core.store, core.index, core.thresholds, search

    def merge(self, source: str | int, target: str | int, force: bool = False) -> Regrouped:
        """Every face and record of `source` becomes `target`'s; `source` is gone."""
        claim = self._thresholds.for_claims()
        store = self._store
        with store.transaction() as tx:
            giver, taker = find_identity(tx, source), find_identity(tx, target)
            if giver.id == taker.id:
                raise InvalidArgument("a person cannot be merged into themselves")
            best = self._best_score([f.vector for f in giver.faces], [f.vector for f in taker.faces])
            if best < claim.threshold and not force:
                raise InvalidArgument(
                    f"'{giver.name}' and '{taker.name}' do not look like one person: their closest faces score "
                    f"{best:.2f}, under the verification threshold {claim.threshold:.2f}; merge anyway with force")
            result = Regrouped(taker.name, taker.id, removed_person=giver.name, best_score=best)
            kept = [(f.photo_sha256, f.box) for f in taker.faces]
            for face in list(giver.faces):
                if any(same_face(face.photo_sha256, face.box, sha, box) for sha, box in kept):
                    result.duplicates.append(face.id)
                    tx.journal.record("remove", [face.id])
                    tx.delete(face)
                    continue
                self._move(tx, face, taker, "added" if face.origin == "enrolled" else face.origin)
                result.moved.append(face.id)
            tx.people.hand_over(giver, taker)
            tx.flush()
            tx.expire(giver)
            tx.people.delete(giver)
        self._index.after_write(store)
        return result

    def move(self, face_id: int, target: str | int | None = None, new_name: str | None = None,
             force: bool = False) -> Regrouped:
        """One face to `target` (an enrolled person) or to a new person called `new_name`."""
        if (target is None) == (new_name is None):
            raise InvalidArgument("move a face to an enrolled person or to a new name, one of the two")
        store = self._store
        claim = self._thresholds.for_claims()
        with store.transaction() as tx:
            face = tx.get(Face, int(face_id))
            if face is None:
                raise InvalidArgument(f"no enrolled face has the id {int(face_id)}")
            if len(face.identity.faces) == 1:
                raise InvalidArgument(f"face {face.id} is {face.identity.name}'s last: merge or rename the "
                                      "person instead")
            best = None
            if new_name is not None:
                name = clean_name(new_name)
                refuse_taken_name(tx, name)
                taker_id = tx.people.create([{"name": name}], face.created_at)[name]
                taker = tx.people.by_id(taker_id)
                origin = "enrolled"
            else:
                taker = find_identity(tx, target)
                if taker.id == face.identity_id:
                    raise InvalidArgument(f"face {face.id} is already {taker.name}'s")
                own = [f.vector for f in taker.faces if f.origin in ("enrolled", "added")]
                best = self._best_score([face.vector], own)
                if best < claim.threshold and not force:
                    raise InvalidArgument(
                        f"face {face.id} does not look like {taker.name}'s own photos (best score {best:.2f}, under "
                        f"the verification threshold {claim.threshold:.2f}); move it anyway with force")
                origin = "added" if face.origin == "enrolled" else face.origin
            self._move(tx, face, taker, origin)
            result = Regrouped(taker.name, taker.id, moved=[face.id], best_score=best)
        self._index.after_write(store)
        return result

    def _move(self, tx, face: Face, taker, origin: str) -> None:
        face.identity = taker
        face.origin = origin
        tx.journal.record("remove", [face.id])
        tx.journal.record("add", [face.id])

    def _best_score(self, these: list[np.ndarray], those: list[np.ndarray]) -> float:
        if not these or not those:
            return float("-inf")
        others = np.stack(those)
        return max(float(np.max(self._search.scores_against(np.asarray(v, np.float32), others))) for v in these)
