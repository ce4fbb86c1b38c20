"""Templates: the faces a person is searched by, and the ones the gallery learns from confirmed sightings.

A person enrolled from one photo is recognised far less often than one with three (the model card's open-set
figures). So when a user with the admin password (or an admin API key) confirms or corrects a sighting, its face
is learned as another template of that person, after three checks: a usable face (the enrollment quality check);
the claim "this is X" verified as one comparison, against the photos X was enrolled or added from, at verify's
threshold (so a face identify missed, which scored under the open-set threshold in force, is learned when it is
X's, and a stranger's face corrected to X is refused); and not a better match for someone else. A learned face
never vouches for the next, so no chain of confirmations walks a person, face by face, towards someone else, and a
name reached through a learned face needs the person's own photos to corroborate it (`facerec.gallery.search`).
A face that fails a check is still confirmed (Health reads it) and the answer says why it was not learned.

What is learned is the face shown: the sighting's aligned crop, embedded again (a video track's sighting holds its
views pooled, and a track in which one face cross-fades into another pools both while showing one).

Bounded: at most MAX_LEARNED learned templates per person. One more replaces the most redundant of them (the one
most like the person's other templates), so what is kept covers how the person looks, not how they looked in the
latest photos; when the newcomer is itself the most redundant, it is not learned. The one replaced is set aside
(`facerec.storage.replaced`: out of every search, one step back, so at most one per learned template).

Undoable: removing a template, rejecting the sighting it came from, or correcting that sighting to someone else
removes it and brings back, under its own id, the template it replaced; a set-aside face whose own sighting is
rejected never comes back. The template keeps its sighting's id, so rejecting works after the sighting itself was
cleared or evicted from the memory. Deleting the person removes them all (set-aside ones too); a reindex forgets
the set-aside ones. Learned templates are faces like any other (crop kept where crops are, so a reindex re-embeds
them), marked `origin = "learned"` with the sighting and who confirmed it. Automatic sightings never become
templates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import InvalidArgument, UnknownIdentity
from facerec.faces.detect import DetectedFace
from facerec.formats.archive import decode_crop
from facerec.gallery.people import find_identity
from facerec.gallery.search import Search
from facerec.words import refusals
from facerec.storage.schema import Face, Sighting

MAX_LEARNED = 10


@dataclass
class Template:
    """One face a person is searched by, with where it came from."""

    face_id: int
    identity_id: int
    origin: str  # enrolled, added or learned
    learned_from: int | None
    learned_by: str | None
    added_at: datetime

    def to_dict(self) -> dict:
        return {"face_id": self.face_id, "identity_id": self.identity_id, "origin": self.origin,
                "learned_from_sighting": self.learned_from, "learned_by": self.learned_by,
                "added_at": self.added_at.isoformat()}


@dataclass
class Learning:
    """What a confirmation taught: the template learned (None, with `why_not`), and one it replaced."""

    face_id: int | None = None
    why_not: str | None = None
    replaced: int | None = None

    def to_dict(self) -> dict:
        return {"learned_face_id": self.face_id, "not_learned_because": self.why_not,
                "replaced_face_id": self.replaced}


@dataclass
class Undone:
    """What undoing learned faces did: the templates removed, those they had replaced brought back, and whose they
    were (`name`; None when nothing was removed) with the removed face's cosine to the person's best-matching
    enrolled or added face (what a sighting's similarity is: a rejection answers with it when the sighting itself
    is gone)."""

    removed: list[int] = field(default_factory=list)
    restored: list[int] = field(default_factory=list)
    name: str | None = None
    similarity: float = 0.0

    def to_dict(self) -> dict:
        return {"removed_face_ids": self.removed, "restored_face_ids": self.restored}


class Templates:
    def __init__(self, core: Core, *, search: Search) -> None:
        self._store, self._index = core.store, core.index
        self._thresholds, self._quality = core.thresholds, core.quality
        self._search = search
        self._model_id, self._store_crops = core.model_id, core.settings.store_crops

    def of(self, identity: str | int) -> list[Template]:
        """A person's templates, oldest first."""
        with self._store.reading() as tables:
            person = find_identity(tables, identity)
            return [_template(face) for face in sorted(person.faces, key=lambda f: f.id)]

    def learn(self, sighting_id: int, by: str) -> Learning:
        """Learn the face of this confirmed or corrected sighting as a template of its person (see the module)."""
        store = self._store
        with store.reading() as tables:
            sighting = tables.get(Sighting, int(sighting_id))
            if sighting is None or sighting.model_id != self._model_id:
                return Learning(why_not="the sighting is no longer kept")
            if sighting.crop_jpeg is None or not sighting.landmarks:
                return Learning(why_not="this sighting keeps no face to learn from (kept before faces were kept, or "
                                        "labelled from the page); add the photo with Add photo instead")
            identity_id, crop_jpeg = sighting.identity_id, sighting.crop_jpeg
            embedding = np.frombuffer(sighting.embedding, np.float32).copy()
            face = DetectedFace.kept(sighting.box, sighting.landmarks)
        crop = decode_crop(crop_jpeg)
        # What is learned is the face the admin was shown: a track's sighting holds its views pooled, and a track
        # in which one face turns into another (a cross-fade) pools both while showing one (#63 row 3).
        embedding = self._quality.embedder.embed(crop[None])[0]
        why_not = self._refusal(identity_id, embedding, face, crop)
        if why_not:
            return Learning(why_not=why_not)
        with store.transaction() as tx:
            person = tx.people.by_id(identity_id)
            if person is None:
                return Learning(why_not="the person was deleted meanwhile")
            if any(f.learned_from == int(sighting_id) for f in person.faces):
                return Learning(why_not="already learned")
            learned = [f for f in person.faces if f.origin == "learned"]
            redundant = None
            if len(learned) >= MAX_LEARNED:
                redundant = _most_redundant(person.faces, embedding)
                if redundant is None:
                    return Learning(why_not=f"{person.name} already has {MAX_LEARNED} learned templates more varied "
                                            "than this face")
            face_id = tx.people.add_face(person, {
    "embedding": embedding, "model_id": self._model_id, "photo_sha256": f"sighting:{int(sighting_id)}",
    "box": list(face.box), "landmarks": face.landmarks.tolist(),
    "crop_jpeg": crop_jpeg if self._store_crops else None, "origin": "learned",
    "learned_from": int(sighting_id), "learned_by": by[:64]})
            if redundant is not None:  # set aside, so that undoing this face brings it back
                tx.replaced.set_aside(redundant, replaced_by=face_id)
                self._remove(tx, [redundant])
        self._index.after_write(store)
        return Learning(face_id=face_id, replaced=None if redundant is None else redundant.id)

    def remove(self, face_id: int) -> Template:
        """Remove one template, bringing back the one it replaced, if any; a person's last one cannot go (delete
        the person instead)."""
        store = self._store
        with store.transaction() as tx:
            face = tx.get(Face, int(face_id))
            if face is None:
                raise UnknownIdentity(f"no enrolled face has the id {int(face_id)}")
            if len(face.identity.faces) == 1:
                raise InvalidArgument("a person's last photo cannot be removed: delete the person instead")
            removed = _template(face)
            self._undo(tx, [face])
        self._index.after_write(store)
        return removed

    def forget_learned_from(self, sighting_id: int) -> Undone:
        """Undo what this sighting taught (rejected, or now said to be someone else): remove the templates learned
        from it and bring back those they replaced; a face learned from it that is set aside is forgotten. Works
        from the templates alone, so also after the sighting was cleared or evicted."""
        store = self._store
        with store.transaction() as tx:
            tx.replaced.forget(tx.replaced.learned_from(sighting_id))
            faces = tx.faces.learned_from(sighting_id)
            undone = self._undo(tx, faces)
        if undone.removed:
            self._index.after_write(store)
        return undone

    def _undo(self, tx, faces: list[Face]) -> Undone:
        """Remove these templates and restore the faces they replaced (inside the caller's write)."""
        if not faces:
            return Undone()
        held = tx.replaced.held_by([face.id for face in faces])
        person = faces[0].identity
        own = [face.vector for face in person.faces if face.origin in ("enrolled", "added")]
        undone = Undone(removed=[face.id for face in faces], name=person.name,
                        similarity=float(np.max(np.stack(own) @ faces[0].vector)) if own else 0.0)
        self._remove(tx, faces)
        undone.restored = [tx.replaced.restore(kept) for kept in held]
        return undone

    def _refusal(self, identity_id: int, embedding: np.ndarray, face: DetectedFace, crop: np.ndarray) -> str | None:
        """Why this face is not learned for this person, or None.

        An admin saying "this face is X" makes a 1:1 claim, so it is checked as one: the face must match one of
        the photos X was enrolled or added from at the verification threshold (verify's: one comparison at the
        accepted rate), not at the open-set threshold in force, which a face identify missed is by definition
        below; and it must not match someone else better (a look-alike of X whom the gallery holds). Only X's
        own photos vouch: a learned face never does, so no chain of confirmations walks X, face by face, towards
        someone else (#48 row 4; `facerec.gallery.search` also names a face through a learned template only when
        X's own photos corroborate it). "Someone else better": identify would name that other person (at the threshold
        in force) and they score higher than X."""
        quality = self._quality.assess(face, crop)
        if quality is not None and quality.low:
            return refusals.not_learned_poor_photo(quality.reasons)
        claim = self._thresholds.for_claims()  # syncs the index too
        rule = self._thresholds.in_force()
        name = self._store.people.names([identity_id]).get(identity_id)
        _ids, own = self._store.faces.of_origin(identity_id, ("enrolled", "added"))
        own_score = float(np.max(self._search.scores_against(embedding, own))) if len(own) else -np.inf
        if own_score < claim.threshold:
            return refusals.not_learned_no_match(claim.threshold)
        found = self._search.search(embedding[None], top_k=5)[0]
        theirs = max((c.score for c in found if c.name == name), default=own_score)
        rival = next((c for c in found if c.name != name), None)
        if rival is not None and rival.score >= rule.threshold and rival.score > max(theirs, own_score):
            return refusals.NOT_LEARNED_BETTER_MATCH
        return None

    def _remove(self, tx, faces: list[Face]) -> None:
        for face in faces:
            tx.delete(face)
        if faces:
            tx.journal.record("remove", [face.id for face in faces])


def _template(face: Face) -> Template:
    return Template(face.id, face.identity_id, face.origin or "enrolled", face.learned_from, face.learned_by,
                    face.created_at)


def _most_redundant(faces: list[Face], candidate: np.ndarray) -> Face | None:
    """The learned template most like the person's other templates, when it is more so than the candidate would
    be (None: the candidate is the most redundant)."""
    vectors = np.stack([face.vector for face in faces] + [candidate])
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    closeness = similarity.max(axis=1)
    learned = [i for i, face in enumerate(faces) if face.origin == "learned"]
    worst = max(learned, key=lambda i: closeness[i])
    return faces[worst] if closeness[worst] > closeness[-1] else None
