"""A photo library's files, as every library command reads and writes them: which files under a folder are
photos or videos (links followed only inside it), a photo's bytes read within its bound and only when its header
says it is one, and owner-only outputs replaced whole (`facerec identify DIR/`, `facerec tags`, `facerec library`,
and the app's library groups)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".bmp"}
MAX_PHOTO_BYTES = 64 << 20  # 64 MiB: above any camera's JPEG; a bigger file is one line, never read
VIDEO_SUFFIXES = {".mp4", ".m4v", ".mov", ".webm", ".mkv", ".avi"}
HEADERS = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"BM")  # JPEG, PNG, BMP (WebP: RIFF....WEBP, below)


def is_video(path: str | Path) -> bool:
    """By its name: what `facerec identify` answers as a video rather than a photo."""
    return Path(path).suffix.lower() in VIDEO_SUFFIXES


def photo_bytes(path: Path) -> bytes:
    """The file's bytes, read only when its size and header say it can be a photo (OSError otherwise: one line)."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_PHOTO_BYTES:
            raise OSError(f"{path.name} is {size / (1 << 20):,.0f} MiB, over the {MAX_PHOTO_BYTES >> 20} MiB a photo "
                          "may have here: not read")
        head = handle.read(12)
        if not (head.startswith(HEADERS) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")):
            raise OSError(f"{path.name} is not a JPEG, PNG, WebP or BMP file (by its first bytes): not read")
        data = head + handle.read(MAX_PHOTO_BYTES + 1 - len(head))
    if len(data) > MAX_PHOTO_BYTES:
        raise OSError(f"{path.name} grew over {MAX_PHOTO_BYTES >> 20} MiB while it was read: not read")
    return data


def library_files(folder: Path, outputs: set[Path], skipped: dict[str, int] | None = None) -> dict[Path, str]:
    """Every photo file under `folder`, with which file it is as it is now: its path under the folder, its size
    and its modification time (a file gone while the folder is listed is left out). A link counts only when it
    leads to a file inside the folder that is not one of the run's `outputs`. What is left out is counted in
    `skipped`, by why."""
    skipped = {} if skipped is None else skipped
    keys = {}
    root = folder.resolve()
    outputs = {path.resolve() for path in outputs}
    for path in folder.rglob("*"):
        try:
            real = path.resolve()
            if real in outputs:
                continue
            if not real.is_relative_to(root):
                skipped["link(s) leading outside the folder"] = skipped.get("link(s) leading outside the folder", 0) + 1
                continue
            if not path.is_file():
                continue
            if path.suffix.lower() in PHOTO_SUFFIXES or is_video(path):
                stat = path.stat()
                keys[path] = f"{path.relative_to(folder)}|{stat.st_size}|{stat.st_mtime_ns}"
            else:
                why = "file(s) that are not photos or videos (by their names)"
                skipped[why] = skipped.get(why, 0) + 1
        except OSError:
            continue
    return keys


class replacing:
    """A new owner-only file beside `path`, renamed over it when written whole: a link at `path` is replaced, not
    written through; a file already there (and its mode) is replaced whole; an interrupted write leaves the old."""

    def __init__(self, path: Path, newline: str | None = None) -> None:
        self.path, self.newline = path, newline

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, self.temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)  # 0600
        self.handle = os.fdopen(descriptor, "w", newline=self.newline, encoding="utf-8")
        return self.handle

    def __exit__(self, failed, *_exc) -> None:
        self.handle.close()
        if failed:
            os.unlink(self.temporary)
        else:
            os.replace(self.temporary, self.path)
