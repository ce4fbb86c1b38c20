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
from facerec.gallery.thresholds import GalleryThresholds
from facerec.messages import no_face_message
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.storage import Store
from facerec.vectors.base import VectorIndex


class Search:
    """Identify and verify over one gallery: the photo pipeline, the store (names), the vector index (faces), the
    threshold in force and the sightings memory that confident answers are kept in."""

    def __init__(self, pipeline: FacePipeline, store: Store, index: VectorIndex, thresholds: GalleryThresholds,
                 memory: SightingsMemory, model_id: str, min_face_size: float) -> None:
        self.pipeline, self.store, self.index, self.thresholds = pipeline, store, index, thresholds
        self.memory, self.model_id, self.min_face_size = memory, model_id, min_face_size

    def identify(self, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
                 fpir: float | None = None, remember: bool = True) -> FoundFaces:
        """`Gallery.identify`."""
        if top_k < 1:
            raise InvalidArgument("top_k must be at least 1")
        photo, faces = decoded_faces(self.pipeline, photo)
        if not faces:
            raise NoFace(no_face_message(photo.shape, self.min_face_size))
        _crops, embeddings = self.pipeline.embed(photo, faces)
        ranked = self.search(embeddings, top_k)
        rule = self.thresholds.in_force(fpir=fpir, threshold=threshold, with_people=True)  # worded as everywhere
        matches = [_match(face, candidates, rule, embedding) for face, candidates, embedding
                   in zip(faces, ranked, embeddings)]
        if remember:  # kept only at the default rate's threshold: a caller's pin or rate never reaches the memory
            trusted = rule if fpir is None and threshold is None else self.thresholds.in_force()
            self.memory.record(matches, embeddings, trusted.threshold)
        return FoundFaces(matches, found=faces.found)  # how many faces the photo had, beyond the largest kept

    def search(self, embeddings: np.ndarray, top_k: int = 5) -> list[list[Candidate]]:
        """`Gallery.search`: the index's top faces, best face per identity."""
        warning = model_warning(self.store, self.model_id)
        if warning:
            raise ModelMismatch(warning)
        self.index.sync(self.store)
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
        """`Gallery.verify`."""
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
