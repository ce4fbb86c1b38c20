"""The sightings memory: recent identifications, kept as the embedding metrics' cross-batch memory.

A one-photo-per-person gallery has no positives, so its health figures that need them are undefined. But every
confident identification is a fresh photo of an enrolled person with its label: `record` keeps (embedding,
person, time) of each face of `identify` that clears the threshold the policy sets for the gallery's default
stranger-match rate, and a user's one click turns a face into a labelled one (`confirm`, `correct`; `reject` says
it was nobody enrolled and forgets it). The health report then scores enrolled faces and sightings together
(`facerec.gallery.sightings_health`).

Trust: what a caller controls never reaches the memory. An identify with a lowered pin or a looser rate still
answers at it, but its faces are kept only where they clear the default-rate threshold, so an automatic sighting
is exactly as trustworthy as the gallery's own answer at the rate it promises, whoever asked (any caller may
write one: a kept sighting says nothing the same caller could not learn from a default identify). The same photo
sent again is one sighting, not many (a near-identical face of the same person is not added twice), so a caller
cannot fill the memory with one face. What a user confirmed or corrected is evicted only after every automatic
sighting; Health reads automatic sightings only at or above today's default-rate threshold.

Bounded: at most `Settings.sightings_memory` rows (default 10,000), the oldest automatic ones dropped first; no
photo is ever kept. None at all in privacy mode (`store_crops` off) or with a memory of 0: a gallery opened so forgets those
kept before. A person's sightings go with them;
all of them go when the gallery changes model (`reindex`), since embeddings of two models do not compare.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy.exc import SQLAlchemyError

from facerec.errors import InvalidArgument, StorageFull, UnknownSighting
from facerec.gallery.results import FaceMatch
from facerec.gallery.people import find_identity

if TYPE_CHECKING:
    from facerec.gallery import Gallery

IDENTIFIED, CONFIRMED, CORRECTED = "identified", "confirmed", "corrected"
SAME_PHOTO_COSINE = 0.995  # a face this close to a kept sighting of the same person is that photo again
log = logging.getLogger("facerec.gallery")


@dataclass
class SightingInfo:
    id: int
    name: str
    source: str
    similarity: float

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "source": self.source, "similarity": round(self.similarity, 4)}


def enabled(gallery: Gallery) -> bool:
    settings = gallery.settings
    return settings.store_crops and settings.sightings_memory > 0


def why_disabled(gallery: Gallery) -> str:
    if not gallery.settings.store_crops:
        return "privacy mode keeps no sightings (FACEREC_STORE_CROPS=0)"
    return "the sightings memory is off (FACEREC_SIGHTINGS=0)"


def record(gallery: Gallery, matches: list[FaceMatch], embeddings: np.ndarray, trusted_threshold: float) -> None:
    """Keep each face of an identification named at or above `trusted_threshold` (the default rate's threshold,
    whatever the caller asked for) as a sighting of that person; sets `match.sighting_id`."""
    named = [(match, embedding) for match, embedding in zip(matches, embeddings)
             if match.name is not None and match.similarity >= trusted_threshold]
    if not named or not enabled(gallery):
        return
    store = gallery.store
    try:
        with store.writing_sightings() as session, session.begin():
            for match, embedding in named:
                person = store.identity_by_id(session, match.candidates[0].identity_id)
                if person is None:  # deleted since the search
                    continue
                match.sighting_id = _same_photo_kept(gallery, session, person.id, embedding)
                if match.sighting_id is None:
                    match.sighting_id = store.sightings.add(session, person.id, embedding, gallery.model_id,
                                                            match.similarity, IDENTIFIED,
                                                            gallery.settings.sightings_memory)
    except (StorageFull, SQLAlchemyError) as error:  # best effort: the answer matters more than the memory of it
        for match, _embedding in named:
            match.sighting_id = None
        log.warning("facerec: an identification was answered but not kept as a sighting (%s)",
                    " ".join(str(error).split())[:200])


def _same_photo_kept(gallery: Gallery, session, identity_id: int, embedding: np.ndarray) -> int | None:
    """The id of a kept sighting of this person that is this face again (cosine >= SAME_PHOTO_COSINE), if any."""
    ids, kept = gallery.store.sightings.embeddings_of(session, identity_id, gallery.model_id)
    if not len(ids):
        return None
    similarities = kept @ np.asarray(embedding, np.float32)
    best = int(np.argmax(similarities))
    return int(ids[best]) if similarities[best] >= SAME_PHOTO_COSINE else None


def trustworthy(rows, threshold: float):
    """The sightings Health may read: every one a user confirmed or corrected, and automatic ones at or above
    `threshold` (today's default-rate threshold: rows kept under an older, looser rule are left out)."""
    keep = np.array([source != IDENTIFIED or similarity >= threshold
                     for source, similarity in zip(rows.sources, rows.similarities)], bool)
    return rows.select(keep) if len(rows) else rows


def confirm(gallery: Gallery, sighting_id: int) -> SightingInfo:
    """The user says the identification was right."""
    return _relabel(gallery, sighting_id, None, CONFIRMED)


def correct(gallery: Gallery, sighting_id: int, identity: str | int) -> SightingInfo:
    """The user says this face is `identity` (an enrolled person), whoever it was named as."""
    return _relabel(gallery, sighting_id, identity, CORRECTED)


def reject(gallery: Gallery, sighting_id: int) -> SightingInfo:
    """The user says the face is nobody enrolled: it is forgotten."""
    store = gallery.store
    with store.writing_sightings() as session, session.begin():
        sighting = _sighting(gallery, session, sighting_id)
        info = SightingInfo(sighting.id, store.names([sighting.identity_id])[sighting.identity_id], "rejected",
                            sighting.similarity)
        store.sightings.remove(session, sighting)
    return info


def label_face(gallery: Gallery, embedding: np.ndarray, identity: str | int) -> SightingInfo:
    """A face that was not named (below the threshold), labelled by the user: a new corrected sighting."""
    _refuse_when_disabled(gallery)
    store = gallery.store
    with store.writing_sightings() as session, session.begin():
        person = find_identity(store, session, identity)
        similarity = _similarity_to(gallery, person.id, embedding)
        sighting_id = store.sightings.add(session, person.id, embedding, gallery.model_id, similarity, CORRECTED,
                                          gallery.settings.sightings_memory)
        return SightingInfo(sighting_id, person.name, CORRECTED, similarity)


def forget_when_disabled(gallery: Gallery) -> int:
    """With the memory off (privacy mode, or a size of 0), the sightings kept before go too; how many."""
    if enabled(gallery) or not gallery.store.sightings.count():
        return 0
    return clear(gallery)


def clear(gallery: Gallery) -> int:
    """Forget every sighting (the model changed, or the user asked); how many went."""
    with gallery.store.writing_sightings() as session, session.begin():
        return gallery.store.sightings.clear(session)


def _relabel(gallery: Gallery, sighting_id: int, identity: str | int | None, source: str) -> SightingInfo:
    store = gallery.store
    with store.writing_sightings() as session, session.begin():
        sighting = _sighting(gallery, session, sighting_id)
        person = (store.identity_by_id(session, sighting.identity_id) if identity is None
                  else find_identity(store, session, identity))
        similarity = (sighting.similarity if person.id == sighting.identity_id
                      else _similarity_to(gallery, person.id, np.frombuffer(sighting.embedding, np.float32)))
        store.sightings.relabel(session, sighting, person.id, source, similarity)
        return SightingInfo(sighting.id, person.name, source, similarity)


def _sighting(gallery: Gallery, session, sighting_id: int):
    _refuse_when_disabled(gallery)
    sighting = gallery.store.sightings.get(session, int(sighting_id))
    if sighting is None or sighting.model_id != gallery.model_id:
        raise UnknownSighting(f"no sighting {sighting_id} is kept (the memory holds the latest "
                              f"{gallery.settings.sightings_memory:,}; it may have been dropped)")
    return sighting


def _similarity_to(gallery: Gallery, identity_id: int, embedding: np.ndarray) -> float:
    """Cosine of the face to the person's best-matching enrolled face."""
    _face_ids, _identities, enrolled = gallery.store.faces_of([identity_id])
    return float(np.max(enrolled @ np.asarray(embedding, np.float32))) if len(enrolled) else 0.0


def _refuse_when_disabled(gallery: Gallery) -> None:
    if not enabled(gallery):
        raise InvalidArgument(f"No sightings are kept: {why_disabled(gallery)}.")
