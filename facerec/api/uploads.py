"""Uploads into the REST API: bounded in size, read into memory, gone when the request ends.

A photo is handed to the Gallery as bytes, so the server writes no copy of it; only an import (the Gallery reads
an archive from a path) is written to a private temporary folder, deleted before the answer is sent. The body
itself is bounded by `BodyLimit` before any of it is parsed. (Starlette spools parts over 1 MB of a multipart body
to an anonymous temporary file, unlinked from the start and closed with the request.)
"""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath, PureWindowsPath

from fastapi import UploadFile
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from facerec.api.errors import error_response

MULTIPART_ALLOWANCE = 1 << 20  # form fields, part headers and boundaries beside the files


async def read_upload(upload: UploadFile, limit: int, what: str = "the photo") -> bytes:
    """The uploaded file's bytes; 413 (one line) when it holds more than `limit` bytes."""
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"{what} is over the upload limit of {_megabytes(limit)}")
    return data


def upload_label(upload: UploadFile) -> str | None:
    """The uploaded file's name as messages show it (the web app names a file it refuses by its name), or None.
    Only the last path part, without control or invisible characters, at most 100 characters."""
    name = PureWindowsPath(PurePosixPath(upload.filename or "").name).name
    name = "".join(c for c in name if unicodedata.category(c)[0] not in "CZ" or c == " ").strip()
    return name[:100] or None


class BodyLimit:
    """ASGI middleware: refuse a request body over `max_bytes` with 413, by its Content-Length before reading any
    of it, or as soon as the bytes received pass the limit (a body sent without a length)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = HTTPException(413, f"the request body is over the limit of {_megabytes(self.max_bytes)}")
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await error_response(too_large)(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                raise too_large  # inside the route: answered as a 413 like every other error
            return message

        await self.app(scope, counted, send)


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):g} MB"
