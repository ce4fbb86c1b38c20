"""Uploads into the REST API: bounded in size, read into memory, gone when the request ends.

A photo is handed to the Gallery as bytes, so the server writes no copy of it; only an import (the Gallery reads
an archive from a path) is written to a private temporary folder, deleted before the answer is sent. The body
itself is bounded by the server's one body limit (`facerec.web.body_limit`) before any of it is parsed. (Starlette spools parts over 1 MB of a multipart body
to an anonymous temporary file, unlinked from the start and closed with the request.)
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path, PurePosixPath, PureWindowsPath

from fastapi import UploadFile
from starlette.exceptions import HTTPException

MULTIPART_ALLOWANCE = 1 << 20  # form fields, part headers and boundaries beside the files


async def read_upload(upload: UploadFile, limit: int, what: str = "the photo") -> bytes:
    """The uploaded file's bytes; 413 (one line) when it holds more than `limit` bytes."""
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"{what} is over the upload limit of {_megabytes(limit)}")
    return data


async def save_upload(upload: UploadFile, path: Path, limit: int, what: str) -> None:
    """Write the uploaded file to `path` (owner only) a megabyte at a time, never whole in memory; 413 (one line)
    past `limit` bytes, with nothing left at `path`. The request's own spool of the upload is closed (its disk
    freed) as soon as it is copied: a video then waits for its turn holding one copy, not two (#63 row 7, measured
    by benchmarks/hardening_round5.py: three 100 MB videos waiting held 612 MB before)."""
    written = 0
    try:
        with open(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as handle:
            while chunk := await upload.read(1 << 20):
                written += len(chunk)
                if written > limit:
                    raise HTTPException(413, f"{what} is over the upload limit of {_megabytes(limit)}")
                handle.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    finally:
        await upload.close()


def upload_label(upload: UploadFile) -> str | None:
    """The uploaded file's name as messages show it (the web app names a file it refuses by its name), or None.
    Only the last path part, without control or invisible characters, at most 100 characters."""
    name = PureWindowsPath(PurePosixPath(upload.filename or "").name).name
    name = "".join(c for c in name if unicodedata.category(c)[0] not in "CZ" or c == " ").strip()
    return name[:100] or None


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):g} MB"
