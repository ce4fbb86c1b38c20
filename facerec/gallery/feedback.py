"""What a person tells the gallery about its identifications: the sightings kept were right (confirm), were
someone else (correct), were nobody enrolled (reject), were not the person named (not_this_person: kept as that
person's negative example, `facerec.gallery.negatives`), or a face identify did not keep is someone (label), is
not someone (not_this_face); a REST client names such a face by the signed token its answer carried
(`facerec.gallery.unkept_faces`: `token`, `label_token`, `not_this_token`).

Each answer goes to the sightings memory (`facerec.gallery.sightings`) and, for a caller allowed to teach it
(`learn_by`: who, with the admin password or an admin key), to the person's templates
(`facerec.gallery.templates`); an answer that takes back an identification also undoes what it taught."""

from __future__ import annotations

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import InvalidArgument, UnknownSighting
from facerec.faces.detect import DetectedFace
from facerec.faces.pipeline import Photo
from facerec.gallery.sightings import (
    CONFIRMED,
    CORRECTED,
    SightingInfo,
    SightingsMemory,
    kept_face,
)
from facerec.gallery.negatives import Negatives
from facerec.gallery.templates import Templates
from facerec.gallery.unkept_faces import UnkeptFaces


class SightingsFeedback:
    def __init__(self, core: Core, *, sightings: SightingsMemory, templates: Templates, negatives: Negatives,
                 unkept: UnkeptFaces) -> None:
        self._sightings, self._templates, self._pipeline = sightings, templates, core.pipeline
        self._negatives, self._unkept = negatives, unkept

    def not_this_person(self, sighting_id: int, by: str) -> SightingInfo:
        """The face kept as this sighting is not the person it was named as: it becomes their negative example
        (with its crop where crops are kept), what it taught them is undone, and the sighting is forgotten."""
        embedding, identity_id, crop = self._sightings.face_of(sighting_id)
        negative = self._negatives.say_not(identity_id, embedding, by, crop, sighting_id)
        info = self.reject(sighting_id)
        info.source = "not this person"
        info.negative_id = negative.id
        return info

    def not_this_face(self, embedding: np.ndarray, identity: str | int, by: str,
                      crop: np.ndarray | None = None) -> int:
        """A face identify did not keep (its `FaceMatch.embedding`, or a track's pool) is not `identity`: kept as
        their negative example; returns its id."""
        from facerec.formats.archive import encode_crop

        crop_jpeg = None if crop is None else encode_crop(crop)
        return self._negatives.say_not(identity, embedding, by, crop_jpeg).id

    def confirm(self, sighting_id: int, learn_by: str | None = None) -> SightingInfo:
        """The identification kept as this sighting was right; with `learn_by` its face is learned as a template."""
        info = self._sightings.confirm(sighting_id)
        if learn_by:
            info.learning = self._templates.learn(sighting_id, learn_by).to_dict()
        return info

    def correct(self, sighting_id: int, identity: str | int, learn_by: str | None = None) -> SightingInfo:
        """The face kept as this sighting is `identity`; what it taught another person is undone, and with
        `learn_by` it is learned for this one."""
        info = self._sightings.correct(sighting_id, identity)
        undone = self._templates.forget_learned_from(sighting_id)
        info.undone = undone.to_dict() if undone.removed else None
        if learn_by:
            info.learning = self._templates.learn(sighting_id, learn_by).to_dict()
        return info

    def reject(self, sighting_id: int) -> SightingInfo:
        """The face kept as this sighting is nobody enrolled: forget it and undo what it taught, also when the
        sighting itself was cleared or evicted meanwhile (a learned template keeps its sighting's id)."""
        undone = self._templates.forget_learned_from(sighting_id)
        try:
            info = self._sightings.reject(sighting_id)
        except (UnknownSighting, InvalidArgument):  # not kept (any more), or the memory is off: undone all the same
            if not undone.removed:
                raise
            info = SightingInfo(int(sighting_id), undone.name, "rejected", undone.similarity)
        info.undone = undone.to_dict() if undone.removed else None
        return info

    def label(self, embedding: np.ndarray, identity: str | int, confirmed: bool = False,
              photo: Photo | None = None, face: DetectedFace | None = None, learn_by: str | None = None,
              crop: np.ndarray | None = None) -> SightingInfo:
        """A face identify did not keep (its `FaceMatch.embedding`, [512], or a video track's pool) is `identity`:
        kept as a corrected sighting, or with `confirmed` as a confirmed one (a named face past the pace of
        automatic sightings). With its `face` and the `photo` it was found in, or its aligned `crop` (a track's best
        view: a video keeps no photo), the aligned face is kept too, and with `learn_by` learned as a template."""
        if crop is None and photo is not None and face is not None:
            crop = self._pipeline.embed(photo, [face])[0][0]
        return self._labelled(embedding, identity, confirmed, None if face is None else kept_face(face, crop),
                              learn_by)

    def token(self, embedding: np.ndarray, face: DetectedFace | None = None, crop: np.ndarray | None = None) -> str:
        """A signed token of a face identify did not keep (a track's pool and best view), which an admin's REST
        client sends back to label it (`label_token`) or deny it (`not_this_token`)."""
        return self._unkept.token(embedding, face, crop)

    def label_token(self, token: str, identity: str | int, confirmed: bool = False,
                    learn_by: str | None = None) -> SightingInfo:
        """`label` for the face a token holds."""
        unkept = self._unkept.read(token)
        return self._labelled(unkept.embedding, identity, confirmed, unkept.kept, learn_by)

    def not_this_token(self, token: str, identity: str | int, by: str) -> int:
        """`not_this_face` for the face a token holds; the negative example's id."""
        unkept = self._unkept.read(token)
        crop_jpeg = None if unkept.kept is None else unkept.kept["crop_jpeg"]
        return self._negatives.say_not(identity, unkept.embedding, by, crop_jpeg).id

    def _labelled(self, embedding: np.ndarray, identity: str | int, confirmed: bool, kept: dict | None,
                  learn_by: str | None) -> SightingInfo:
        """A face not kept, kept now as a sighting of `identity` (with what `kept_face` keeps of it), and learned."""
        info = self._sightings.label_face(embedding, identity, CONFIRMED if confirmed else CORRECTED, kept)
        if learn_by:
            info.learning = self._templates.learn(info.id, learn_by).to_dict()
        return info

    def clear(self) -> int:
        """Forget every kept sighting; how many."""
        return self._sightings.clear()
