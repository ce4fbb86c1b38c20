"""Search: which enrolled people a face is (identify, 1:N), and whether two photos show one person (verify, 1:1)."""

from __future__ import annotations

import numpy as np

from facerec.errors import InvalidArgument, ModelMismatch, NoFace
from facerec.faces.detect import DetectedFace, FoundFaces
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import FacePipeline, Photo
from facerec.gallery.face_choice import chosen_face, decoded_faces
from facerec.gallery.reindex import model_warning
from facerec.gallery.results import Candidate, FaceMatch, VerifyResult
from facerec.gallery.sightings import SightingsMemory
from facerec.gallery.strangers import StrangersMemory
from facerec.gallery.thresholds import GalleryThresholds
from facerec.messages import no_face_message
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.storage import Store
from facerec.vectors.base import VectorIndex


class Search:
    """Identify and verify over one gallery: the photo pipeline, the store (names), the vector index (faces), the
    threshold in force, the sightings memory that confident answers are kept in, and the strangers memory that
    unknown faces are kept in when the operator opted in."""

    def __init__(self, pipeline: FacePipeline, store: Store, index: VectorIndex, thresholds: GalleryThresholds,
                 memory: SightingsMemory, strangers: StrangersMemory, model_id: str, min_face_size: float) -> None:
        self.pipeline, self.store, self.index, self.thresholds = pipeline, store, index, thresholds
        self.memory, self.strangers, self.model_id, self.min_face_size = memory, strangers, model_id, min_face_size
        self._model_checked_at: int | None = None  # the journal position the model check last ran at

    def identify(self, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
                 fpir: float | None = None, remember: bool = True, not_below_default: bool = False) -> FoundFaces:
        """Every face in the photo -> best identity (or unknown below the threshold) and top-k candidates.

        The threshold is the one in force for this gallery (`threshold_in_force`); `fpir` (an accepted
        stranger-match rate) or `threshold` (a pinned cosine) overrides the settings for this call. Each named
        face is kept in the sightings memory (`sightings`; `sighting_id` in its match) unless `remember` is
        False, privacy mode is on or the memory is off; each unknown face likewise in the strangers memory, only when
        suggestions are on (`facerec.gallery.strangers`). `not_below_default`: for a caller without the admin
        password, a rate or pin that would loosen the threshold in force falls back to it.

        How: one journal sync, one model check only when the journal has moved, one threshold rule (two only when
        a caller asks for another rate or pin, and the default is needed beside it)."""
        if top_k < 1:
            raise InvalidArgument("top_k must be at least 1")
        photo, faces = decoded_faces(self.pipeline, photo)
        if not faces:
            raise NoFace(no_face_message(photo.shape, self.min_face_size))
        crops, embeddings = self.pipeline.embed(photo, faces)
        self._sync()
        ranked = self._ranked(embeddings, top_k)
        default = self.thresholds.is_default(fpir, threshold)
        rule = self.thresholds.synced(*((None, None) if default else (fpir, threshold)), with_people=True)
        trusted = rule if default else None
        if not default and (not_below_default or remember):
            trusted = self.thresholds.synced(with_people=True)
            if not_below_default and rule.threshold < trusted.threshold:
                rule = trusted  # a caller without the password never loosens the rule in force
        matches = [_match(face, candidates, rule, embedding) for face, candidates, embedding
                   in zip(faces, ranked, embeddings)]
        if remember:  # kept only at the default rate's threshold: a caller's pin or rate never reaches the memory
            self.memory.record(matches, embeddings, trusted.threshold, crops)
            self.strangers.keep(photo.sha256, matches, embeddings, trusted.threshold, crops)
        return FoundFaces(matches, found=faces.found)  # how many faces the photo had, beyond the largest kept

    def search(self, embeddings: np.ndarray, top_k: int = 5) -> list[list[Candidate]]:
        """Top-k identities (best face per identity) for each query embedding [Q, 512]."""
        self._sync()
        return self._ranked(embeddings, top_k)

    def _sync(self) -> None:
        """Bring the index to the journal's head, and refuse to search another model's embeddings. The model
        check is a query, so it runs at open and again only when the journal has moved (a reindex, an import or
        another replica's write moves it)."""
        self.index.sync(self.store)
        if self._model_checked_at != self.index.seq:
            warning = model_warning(self.store, self.model_id)
            if warning:
                raise ModelMismatch(warning)
            self._model_checked_at = self.index.seq

    def _ranked(self, embeddings: np.ndarray, top_k: int) -> list[list[Candidate]]:
        similarities, face_ids = self.index.search(embeddings, top_k * 4)
        labels = self.store.faces.labels(sorted({int(f) for f in face_ids.ravel() if f >= 0}))
        results = []
        for sims, ids in zip(similarities, face_ids):
            best: dict[int, Candidate] = {}
            for sim, face_id in zip(sims, ids):
                if face_id < 0 or int(face_id) not in labels:
                    continue
                identity_id, name = labels[int(face_id)]
                if identity_id not in best or sim > best[identity_id].similarity:
                    best[identity_id] = Candidate(name, identity_id, float(sim))
            results.append(sorted(best.values(), key=lambda c: -c.similarity)[:top_k])
        return results

    def verify(self, photo_a: ImageInput | Photo, photo_b: ImageInput | Photo, threshold: float | None = None,
               fpir: float | None = None, face_a: int | None = None, face_b: int | None = None) -> VerifyResult:
        """Same person or not: compares one face of each photo, at the threshold the policy gives one comparison
        (`verification_threshold`; `fpir` or a pinned `threshold` override it for this call).

        A photo with several faces needs `face_a` / `face_b` (its face's index, left to right from 0, as `detect`
        lists them); MultipleFaces otherwise, never a silent guess. NoFace when a photo has none."""
        rule = self.thresholds.for_verification(fpir=fpir, threshold=threshold)
        embeddings, faces = [], []
        for label, source, index in (("the first photo", photo_a, face_a), ("the second photo", photo_b, face_b)):
            photo, detected = decoded_faces(self.pipeline, source)
            face = chosen_face(photo, detected, index, label, self.min_face_size)
            embeddings.append(self.pipeline.embed(photo, [face])[1][0])
            faces.append(face)
        similarity = float(np.dot(embeddings[0], embeddings[1]))
        return VerifyResult(similarity >= rule.threshold, similarity, rule.threshold, faces[0], faces[1], rule)


def _match(face: DetectedFace, candidates: list[Candidate], rule: ThresholdInForce,
           embedding: np.ndarray) -> FaceMatch:
    if candidates and candidates[0].similarity >= rule.threshold:
        return FaceMatch(face, candidates[0].name, candidates[0].similarity, candidates, rule.threshold, rule,
                         embedding)
    best = candidates[0].similarity if candidates else None
    return FaceMatch(face, None, best, candidates, rule.threshold, rule, embedding)
