"""The routes of `/api/v1`, a module per concern (people, search, video, sightings, suggestions, library, cameras, gallery): each
route turns an HTTP request into Gallery calls (most make one) and their result into JSON.

No face logic lives here. Gallery calls block (ONNX, SQLite), so they run in worker threads, at most
`ApiContext.limiter` at a time (the web UI's queue has its own limit); every failure becomes one JSON line
(`facerec.api.errors`), through `OneLineErrors`, the route class of every route."""

from __future__ import annotations

from fastapi import APIRouter

from facerec.api.routes import cameras, gallery, library, people, search, sightings, suggestions, video
from facerec.api.routes.common import ApiContext, OneLineErrors


CONCERNS = (people, search, video, sightings, suggestions, library, cameras, gallery)

__all__ = ["ApiContext", "OneLineErrors", "build_router"]


def build_router(context: ApiContext) -> APIRouter:
    """Every concern's routes, in the order the OpenAPI document lists them."""
    router = APIRouter()
    for concern in CONCERNS:
        router.include_router(concern.router(context))
    return router
