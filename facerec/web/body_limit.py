"""One limit on every request body the server reads, the page's and the REST API's alike, with one pace rule.

Why: Gradio's JSON routes (`/gradio_api/call/*`, `/gradio_api/queue/join`, ...) read a body of any size from
anybody, before any password (4 bodies of 250 MB made the app's resident memory peak 2.3 GB, parsing them whole);
the REST API's routes read theirs before a route checks anything but the key. What the page sends there is small
(the values of text boxes, choices and references to uploaded files; a photo arrives through the upload route,
bounded by `facerec.web.upload_quota`), so `DEFAULT_LIMIT_BYTES` fits its purpose with room to spare; the REST API
names its own (`facerec.api.service.body_limits`: two photos and their form, more for an import or a video). A body
over its limit is refused with 413 in one line: by its `Content-Length` before any of it is read, or, sent without
one, as soon as the bytes received pass the limit; and every body keeps a pace (`facerec.web.request_body`): the
REST API's bodies were bounded in size only, so a client that announced one and sent it slowly held a worker.
Routes that bound their bodies themselves (the upload route) are left to their own limits.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from facerec.web.request_body import Refusal, announced_length, announces_body, read_under, refuse

DEFAULT_LIMIT_BYTES = 1 << 20  # 1 MiB: a page event's values are a few kilobytes


class BodyLimit:
    """ASGI middleware: every request with a body at most `limit_bytes`, or `larger[ending]` for a path that ends
    so (an import, a video), but those under `own_limits` (path prefixes or endings of routes that bound their
    bodies themselves), read at the pace every body keeps."""

    def __init__(self, app: ASGIApp, limit_bytes: int = DEFAULT_LIMIT_BYTES, larger: dict[str, int] | None = None,
                 own_limits: tuple[str, ...] = ()) -> None:
        self.app, self.limit_bytes, self.larger, self.own_limits = app, limit_bytes, dict(larger or {}), own_limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (scope["type"] != "http" or not announces_body(scope)
                or any(path.startswith(route) or path.endswith(route) for route in self.own_limits)):
            await self.app(scope, receive, send)
            return
        limit = next((size for ending, size in self.larger.items() if path.endswith(ending)), self.limit_bytes)
        too_large = Refusal(413, f"the request body is over the limit of {limit / (1 << 20):g} MB", "too_large")
        length = announced_length(scope)
        if length is not None and length > limit:
            await refuse(send, too_large)
            return
        received = 0

        def judge(chunk: bytes) -> Refusal | None:
            nonlocal received
            received += len(chunk)
            return too_large if received > limit else None

        await read_under(judge, self.app, scope, receive, send)
