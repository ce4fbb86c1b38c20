"""Enrollment: a new person from one photo, another photo of a person, and bulk adds of precomputed embeddings.

Every check that decides whether a write may happen (name taken, same photo already enrolled, look-alike) is made
once before the write, to spare a doomed write the lock, and again inside the write transaction, where no other
writer can commit: two simultaneous enrollments cannot both pass it. A write that is refused changes nothing.
"""

from __future__ import annotations

import numpy as np

from facerec.gallery.core import Core
from facerec.formats.archive import encode_crop
from facerec.faces.boxes import overlap
from facerec.faces.detect import DetectedFace
from facerec.faces.embed import checked_embeddings
from facerec.errors import DuplicatePhoto, IdentityMismatch, InvalidArgument, LowQuality, NameTaken, PossibleDuplicate
from facerec.faces.image import ImageInput
from facerec.words import refusals
from facerec.words.quality import low_quality_message
from facerec.names import clean_name
from facerec.faces.pipeline import Photo
from facerec.gallery.results import Candidate, EnrollResult
from facerec.storage import utcnow
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.faces.choice import chosen_face, decoded_faces
from facerec.gallery.match_check import is_best_match, lookalikes as lookalikes_of
from facerec.gallery.search import Search
from facerec.storage.failures import ConflictingWrite
from facerec.gallery.people import find_identity, learned_count, refuse_taken_name


