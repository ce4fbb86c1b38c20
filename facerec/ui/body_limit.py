"""A limit on every request body the web app reads besides uploads: Gradio's JSON routes (`/gradio_api/call/*`,
`/gradio_api/queue/join`, ...) read a body of any size from anybody, before any password.

Why: 4 bodies of 250 MB made the app's resident memory peak 2.3 GB, parsing them whole. What the page sends there
is small (the values of text boxes, choices and references to uploaded files; a photo arrives through the upload
route, bounded by `facerec.ui.upload_quota`), so `DEFAULT_LIMIT_BYTES` fits its purpose with room to spare. A body
over it is refused with 413 in one line: by its `Content-Length` before any of it is read, or, sent without one,
as soon as the bytes received pass the limit; and every body keeps a pace (`facerec.ui.request_body`).
Routes that bound their own bodies (the upload route, the REST API) are left to their own limits.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from facerec.ui.request_body import Refusal, announced_length, announces_body, read_under, refuse

DEFAULT_LIMIT_BYTES = 1 << 20  # 1 MiB: a page event's values are a few kilobytes


class BodyLimit:
    """ASGI middleware: every request with a body, but those under `own_limits` (path prefixes or endings of
    routes that bound their bodies themselves), at most `limit_bytes`."""

    def __init__(self, app: ASGIApp, limit_bytes: int = DEFAULT_LIMIT_BYTES, own_limits: tuple[str, ...] = ()) -> None:
        self.app, self.limit_bytes, self.own_limits = app, limit_bytes, own_limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (scope["type"] != "http" or not announces_body(scope)
                or any(path.startswith(route) or path.endswith(route) for route in self.own_limits)):
            await self.app(scope, receive, send)
            return
        too_large = Refusal(413, f"the request body is over the limit of {self.limit_bytes / (1 << 20):g} MB",
                            "too_large")
        length = announced_length(scope)
        if length is not None and length > self.limit_bytes:
            await refuse(send, too_large)
            return
        received = 0

        def judge(chunk: bytes) -> Refusal | None:
            nonlocal received
            received += len(chunk)
            return too_large if received > self.limit_bytes else None

        await read_under(judge, self.app, scope, receive, send)
