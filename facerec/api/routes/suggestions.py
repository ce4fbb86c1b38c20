"""Suggested people (opt-in: FACEREC_SUGGESTIONS=on): people seen again and again, not enrolled."""

from __future__ import annotations

import base64
from typing import Annotated

from fastapi import APIRouter, Query

import facerec.api.schemas as schemas
from facerec.api.auth import ADMIN
from facerec.api.routes.common import MAX_ID, ApiContext, SuggestionId, concern_router, error_responses
from facerec.gallery.suggestions import MAX_PAGE as MAX_SUGGESTIONS_PAGE
from facerec.gallery.suggestions import PAGE as SUGGESTIONS_PAGE


def router(context: ApiContext) -> APIRouter:
    services = context.gallery.services()  # what the verbs do not offer
    router = concern_router()

    @router.get("/suggestions", response_model=schemas.Suggestions, dependencies=[ADMIN], tags=["suggestions"],
                summary="People seen again and again but not enrolled, one page at a time")
    async def list_suggestions(offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
                               limit: Annotated[int, Query(ge=1, le=MAX_SUGGESTIONS_PAGE)] = SUGGESTIONS_PAGE):
        page = await context.run(services.suggestions.list, offset, limit)
        on = services.strangers.enabled
        return {"on": on, "off_because": None if on else services.strangers.why_disabled(), **page.to_dict()}

    @router.get("/suggestions/{suggestion_id}/faces", response_model=schemas.SuggestionFaces, dependencies=[ADMIN],
                tags=["suggestions"], summary="A suggestion's faces (aligned, JPEG)", responses=error_responses(404))
    async def suggestion_faces(suggestion_id: SuggestionId):
        suggestion = await context.run(services.suggestions.get, suggestion_id)
        crops = await context.run(services.suggestions.crops, suggestion.face_ids)
        return {"id": suggestion.id, "faces": [{"face_id": f, "jpeg_base64": base64.b64encode(crops[f]).decode()}
                                               for f in suggestion.face_ids if f in crops]}

    @router.post("/suggestions/{suggestion_id}/name", status_code=201, response_model=schemas.NamedSuggestion,
                 dependencies=[ADMIN], tags=["suggestions"], responses=error_responses(404, 409),
                 summary="Enroll a suggested person from their best faces")
    async def name_suggestion(suggestion_id: SuggestionId, naming: schemas.NameSuggestion):
        return (await context.run(services.suggestions.name, suggestion_id, naming.name, naming.note)).to_dict()

    @router.delete("/suggestions/{suggestion_id}", response_model=schemas.Dismissed, dependencies=[ADMIN],
                   tags=["suggestions"], responses=error_responses(404),
                   summary="Dismiss a suggestion: forget its faces")
    async def dismiss_suggestion(suggestion_id: SuggestionId):
        return {"id": suggestion_id, "forgotten": await context.run(services.suggestions.dismiss, suggestion_id)}


    return router
