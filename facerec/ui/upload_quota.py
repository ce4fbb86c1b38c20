"""A quota on what anyone can upload to the web app: Gradio's upload route takes files from anybody, before any
password, and keeps them in the web cache (on the gallery's filesystem) until they expire.

Why: 30 uploads of 10 MB took 3.7 s from one anonymous client, and a loop of them fills the gallery's disk (#29
row 3). Each upload is already capped at the app's per-file limit; this caps their sum. While the web cache holds
`limit_bytes` or more, a new upload is refused with 507 and one sentence, and the rest of the app (identify of a
photo already uploaded, every admin action) goes on. Uploads leave as before: once answered (or their face stored)
at once, the rest after `facerec.ui.uploads.CACHE_MAX_AGE_S`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DEFAULT_LIMIT_BYTES = 512 << 20  # 512 MiB: ~34 full-size uploads at once, far above what people upload in 10 min
REFUSAL = ("The server holds too many recent uploads; try again in a few minutes (uploads are kept at most 10 "
           "minutes).")


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
    """ASGI middleware: refuses `POST .../gradio_api/upload` while `folder` holds `limit_bytes` or more."""

    def __init__(self, app, folder: Path, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.app, self.folder, self.limit_bytes = app, Path(folder), limit_bytes

    async def __call__(self, scope, receive, send) -> None:
        if (scope["type"] == "http" and scope["method"] == "POST" and scope["path"].endswith("/gradio_api/upload")
                and folder_bytes(self.folder) >= self.limit_bytes):
            body = json.dumps({"error": REFUSAL, "code": "upload_quota"}).encode()
            await send({"type": "http.response.start", "status": 507,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
