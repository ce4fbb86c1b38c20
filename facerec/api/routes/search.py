"""Identify and verify photos (a video: `facerec.api.routes.video`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

import facerec.api.schemas as schemas
from facerec.access.api_keys import ApiKey
from facerec.api.auth import READ
from facerec.api.routes.common import (
    ApiContext, FaceIndex, Fpir, Photo, Threshold, TopK, concern_router, error_responses
)
from facerec.words.threshold import worded


def router(context: ApiContext) -> APIRouter:
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    router = concern_router()

    @router.post("/identify", response_model=schemas.Identified, dependencies=[READ], tags=["search"],
                 summary="Name every face in a photo", responses=error_responses(400, 413))
    async def identify(photo: Photo, key: Annotated[ApiKey, READ], top_k: TopK = 3, fpir: Fpir = None,
                       threshold: Threshold = None):
        """Each face: its box, the name (or 'unknown' below the threshold), its score and similarity, the top_k
        candidates; and the threshold used with its expected stranger-match rate for this gallery. For an admin key,
        each face not kept as a sighting has a `label_token` to label it later."""
        decoded = await context.photo(photo)
        matches = await context.run(gallery.identify, decoded, top_k=top_k, threshold=threshold, fpir=fpir)
        rule = matches[0].rule
        tokens = ([None if m.sighting_id is not None else services.feedback.token(m.embedding, m.face, m.crop)
                   for m in matches] if key.role == "admin" else None)
        return schemas.Identified.of(matches, top_k, rule, services.thresholds.typical_cosine(rule.threshold),
                                     tokens)


    @router.post("/verify", response_model=schemas.Verified, dependencies=[READ], tags=["search"],
                 summary="Are the faces of two photos the same person? (a photo with several faces needs "
                         "face_a / face_b)", responses=error_responses(400, 413, 422))
    async def verify(photo_a: Photo, photo_b: Photo, fpir: Fpir = None, threshold: Threshold = None,
                     face_a: FaceIndex = None, face_b: FaceIndex = None):
        first = await context.photo(photo_a, "the first photo")
        second = await context.photo(photo_b, "the second photo")
        result = await context.run(gallery.verify, first, second, threshold=threshold, fpir=fpir, face_a=face_a,
                                   face_b=face_b)
        return worded(result.to_dict(), result.rule)


    return router
