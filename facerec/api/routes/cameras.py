"""The cameras `facerec watch` follows with this gallery (#67): their state and recent events, from the status file
it writes under the gallery's home. Admin keys only: the events name the people who came."""

from __future__ import annotations

from fastapi import APIRouter

from facerec.api.auth import ADMIN
from facerec.api.routes.common import ApiContext, concern_router
from facerec.cameras.status_file import read_status


def router(context: ApiContext) -> APIRouter:
    home = context.gallery.services().settings.home
    router = concern_router()

    @router.get("/cameras", dependencies=[ADMIN], tags=["cameras"],
                summary="The watched cameras' state and recent events (facerec watch)")
    async def cameras():
        status = await context.run(read_status, home)
        return status or {"running": False, "written_at": None, "cameras": [], "sinks": []}

    return router
