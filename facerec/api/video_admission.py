"""REST videos take a place in the waiting room before a byte of their upload is read (#63 row 7).

Why a middleware: FastAPI reads (and spools) a multipart body whole before the route runs, so a route that
refused a video when the room is full would have received its 256 MB first, in any number at once. Here the place
is taken when the request arrives (after its key: `KeyBeforeBody` runs before this) and given back when the answer
has been sent, or when the client went away mid-upload.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from facerec.api.errors import error_response
from facerec.errors import Busy
from facerec.video.waiting_room import WaitingRoom

VIDEO_ROUTE = "/videos/identify"


class VideoAdmission:
    """ASGI middleware over `POST .../videos/identify`: a place in `room`, or 503 `busy` at once."""

    def __init__(self, app: ASGIApp, room: WaitingRoom) -> None:
        self.app, self.room = app, room

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (scope["type"] == "http" and scope["method"] == "POST" and scope["path"].endswith(VIDEO_ROUTE)):
            await self.app(scope, receive, send)
            return
        try:
            self.room.enter()
        except Busy as error:
            await error_response(error)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.room.leave()
