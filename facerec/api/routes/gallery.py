"""The gallery as a whole: its health, export and import."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Query, UploadFile
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

import facerec.api.schemas as schemas
from facerec.api.auth import ADMIN
from facerec.api.routes.common import ApiContext, concern_router, error_responses
from facerec.api.uploads import save_upload
from facerec.words.health import health_in_words


def router(context: ApiContext) -> APIRouter:
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    router = concern_router()

    @router.get("/gallery/health", response_model=schemas.Health, dependencies=[ADMIN], tags=["gallery"],
                summary="Embedding metrics, confusable pairs and suspected duplicates")
    async def health():
        return health_in_words(await context.run(gallery.health))

    @router.get("/gallery/export", response_class=FileResponse, dependencies=[ADMIN], tags=["gallery"],
                summary="Download the gallery as a portable zip (names, embeddings, optional face crops)",
                responses={200: {"content": {"application/zip": {}}}})
    async def export(include_crops: Annotated[bool, Query(description="also the 112x112 face crops")] = True):
        folder = Path(tempfile.mkdtemp(prefix="api-export-", dir=context.scratch))
        try:
            path = folder / "facerec-gallery.zip"
            await context.run(gallery.export, path, include_crops=include_crops)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return FileResponse(path, media_type="application/zip", filename=path.name,
                            background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True))

    @router.post("/gallery/import", response_model=schemas.Imported, dependencies=[ADMIN], tags=["gallery"],
                 summary="Add the people of an exported zip, all or nothing", responses=error_responses(400, 413))
    async def import_(archive: Annotated[UploadFile, File(description="a zip made by export")]):
        folder = Path(tempfile.mkdtemp(prefix="api-import-", dir=context.scratch))
        try:
            path = folder / "import.zip"
            await save_upload(archive, path, services.settings.max_import_bytes, "the archive")
            return await context.run(gallery.import_, path)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return router

    return router
