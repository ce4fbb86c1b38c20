"""A quota on what anyone can upload to the web app: Gradio's upload route takes files from anybody, before any
password, and keeps them in the web cache (on the gallery's filesystem) until they are answered or expire.

Why each rule (uploads are anonymous, so each is a bound an outsider cannot talk their way past):
- **One request, one file, bounded in bytes before any is received**: Gradio accepts up to 1,000 files in one
  request and checks the size of each file only, so one POST of 60 files of 15 MB wrote 901 MB. A request must
  say its length (`Content-Length`; browsers always do), at most `per_request_bytes` (the largest file the app
  takes, an exported gallery to import, plus the form around it; a photo's own, smaller limit is said by
  `facerec.ui.uploads.photo_input`), or it is refused before its body is read (411, 413); a second file in one
  request ends the request (413).
- **A full disk is said, not hit**: an upload that would not fit on the cache's filesystem is refused (507,
  `storage_full`) before a byte is written, so no empty file is left behind.
- **The quota is reserved, under a lock, before the body is read**: counting the folder alone let 12 concurrent
  uploads all pass while it still looked empty. An upload is let in only while the web cache plus the uploads
  in flight plus this one stay within `limit_bytes`; past it, 507 and one sentence, and the rest of the app
  (identify of a photo already uploaded, every admin action) goes on.
Uploads leave as before: once answered (or their face stored), the rest after `facerec.ui.uploads.CACHE_MAX_AGE_S`.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

DEFAULT_LIMIT_BYTES = 512 << 20  # 512 MiB: ~34 full-size uploads at once, far above what people upload in 10 min
FORM_ALLOWANCE = 1 << 20  # the multipart form around the one photo of an upload
REFUSAL = ("The server holds too many recent uploads; try again in a few minutes (uploads are kept at most 10 "
           "minutes).")
DISK_FULL = "The server's disk is full: the upload was not stored; try again later."
DISK_MARGIN = 16 << 20  # free bytes an upload must leave on the cache's filesystem
FILE_FIELD = b"filename="  # each file part's Content-Disposition names a file


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under `folder` (0 when it does not exist)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:  # deleted meanwhile
                pass
    return total


class UploadQuota:
    """ASGI middleware over `POST .../gradio_api/upload`: one photo per request, its length said up front and at
    most `per_request_bytes`, and all uploads (stored and in flight) within `limit_bytes` of `folder`."""

    def __init__(self, app, folder: Path, limit_bytes: int = DEFAULT_LIMIT_BYTES,
                 per_request_bytes: int = (15 << 20) + FORM_ALLOWANCE) -> None:
        self.app, self.folder = app, Path(folder)
        self.limit_bytes, self.per_request_bytes = limit_bytes, per_request_bytes
        self._lock = threading.Lock()
        self._in_flight = 0

    async def __call__(self, scope, receive, send) -> None:
        if not (scope["type"] == "http" and scope["method"] == "POST"
                and scope["path"].endswith("/gradio_api/upload")):
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is None or not length.isdigit():
            await _refuse(send, 411, "an upload must say its length (Content-Length)", "length_required")
            return
        size = int(length)
        if size > self.per_request_bytes:
            await _refuse(send, 413, f"the upload is over the limit of {self.per_request_bytes / (1 << 20):.0f} MB "
                                     "(one photo per upload)", "too_large")
            return
        if not _fits(self.folder, size):
            await _refuse(send, 507, DISK_FULL, "storage_full")
            return
        if not self._reserve(size):
            await _refuse(send, 507, REFUSAL, "upload_quota")
            return
        try:
            await self._one_file(scope, receive, send)
        finally:
            with self._lock:
                self._in_flight -= size

    def _reserve(self, size: int) -> bool:
        with self._lock:
            if folder_bytes(self.folder) + self._in_flight + size > self.limit_bytes:
                return False
            self._in_flight += size
            return True

    async def _one_file(self, scope, receive, send) -> None:
        """Pass the request on while its body holds one file; at a second one, end the body for the app (as a
        client gone away) and answer 413 instead of whatever the app would have said."""
        files, tail, refused, started = 0, b"", False, False

        async def counted():
            nonlocal files, tail, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            chunk = tail + message.get("body", b"")
            files += chunk.count(FILE_FIELD)
            tail = chunk[-(len(FILE_FIELD) - 1):]
            if files > 1:
                refused = True
                return {"type": "http.disconnect"}
            return message

        async def watched(message):
            nonlocal started
            if refused:
                return  # the app's own answer to a cut body is replaced by ours
            started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except Exception:  # noqa: BLE001 - the app's complaint about the body we cut short
            if not refused:
                raise
        if refused and not started:
            await _refuse(send, 413, "one photo per upload", "too_many_files")


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


async def _refuse(send, status: int, message: str, code: str) -> None:
    body = json.dumps({"error": message, "code": code}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
