"""A photo library grouped into people (FACEREC_LIBRARY, #66): start a run, read how it stands and its groups,
see a group's faces, name it (enrolls the person), add it to an enrolled person, dismiss it. Admin keys only: the
groups are faces of people, and their hints name enrolled people."""

from __future__ import annotations

import base64
from typing import Annotated

from fastapi import APIRouter, Path, Query

import facerec.api.library_schemas as schemas
from facerec.api.auth import ADMIN
from facerec.api.routes.common import MAX_ID, ApiContext, concern_router, error_responses
from facerec.library.app_runs import LibraryRuns

PAGE, MAX_PAGE = 20, 100  # groups a list answers by default, and at most
GroupNumber = Annotated[int, Path(ge=0, le=MAX_ID, description="the group's number (from the library's groups)")]


def router(context: ApiContext) -> APIRouter:
    library = LibraryRuns(context.gallery.services().settings)
    router = concern_router()

    @router.get("/library", response_model=schemas.Library, dependencies=[ADMIN], tags=["library"],
                summary="How the library run stands, and one page of its groups of people not enrolled")
    async def library_status(offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
                             limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = PAGE):
        return await context.run(_status, library, offset, limit)

    @router.post("/library/run", status_code=202, response_model=schemas.Library, dependencies=[ADMIN],
                 tags=["library"], responses=error_responses(400, 503),
                 summary="Group the library now (in the background; new or changed files only after the first run)")
    async def start_run():
        await context.run(library.start)
        return await context.run(_status, library, 0, PAGE)

    @router.get("/library/groups/{group}/faces", response_model=schemas.LibraryFaces, dependencies=[ADMIN],
                tags=["library"], responses=error_responses(404), summary="A group's faces, cut from its photos")
    async def group_faces(group: GroupNumber):
        pictures = await context.run(library.groups.pictures, group)
        return {"group": group, "faces": [
            {"photo": face["photo"], "box": face["box"],
             "jpeg_base64": base64.b64encode(picture).decode() if picture else None} for face, picture in pictures]}

    @router.post("/library/groups/{group}/name", status_code=201, response_model=schemas.TakenLibraryGroup,
                 dependencies=[ADMIN], tags=["library"], responses=error_responses(404, 409),
                 summary="Enroll a new person from a group's most typical faces")
    async def name_group(group: GroupNumber, naming: schemas.NameLibraryGroup):
        faces = await context.run(library.groups.take, context.gallery, group, naming.name, True)
        return {"group": group, "name": naming.name, "faces": faces}

    @router.post("/library/groups/{group}/add", response_model=schemas.TakenLibraryGroup, dependencies=[ADMIN],
                 tags=["library"], responses=error_responses(404), summary="Add a group's faces to an enrolled person")
    async def add_group(group: GroupNumber, naming: schemas.NameLibraryGroup):
        faces = await context.run(library.groups.take, context.gallery, group, naming.name, False)
        return {"group": group, "name": naming.name, "faces": faces}

    @router.delete("/library/groups/{group}", response_model=schemas.DismissedLibraryGroup, dependencies=[ADMIN],
                   tags=["library"], responses=error_responses(404), summary="Dismiss a group: no longer shown")
    async def dismiss_group(group: GroupNumber):
        await context.run(library.groups.dismiss, group)
        return {"group": group, "status": "dismissed"}

    return router


def _status(library: LibraryRuns, offset: int, limit: int) -> dict:
    status = library.status()
    shown = library.groups.shown() if status["on"] else []
    page = [{"group": number, "faces": len(group["faces"]), "photos": group["photos"],
             "closest_enrolled": group.get("closest_enrolled")} for number, group in shown[offset:offset + limit]]
    return {**status, "groups": page, "total": len(shown), "offset": offset, "limit": limit}
