"""The REST API as one FastAPI application, mounted by `app.py` at `/api/v1` beside the Gradio UI.

A separate application (not routes added to Gradio's): its own error handling, key check and OpenAPI document
(`/api/v1/openapi.json`, browsable at `/api/v1/docs`), and nothing of Gradio's in it. It shares the app's one
`Gallery` (so its settings, threshold policy and database) with the UI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.routing import Mount

from facerec.version import __version__
from facerec.gallery import Gallery
from facerec.api.auth import KEY_HEADER, KeyBeforeBody
from facerec.api.docs_page import add_docs_page
from facerec.api.errors import error_response
from facerec.api.routes import ApiContext, build_router
from facerec.api.uploads import MULTIPART_ALLOWANCE
from facerec.settings import Settings
from facerec.api.video_admission import VideoAdmission
from facerec.video.waiting_room import PLACES, WaitingRoom

API_PREFIX = "/api/v1"
DESCRIPTION = f"""Enroll people from one photo and identify them in any photo: the same gallery, thresholds and
checks as the web app and the CLI.

Every route needs an API key in the `{KEY_HEADER}` header (`facerec api-key create --role read|admin`): `read` keys
may identify, verify, list and get people; `admin` keys may do everything. With no key created the API is off (503).

Errors are one JSON line, `{{"error": message, "code": word}}`, with the status saying what kind: 400 a bad
parameter, 401/403 the key, 404 no such person, 409 a duplicate or look-alike (`matches` says who), 413 too large,
422 not a usable photo (not an image, no face, several faces) or a missing field, 503 the API is off."""


def body_limits(settings: Settings) -> dict:
    """The REST API's request bodies, for the server's one body limit: two photos (verify) and the form around
    them; an import, a video: their own."""
    return {"limit_bytes": 2 * settings.max_upload_bytes + MULTIPART_ALLOWANCE,
            "larger": {"/gallery/import": settings.max_import_bytes + MULTIPART_ALLOWANCE,
                       "/videos/identify": settings.video_max_bytes + MULTIPART_ALLOWANCE}}


def build_api(gallery: Gallery, scratch: Path | None = None, after_delete: Callable[[], None] | None = None,
              concurrency: int = 4, edge: Sequence[tuple[type, dict]] = ()) -> FastAPI:
    """The REST API over `gallery`. `scratch`: a private folder for the imports and exports in flight (default:
    the system's temporary folder); `after_delete`: called after a person is deleted; `concurrency`: Gallery
    calls running at once; `edge`: the server's middleware for every body (class, options), run after the key is
    checked and a video admitted (`facerec.web`)."""
    api = FastAPI(title="facerec REST API", version=__version__, description=DESCRIPTION,
                  openapi_url="/openapi.json", docs_url=None, redoc_url=None)
    add_docs_page(api, "facerec REST API")  # from the package: no CDN, so it works offline
    context = ApiContext(gallery, scratch, after_delete)
    context.limiter.total_tokens = concurrency
    api.state.keys = gallery.services().keys
    api.include_router(build_router(context))

    @api.exception_handler(HTTPException)
    async def one_line(_request, error: HTTPException):  # no such route (404), wrong method (405)
        return error_response(error)

    for middleware, options in edge:
        api.add_middleware(middleware, **options)
    api.add_middleware(VideoAdmission, room=WaitingRoom(PLACES))  # a full room: refused before the upload is read
    api.add_middleware(KeyBeforeBody, keys=api.state.keys)  # outermost: no key, no byte of the body read
    return api


def api_mount(api: FastAPI) -> Mount:
    """`api` as a route of a parent application (Gradio's), at `/api/v1`."""
    return Mount(API_PREFIX, app=api)
