"""What every concern's routes share: the context (the one Gallery, the worker-thread limiter), the route class
that answers every failure in one JSON line, and the parameters several routes take, each with its bounds and
description (they are the OpenAPI document's)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import anyio
from fastapi import APIRouter, File, Form
from fastapi import Path as PathParam
from fastapi import Query, Request, UploadFile
from fastapi.routing import APIRoute

import facerec.api.schemas as schemas
from facerec.api.errors import error_response
from facerec.api.uploads import read_upload, upload_label
from facerec.gallery import Gallery
from facerec.settings import Settings


MAX_PAGE = 500


@dataclass
class ApiContext:
    """What the routes share: the app's one Gallery, where imports and exports are written for the length of a
    request (None: the system's temporary folder), and what to do after a person is deleted (the web app empties
    its cache of pictures, as its own delete does)."""

    gallery: Gallery
    scratch: Path | None = None
    after_delete: Callable[[], None] | None = None
    limiter: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(4))
    # One video at a time: a video holds a worker for as long as it plays or more, and photos must not wait for
    # several of them (a video's memory is one frame and its tracks, so one at a time bounds it too).
    videos: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))

    async def run(self, function: Callable, *args, **kwargs):
        """`function(*args, **kwargs)` in a worker thread, within the limiter."""
        return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs), limiter=self.limiter)

    async def photo(self, upload: UploadFile, what: str = "the photo"):
        """An uploaded photo, decoded (a `Photo`), named in messages by its file name as the web app names it."""
        data = await read_upload(upload, self.gallery.services().settings.max_upload_bytes, what)
        return await self.run(self.gallery.services().photos.read, data, upload_label(upload))


def concern_router() -> APIRouter:
    """The router of one concern's routes: every failure one JSON line, and the statuses any route may answer."""
    return APIRouter(route_class=OneLineErrors, responses=error_responses(401, 403, 422, 503))


class OneLineErrors(APIRoute):
    """A route whose every exception (the Gallery's, the key check's, a malformed field, a bug) is answered as one
    JSON line with its status, never a traceback."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def answer(request: Request):
            try:
                return await handler(request)
            except Exception as error:  # noqa: BLE001 - every failure becomes one line (errors.error_response)
                return error_response(error)

        return answer


def error_responses(*statuses: int) -> dict:
    return {status: {"model": schemas.Error} for status in statuses}


# Ids and offsets are 64-bit in the database: a larger number is a malformed request (422), not an OverflowError.
MAX_ID = 2**63 - 1
PersonId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the person's id (from enrollment or the people "
                                                                  "list)")]
FaceId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the face's id (from the person's templates)")]
Learn = Annotated[bool, Query(description="learn the face as a template of the person, after the checks of "
                                          "add-photo (at most 10 learned per person)")]
SightingId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the sighting's id (sighting_id of a face "
                                                                    "identify named)")]
SuggestionId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the suggestion's id (from the suggestions "
                                                                      "list)")]
Photo = Annotated[UploadFile, File(description="a JPEG, PNG, WebP or BMP photo, at most 15 MB and 40 megapixels")]
FaceIndex = Annotated[int | None, Form(ge=0, description="which face, when the photo has several (from 0, as "
                                                           "the multiple_faces error lists them)")]
_VIDEO = Settings()  # the default bounds, as the description states them (an operator's own: SECURITY.md)
Video = Annotated[UploadFile, File(description=f"an MP4, MOV, WebM, MKV or AVI video (H.264, VP8/VP9 or MPEG-4), by "
                                               f"default at most {_VIDEO.video_max_bytes >> 20} MB, "
                                               f"{_VIDEO.video_max_seconds:g} s and {_VIDEO.video_max_frames:,} "
                                               f"frames; frames over {_VIDEO.video_max_side} pixels a side shrink")]
TopK = Annotated[int, Form(ge=1, le=100, description="candidates per face")]
Fpir = Annotated[float | None, Form(gt=0, lt=1, description="accepted stranger-match rate for this call "
                                                            "(0.01 = 1%); default: the app's")]
Threshold = Annotated[float | None, Form(ge=-100, le=100, description="pin the threshold on the normalised score "
                                                                     "for this call instead (e.g. 6; a value between "
                                                                     "-1 and 1 is an old cosine pin: 400)")]



def learned_by(key) -> str:
    """Who confirmed a face that was learned: the API key, by id and name."""
    return f"API key {key.id} ({key.name})"[:64]
