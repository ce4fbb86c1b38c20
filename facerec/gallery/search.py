"""Search: which enrolled people a face is (identify, 1:N), and whether two photos show one person (verify, 1:1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from facerec.faces.detect import DetectedFace
from facerec.errors import InvalidArgument, ModelMismatch, NoFace
from facerec.messages import no_face_message
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import Photo
from facerec.gallery.results import Candidate, FaceMatch, VerifyResult
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.gallery import sightings
from facerec.gallery.face_choice import chosen_face

if TYPE_CHECKING:
    from facerec.gallery import Gallery


def identify(gallery: Gallery, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
             fpir: float | None = None, remember: bool = True) -> list[FaceMatch]:
    """`Gallery.identify`."""
    if top_k < 1:
        raise InvalidArgument("top_k must be at least 1")
    photo, faces = gallery.detect(photo)
    if not faces:
        raise NoFace(no_face_message(photo.pixels.shape, gallery.settings.min_face_size))
    _crops, embeddings = gallery.pipeline.embed(photo, faces)
    ranked = search(gallery, embeddings, top_k)
    rule = gallery.threshold_in_force(fpir=fpir, threshold=threshold)
    matches = [_match(face, candidates, rule, embedding) for face, candidates, embedding
               in zip(faces, ranked, embeddings)]
    if remember:  # kept only at the default rate's threshold: a caller's pin or rate never reaches the memory
        trusted = rule if fpir is None and threshold is None else gallery.threshold_in_force()
        sightings.record(gallery, matches, embeddings, trusted.threshold)
    return matches


def search(gallery: Gallery, embeddings: np.ndarray, top_k: int = 5) -> list[list[Candidate]]:
    """`Gallery.search`: the index's top faces, best face per identity."""
    warning = gallery.model_warning()
    if warning:
        raise ModelMismatch(warning)
    gallery.index.sync(gallery.store)
    similarities, face_ids = gallery.index.search(embeddings, top_k * 4)
    labels = gallery.store.face_labels(sorted({int(f) for f in face_ids.ravel() if f >= 0}))
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


def verify(gallery: Gallery, photo_a: ImageInput | Photo, photo_b: ImageInput | Photo,
           threshold: float | None = None, fpir: float | None = None,
           face_a: int | None = None, face_b: int | None = None) -> VerifyResult:
    """`Gallery.verify`."""
    rule = gallery.verification_threshold(fpir=fpir, threshold=threshold)
    embeddings, faces = [], []
    for label, source, index in (("the first photo", photo_a, face_a), ("the second photo", photo_b, face_b)):
        photo, detected = gallery.detect(source)
        face = chosen_face(photo, detected, index, label, gallery.settings.min_face_size)
        embeddings.append(gallery.pipeline.embed(photo, [face])[1][0])
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
