"""The sightings memory: recent identifications, kept as the embedding metrics' cross-batch memory.

A one-photo-per-person gallery has no positives, so its health figures that need them are undefined. But every
confident identification is a fresh photo of an enrolled person with its label: `record` keeps (embedding,
person, time) of each face of `identify` that clears the threshold the policy sets for the gallery's default
stranger-match rate, and a user's one click turns a face into a labelled one (`confirm`, `correct`; `reject` says
it was nobody enrolled and forgets it). The health report then scores enrolled faces and sightings together
(`facerec.gallery.health.sightings`).

Trust: what a caller controls never reaches the memory. An identify with a lowered pin or a looser rate still
answers at it, but its faces are kept only where they clear the default-rate threshold, so an automatic sighting
is exactly as trustworthy as the gallery's own answer at the rate it promises, whoever asked (any caller may
write one: a kept sighting says nothing the same caller could not learn from a default identify). The same photo
sent again is one sighting, not many (a near-identical face of the same person is not added twice), so a caller
cannot fill the memory with one face. What a user confirmed or corrected is evicted only after every automatic
sighting; Health reads automatic sightings only at or above today's default-rate threshold.

Paced: at most `Settings.sightings_per_hour` (default 10) automatic sightings of one person are kept in any hour;
more identifications of that person are answered as usual but not kept (a user can still confirm one). Thirty
lightly altered copies of one photo (cropped, brighter, recompressed) are not "the same photo" by their embeddings,
so without a pace one caller could still fill a person's history with one picture; a user's confirmations are not
paced.

Bounded: at most `Settings.sightings_memory` rows (default 10,000), the oldest automatic ones dropped first; no
photo is kept, only each sighting's aligned face (112x112) with where it was in its photo, for a confirmation to
learn from. None at all in privacy mode (`store_crops` off) or with a memory of 0: a gallery opened so forgets those
kept before. A person's sightings go with them;
all of them go when the gallery changes model (`reindex`), since embeddings of two models do not compare.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import InvalidArgument, StorageFull, UnknownSighting
from facerec.faces.detect import DetectedFace
from facerec.formats.archive import decode_crop, encode_crop
from facerec.gallery.people import find_identity
from facerec.gallery.results import FaceMatch
from facerec.storage import utcnow
from facerec.storage.failures import DatabaseFailure
from facerec.storage.sightings import SightingRows
from facerec.words.phrasing import one_line

IDENTIFIED, CONFIRMED, CORRECTED = "identified", "confirmed", "corrected"
SAME_PHOTO_COSINE = 0.995  # a face this close to a kept sighting of the same person is that photo again
SAME_PHOTO_LOOKBACK = 200  # ... among that person's latest this many sightings: the check runs for every named
#                            face of every identify, so its cost must not grow with how often a person is seen
log = logging.getLogger("facerec.gallery")


@dataclass
class SightingInfo:
    id: int
    name: str
    source: str
    similarity: float
    learning: dict | None = None  # what the confirmation taught (`facerec.gallery.templates.Learning`)
    undone: dict | None = None  # what a rejection or correction undid (`facerec.gallery.templates.Undone`)
    negative_id: int | None = None  # the negative example "not this person" kept (`facerec.gallery.negatives`)

    def to_dict(self) -> dict:
        data = {"id": self.id, "name": self.name, "source": self.source, "similarity": round(self.similarity, 4)}
        if self.learning is not None:
            data["learning"] = self.learning
        if self.undone is not None:
            data["undone"] = self.undone
        if self.negative_id is not None:
            data["negative_id"] = self.negative_id
        return data


class SightingsMemory:
    """The memory of one gallery: its store, the model whose embeddings it keeps, and whether and how much it may
    keep (`store_crops` off is privacy mode; `capacity` 0 turns it off)."""

    def __init__(self, core: Core, *, lookback: int = SAME_PHOTO_LOOKBACK) -> None:
        settings = core.settings
        self._store, self._model_id, self._store_crops = core.store, core.model_id, settings.store_crops
        self._capacity, self._lookback = settings.sightings_memory, lookback
        self._per_hour = settings.sightings_per_hour

    @property
    def capacity(self) -> int:
        """How many sightings are kept at most (0: none)."""
        return self._capacity

    @property
    def enabled(self) -> bool:
        return self._store_crops and self._capacity > 0

    def why_disabled(self) -> str:
        if not self._store_crops:
            return "privacy mode keeps no sightings (FACEREC_STORE_CROPS=0)"
        return "the sightings memory is off (FACEREC_SIGHTINGS=0)"

    def record(self, matches: list[FaceMatch], embeddings: np.ndarray, trusted_threshold: float,
               crops: list | None = None) -> None:
        """Keep each face of an identification named at or above `trusted_threshold` (the default rate's
        threshold, whatever the caller asked for) as a sighting of that person; sets `match.sighting_id`.
        `crops`: the aligned faces, kept with the sighting (with its box and landmarks) so that a confirmation
        can learn it as a template (`facerec.gallery.templates`)."""
        crops = crops if crops is not None else [None] * len(matches)
        named = [(match, embedding, crop) for match, embedding, crop in zip(matches, embeddings, crops)
                 if match.name is not None and match.score >= trusted_threshold]
        if not named or not self.enabled:
            return
        store = self._store
        try:
            with store.sightings_transaction() as tx:
                for match, embedding, crop in named:
                    person = tx.people.by_id(match.candidates[0].identity_id)
                    if person is None:  # deleted since the search
                        continue
                    match.sighting_id = self._same_photo_kept(tx, person.id, embedding)
                    if match.sighting_id is None and self._paced_out(tx, person.id):
                        continue
                    if match.sighting_id is None:
                        match.sighting_id = tx.sightings.add(person.id, embedding, self._model_id,
                                                             match.similarity, IDENTIFIED, self._capacity,
                                                             face=kept_face(match.face, crop),
                                                             score=match.score)
        except (StorageFull, DatabaseFailure) as error:  # best effort: the answer matters more than its memory
            for match, _embedding, _crop in named:
                match.sighting_id = None
            log.warning("facerec: an identification was answered but not kept as a sighting (%s)",
                        one_line(error, 200))

    def _paced_out(self, tx, identity_id: int) -> bool:
        """Whether this person already has `per_hour` automatic sightings from the last hour."""
        since = utcnow() - timedelta(hours=1)
        return tx.sightings.count_since(identity_id, IDENTIFIED, since) >= self._per_hour

    def _same_photo_kept(self, tx, identity_id: int, embedding: np.ndarray) -> int | None:
        """The id of one of this person's latest `lookback` sightings that is this face again (cosine >=
        SAME_PHOTO_COSINE). An older repeat counts as a new sighting: by then the person has been seen
        `lookback` times since, and one more row changes nothing the Health tab reads."""
        ids, kept = tx.sightings.embeddings_of(identity_id, self._model_id, self._lookback)
        if not len(ids):
            return None
        similarities = kept @ np.asarray(embedding, np.float32)
        best = int(np.argmax(similarities))
        return int(ids[best]) if similarities[best] >= SAME_PHOTO_COSINE else None

    def confirm(self, sighting_id: int) -> SightingInfo:
        """The user says the identification was right."""
        return self._relabel(sighting_id, None, CONFIRMED)

    def correct(self, sighting_id: int, identity: str | int) -> SightingInfo:
        """The user says this face is `identity` (an enrolled person), whoever it was named as."""
        return self._relabel(sighting_id, identity, CORRECTED)

    def usable(self, sighting_ids: list[int], quality) -> list[bool]:
        """Whether each kept sighting's face is good enough to learn from, by the enrollment quality check
        (`facerec.faces.quality`: the one learning a face applies); a sighting kept without its face cannot be
        judged and counts as usable."""
        with self._store.reading() as tables:
            kept = [tables.sightings.get(int(i)) for i in sighting_ids]
            faces = [(s.crop_jpeg, s.box, s.landmarks) if s is not None else (None, None, None) for s in kept]
        answers = []
        for crop_jpeg, box, landmarks in faces:
            if crop_jpeg is None or not box or not landmarks:
                answers.append(True)
                continue
            judged = quality.assess(DetectedFace.kept(box, landmarks), decode_crop(crop_jpeg))
            answers.append(judged is None or not judged.low)
        return answers

    def face_of(self, sighting_id: int) -> tuple[np.ndarray, int, bytes | None]:
        """(embedding, identity id, aligned crop JPEG or None) of a kept sighting."""
        with self._store.reading() as tables:
            sighting = self._sighting(tables, sighting_id)
            return (np.frombuffer(sighting.embedding, np.float32).copy(), int(sighting.identity_id),
                    sighting.crop_jpeg)

    def reject(self, sighting_id: int) -> SightingInfo:
        """The user says the face is nobody enrolled: it is forgotten."""
        with self._store.sightings_transaction() as tx:
            sighting = self._sighting(tx, sighting_id)
            name = tx.people.by_id(sighting.identity_id).name  # read in the write it guards, not beside it
            info = SightingInfo(sighting.id, name, "rejected", sighting.similarity)
            tx.sightings.remove(sighting)
        return info

    def label_face(self, embedding: np.ndarray, identity: str | int, source: str = CORRECTED,
                   face: dict | None = None) -> SightingInfo:
        """A face that was not kept as a sighting, labelled by the user: a new corrected sighting (below the
        threshold), or a confirmed one (`source` CONFIRMED: named, but past the pace of automatic sightings).
        `face`: its aligned crop, box and landmarks (`kept_face`), so that it can be learned as a template."""
        self._refuse_when_disabled()
        store = self._store
        with store.sightings_transaction() as tx:
            person = find_identity(tx, identity)
            similarity = self._similarity_to(person.id, embedding)
            sighting_id = tx.sightings.add(person.id, embedding, self._model_id, similarity, source,
                                           self._capacity, face=face if self._store_crops else None)
            return SightingInfo(sighting_id, person.name, source, similarity)

    def forget_when_disabled(self) -> int:
        """With the memory off (privacy mode, or a size of 0), the sightings kept before go too; how many."""
        if self.enabled or not self._store.sightings.count():
            return 0
        return self.clear()

    def clear(self) -> int:
        """Forget every sighting (the model changed, or the user asked); how many went."""
        with self._store.sightings_transaction() as tx:
            return tx.sightings.clear()

    def count(self) -> int:
        return self._store.sightings.count(self._model_id)

    def trustworthy_rows(self, threshold: float) -> SightingRows:
        """The sightings Health may read: every one a user confirmed or corrected, and automatic ones at or above
        `threshold` (today's default-rate threshold, on the score identify decides with: rows kept under an older,
        looser rule are left out, and so are automatic ones kept before scores, which have none)."""
        rows = self._store.sightings.rows(self._model_id)
        keep = np.array([source != IDENTIFIED or score >= threshold  # NaN (no score kept) is never >=
                         for source, score in zip(rows.sources, rows.scores)], bool)
        return rows.select(keep) if len(rows) else rows

    def _relabel(self, sighting_id: int, identity: str | int | None, source: str) -> SightingInfo:
        store = self._store
        with store.sightings_transaction() as tx:
            sighting = self._sighting(tx, sighting_id)
            person = (tx.people.by_id(sighting.identity_id) if identity is None
                      else find_identity(tx, identity))
            similarity = (sighting.similarity if person.id == sighting.identity_id
                          else self._similarity_to(person.id, np.frombuffer(sighting.embedding, np.float32)))
            tx.sightings.relabel(sighting, person.id, source, similarity)
            return SightingInfo(sighting.id, person.name, source, similarity)

    def _sighting(self, tx, sighting_id: int):
        self._refuse_when_disabled()
        sighting = tx.sightings.get(int(sighting_id))
        if sighting is None or sighting.model_id != self._model_id:
            raise UnknownSighting(f"no sighting {sighting_id} is kept (the memory holds the latest "
                                  f"{self._capacity:,}; it may have been dropped)")
        return sighting

    def _similarity_to(self, identity_id: int, embedding: np.ndarray) -> float:
        """Cosine of the face to the person's best-matching enrolled face."""
        _face_ids, _identities, enrolled = self._store.faces.of_people([identity_id])
        return float(np.max(enrolled @ np.asarray(embedding, np.float32))) if len(enrolled) else 0.0

    def _refuse_when_disabled(self) -> None:
        if not self.enabled:
            raise InvalidArgument(f"No sightings are kept: {self.why_disabled()}.")


def kept_face(face, crop) -> dict | None:
    """What a sighting keeps of its face for learning: the aligned crop, box and landmarks (None without a crop)."""
    if crop is None:
        return None
    data = face.to_dict()
    return {"crop_jpeg": encode_crop(crop), "box": data["box"], "landmarks": data["landmarks"]}
