"""A quota on what anyone can upload to the web app: Gradio's upload route takes files from anybody, before any
password, and keeps them in the web cache (in memory, or on the gallery's filesystem) until they are answered or
expire.

Why each rule (uploads are anonymous, so each is a bound an outsider cannot talk their way past):
- **One request, one file, bounded in bytes**: Gradio accepts up to 1,000 files in one request and checks the
  size of each file only, so one POST of 60 files of 15 MB wrote 901 MB. A request must say its length
  (`Content-Length`; browsers always do), at most `per_request_bytes` (the largest file the app takes, an
  exported gallery to import, plus the form around it; a photo's own, smaller limit is said by
  `facerec.ui.uploads.photo_input`), or it is refused before its body is read (411, 413); a second file in one
  request ends the request (413).
- **A full disk is said, not hit**: an upload that would not fit on the cache's filesystem is refused (507,
  `storage_full`) before a byte is written, so no empty file is left behind.
- **The quota counts bytes as they arrive**: the uploads kept plus every byte received by the uploads in flight
  stay within `limit_bytes`; the upload whose bytes would pass it is ended there (507 and one sentence), and one
  that could not fit even now is refused before its body is read. Reserving the announced length instead let 17
  connections that announced megabytes and sent twelve bytes a minute refuse every other upload; counting the
  folder alone let 12 concurrent uploads all pass while it still looked empty.
- **A body keeps a pace** (`facerec.web.request_body`): one that stalls or crawls is ended (408), and the partial
  file Gradio was writing is deleted.
Past the quota the rest of the app (identify of a photo already uploaded, every admin action) goes on. Uploads
leave as before: once answered (or their face stored), the rest after `facerec.ui.uploads.CACHE_MAX_AGE_S`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from facerec.web.request_body import Refusal, read_under, refuse

UPLOAD_ROUTE = "/gradio_api/upload"
DEFAULT_LIMIT_BYTES = 512 << 20  # 512 MiB: ~34 full-size uploads at once, far above what people upload in 10 min
FORM_ALLOWANCE = 1 << 20  # the multipart form around the one photo of an upload
REFUSAL = ("The server holds too many recent uploads; try again in a few minutes (uploads are kept at most 10 "
           "minutes).")
DISK_FULL = "The server's disk is full: the upload was not stored; try again later."
DISK_MARGIN = 16 << 20  # free bytes an upload must leave on the cache's filesystem
FILE_FIELD = b"filename="  # each file part's Content-Disposition names a file


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under `folder` (0 when it does not exist)."""
    return _bytes(folder, top_level=True)


def kept_bytes(folder: Path) -> int:
    """Bytes of the files kept in `folder`'s subfolders: Gradio writes an upload in flight to a temporary file at
    the folder's top and moves it into a subfolder (named by its hash) once whole, so the top's files are the
    uploads in flight, which the quota counts as their bytes arrive instead."""
    return _bytes(folder, top_level=False)


def _bytes(folder: Path, top_level: bool) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        if not top_level and Path(root) == Path(folder):
            continue
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:  # deleted meanwhile
                pass
    return total


class UploadQuota:
    """ASGI middleware over `POST` to `routes` (the page's `.../gradio_api/upload`; the app adds the REST routes
    whose uploads are written to the same folder: a video, an import): one file per request, its length said up
    front and at most `per_request_bytes`, and all uploads (kept, and the bytes received of those in flight)
    within `limit_bytes` of `folder`."""

    def __init__(self, app: ASGIApp, folder: Path, limit_bytes: int = DEFAULT_LIMIT_BYTES,
                 per_request_bytes: int = (15 << 20) + FORM_ALLOWANCE,
                 routes: tuple[str, ...] = (UPLOAD_ROUTE,)) -> None:
        self.app, self.folder, self.routes = app, Path(folder), routes
        self.limit_bytes, self.per_request_bytes = limit_bytes, per_request_bytes
        self._lock = threading.Lock()
        self._kept = 0  # kept_bytes(folder), measured when an upload starts and when one ends
        self._arriving = 0  # bytes received so far by the uploads in flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (scope["type"] == "http" and scope["method"] == "POST"
                and any(scope["path"].endswith(route) for route in self.routes)):
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is None or not length.isdigit():
            await refuse(send, Refusal(411, "an upload must say its length (Content-Length)", "length_required"))
            return
        size = int(length)
        if size > self.per_request_bytes:
            await refuse(send, Refusal(413, f"the upload is over the limit of "
                                            f"{self.per_request_bytes / (1 << 20):.0f} MB (one file per upload)",
                                       "too_large"))
            return
        if not _fits(self.folder, size):
            await refuse(send, Refusal(507, DISK_FULL, "storage_full"), close=False)
            return
        with self._lock:
            self._kept = kept_bytes(self.folder)
            fits = self._kept + self._arriving + size <= self.limit_bytes
        if not fits:  # cannot fit even now: refused before a byte is read
            await refuse(send, Refusal(507, REFUSAL, "upload_quota"), close=False)
            return
        arrived, files, tail = 0, 0, b""

        def judge(chunk: bytes) -> Refusal | None:
            nonlocal arrived, files, tail
            scanned = tail + chunk
            files += scanned.count(FILE_FIELD)
            tail = scanned[-(len(FILE_FIELD) - 1):]
            if files > 1:
                return Refusal(413, "one file per upload", "too_many_files")
            with self._lock:
                self._arriving += len(chunk)
                arrived += len(chunk)
                if self._kept + self._arriving > self.limit_bytes:
                    return Refusal(507, REFUSAL, "upload_quota")
            return None

        try:
            await read_under(judge, self.app, scope, receive, send)
        finally:
            with self._lock:
                self._arriving -= arrived
                self._kept = kept_bytes(self.folder)


def _fits(folder: Path, size: int) -> bool:
    """Whether `size` bytes (and a margin) fit on the filesystem that holds `folder` (or the nearest existing
    folder above it)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        stats = os.statvfs(folder)
    except OSError:
        return True  # nothing to judge by: let the write say it
    return stats.f_bavail * stats.f_frsize >= size + DISK_MARGIN