class Enrollment:
    """Enroll and add photos in one gallery: the photo pipeline, the store, the vector index, the threshold in
    force (the look-alike check), search (the same rule as identify) and the enrollment quality check."""

    def __init__(self, core: Core, *, search: Search) -> None:
        self._pipeline, self._store, self._index = core.pipeline, core.store, core.index
        self._thresholds = core.thresholds
        self._search, self._quality, self._model_id = search, core.quality, core.model_id
        self._store_crops, self._min_face_size = core.settings.store_crops, core.settings.min_face_size

    def enroll(self, photo: ImageInput | Photo, name: str, face_index: int | None = None,
               allow_lookalike: bool = False, note: str | None = None, allow_low_quality: bool = False) -> EnrollResult:
        """Enroll a new person from one photo.

        Raises MultipleFaces (unless `face_index` picks one), NoFace, DuplicatePhoto, NameTaken (also in another
        letter case), InvalidArgument (an unusable name: `facerec.names`), LowQuality when the face is unlikely
        to be recognised later (`facerec.faces.quality`; its reasons in the message), unless `allow_low_quality`,
        and PossibleDuplicate when the face matches another identity at or above the threshold (a duplicate or
        look-alike), unless `allow_lookalike`. The result carries the face's quality."""
        store = self._store
        name = clean_name(name)
        photo, face, crop, embedding = self.one_face(photo, face_index)
        with store.reading() as tables:
            refuse_taken_name(tables, name)
        self.refuse_duplicate_photo(photo, face)
        quality = self._refuse_low_quality(face, crop, allow_low_quality)
        rule = self._thresholds.in_force()  # catches the index up: every face committed up to here is searched
        searched_to = self._index.seq
        lookalikes = lookalikes_of(self._search, embedding, rule)
        if lookalikes and not allow_lookalike:
            raise _possible_duplicate(lookalikes, rule)
        between_check_and_write()
        try:
            with store.transaction() as tx:
                # The same checks again, now that no other writer can commit: the earlier ones only spared us
                # taking the lock for a doomed write.
                refuse_taken_name(tx, name)
                self.refuse_duplicate_photo(photo, face, tx)
                # At the rule of the first search: a face committed since makes the gallery's threshold at most
                # marginally higher, and the result reports the rule the check used.
                late = lookalikes_of(self._search, embedding, rule,
                                     self._committed_since(tx, searched_to, embedding))
                if late and not allow_lookalike:
                    raise _possible_duplicate(late, rule)
                lookalikes = _merged(lookalikes, late)
                identity_id, face_id = tx.people.add(name, note, self._face_row(photo, face, crop, embedding,
                                                                                "enrolled"))
        except ConflictingWrite:
            raise NameTaken(f"'{name}' is already enrolled; add this photo to that person instead", name) from None
        self._index.after_write(store)
        return EnrollResult(identity_id, name, face_id, 1, face, crop, lookalikes, rule, quality,
                            self._thresholds.typical_cosine(rule.threshold))

    def add_photo(self, identity: str | int, photo: ImageInput | Photo, face_index: int | None = None,
                  allow_mismatch: bool = False, allow_low_quality: bool = False) -> EnrollResult:
        """Add another photo of an enrolled person; `lookalikes` in the result lists other people it resembles.

        Raises IdentityMismatch, unless `allow_mismatch`, when the face is not this person's: it matches none of
        their faces at the threshold (the enrollment look-alike test), or it matches someone else better (checked
        again inside the write, against faces committed meanwhile); LowQuality, unless `allow_low_quality`, on
        the same rule as `enroll`."""
        store = self._store
        photo, face, crop, embedding = self.one_face(photo, face_index)
        self.refuse_duplicate_photo(photo, face)
        quality = self._refuse_low_quality(face, crop, allow_low_quality)  # the same rule as a first photo's
        with store.reading() as tables:
            person = find_identity(tables, identity)
            name, own_faces = person.name, [f.id for f in person.faces]
        rule = self._thresholds.in_force()  # catches the index up: every face committed up to here is searched
        searched_to = self._index.seq
        lookalikes = lookalikes_of(self._search, embedding, rule)
        if not allow_mismatch and not is_best_match(lookalikes, name):
            raise self._mismatch(name, own_faces, embedding, lookalikes, rule)
        between_check_and_write()
        with store.transaction() as tx:
            person = find_identity(tx, identity)
            self.refuse_duplicate_photo(photo, face, tx)
            # The identity check again, now that no other writer can commit: a face of someone else committed since
            # the search (another add-photo, an enrollment) may match this photo better.
            late = lookalikes_of(self._search, embedding, rule,
                                 self._committed_since(tx, searched_to, embedding))
            lookalikes = _merged(lookalikes, late)
            if not allow_mismatch and not is_best_match(lookalikes, person.name):
                raise self._mismatch(person.name, [f.id for f in person.faces], embedding, lookalikes, rule)
            face_id = tx.people.add_face(person, self._face_row(photo, face, crop, embedding, "added"))
            result = (person.id, person.name, face_id, len(person.faces))
            learned = learned_count(person)
        self._index.after_write(store)
        return EnrollResult(*result, face, crop, [(n, s) for n, s in lookalikes if n != result[1]], rule, quality,
                            self._thresholds.typical_cosine(rule.threshold), learned)

    def add_embeddings(self, entries: list[dict]) -> list[int]:
        """Bulk enrollment of precomputed embeddings in one transaction (evaluation, imports, benchmarks).

        Each entry: {"name", "embedding" [512] float32 (scaled to unit length; NaN, infinite or zero refused),
        "photo_sha256", "box", "landmarks", optional "crop" (uint8 112x112x3)}. Identities are created as needed.
        Returns the new face ids."""
        if not entries:
            return []
        store = self._store
        now = utcnow()
        names = [clean_name(entry["name"]) for entry in entries]
        try:
            vectors = np.array([entry["embedding"] for entry in entries], np.float32)
        except (TypeError, ValueError):
            raise InvalidArgument("every embedding must be a list of numbers, all of one length") from None
        vectors = checked_embeddings(vectors, self._index.dimension, normalise=True)
        with store.transaction() as tx:
            ids = tx.people.ids(names)
            new = [n for n in dict.fromkeys(names) if n not in ids]
            ids.update(tx.people.create([{"name": n} for n in new], now))
            rows, first_of_new = [], set(new)
            for name, entry, vector in zip(names, entries, vectors):
                crop = entry.get("crop")
                origin = "enrolled" if name in first_of_new else "added"  # a new person's first face enrolls them
                first_of_new.discard(name)
                rows.append({"identity_id": ids[name], "model_id": self._model_id, "embedding": vector,
                             "photo_sha256": entry.get("photo_sha256", ""), "box": entry.get("box") or [],
                             "landmarks": entry.get("landmarks") or [], "origin": origin,
                             "crop_jpeg": encode_crop(crop) if crop is not None and self._store_crops else None})
            face_ids = tx.faces.add_many(rows, now)
        self._index.after_write(store)
        return face_ids

    def one_face(self, photo, face_index, faces: list[DetectedFace] | None = None):
        """(photo, the face to enroll, its aligned crop, its embedding), or the reason there is not exactly one.
        `faces`: the detection of `photo` (a decoded Photo) when the caller has it already."""
        if faces is None or not isinstance(photo, Photo):
            photo, faces = decoded_faces(self._pipeline, photo)
        face = chosen_face(photo, faces, face_index, "the photo", self._min_face_size)
        crops, embeddings = self._pipeline.embed(photo, [face])
        return photo, face, crops[0], embeddings[0]

    def _face_row(self, photo: Photo, face: DetectedFace, crop: np.ndarray, embedding: np.ndarray,
                  origin: str) -> dict:
        crop_jpeg = encode_crop(crop) if self._store_crops else None
        data = face.to_dict()
        return {"embedding": embedding, "model_id": self._model_id, "photo_sha256": photo.sha256,
                "box": data["box"], "landmarks": data["landmarks"], "crop_jpeg": crop_jpeg, "origin": origin}

    def refuse_duplicate_photo(self, photo: Photo, face: DetectedFace, tx=None) -> None:
        if tx is None:
            with self._store.reading() as tables:
                return self.refuse_duplicate_photo(photo, face, tables)
        for sha, box, name in tx.faces.of_photo(photo.sha256):
            if same_face(photo.sha256, list(face.box), sha, box):
                raise DuplicatePhoto(f"this photo (this face) is already enrolled, as '{name}'", name)

    def _refuse_low_quality(self, face: DetectedFace, crop: np.ndarray, allowed: bool):
        """The face's enrollment quality; LowQuality when it is low and not `allowed`."""
        quality = self._quality.assess(face, crop)
        if quality is not None and quality.low and not allowed:
            raise LowQuality(low_quality_message(quality), quality)
        return quality

    def _committed_since(self, tx, seq: int, embedding: np.ndarray) -> list[Candidate]:
        """The people whose faces were committed after journal position `seq` (by any thread or process), as
        candidates for `embedding`: what a search made at `seq` could not see. Usually none."""
        added = tx.journal.faces_added_since(seq)
        if not added:
            return []
        vectors = np.stack([vector for _identity, _name, vector in added])
        scores = self._search.scores_against(embedding, vectors)
        best: dict[int, Candidate] = {}
        for (identity, name, vector), score in zip(added, scores):
            if identity not in best or score > best[identity].score:
                best[identity] = Candidate(name, identity, float(np.dot(vector, embedding)), float(score))
        return sorted(best.values(), key=lambda c: -c.score)

    def _mismatch(self, name: str, own_faces: list[int], embedding: np.ndarray,
                  lookalikes: list[tuple[str, float]], rule: ThresholdInForce) -> IdentityMismatch:
        _ids, vectors = self._store.faces.embeddings(own_faces)
        own = float(np.max(self._search.scores_against(embedding, vectors))) if len(vectors) else float("nan")
        others = [(n, s) for n, s in lookalikes if n != name]
        sentence = refusals.mismatch(name, own, others, rule.threshold, _how_set(rule))
        return IdentityMismatch(sentence, others)  # what to do: each shell says


def between_check_and_write() -> None:
    """Runs between enroll's or add_photo's first checks and their write transaction; nothing in the product.
    Tests replace it to commit a competing face exactly there, or to hold every racer there until all have passed
    their first checks, which makes a race certain instead of a matter of timing."""


def _possible_duplicate(lookalikes: list[tuple[str, float]], rule: ThresholdInForce) -> PossibleDuplicate:
    return PossibleDuplicate(refusals.possible_duplicate(lookalikes, rule.threshold, _how_set(rule)), lookalikes)


def _merged(*lists: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """(name, score) lists as one, best score per name, best first."""
    best: dict[str, float] = {}
    for name, similarity in (pair for pairs in lists for pair in pairs):
        best[name] = max(similarity, best.get(name, similarity))
    return sorted(best.items(), key=lambda pair: -pair[1])


def _how_set(rule: ThresholdInForce) -> str:
    return refusals.how_set(rule.pinned, rule.comparisons)


def same_face(sha_a: str, box_a: list, sha_b: str, box_b: list) -> bool:
    """Same photo (bytes) and the same face in it; faces stored without a box match on the photo alone."""
    if not sha_a or sha_a != sha_b:
        return False
    return not box_a or not box_b or overlap(box_a, box_b) > 0.5
