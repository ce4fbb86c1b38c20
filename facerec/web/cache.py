"""Where this run keeps Gradio's cache (uploads, the pictures it serves, exports): a private folder per run, in memory
where there is room, deleted with the run and, when a run crashed, by the next one."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

WEB_CACHE = "webcache"  # Gradio's cache, inside the gallery folder, when memory has no room for it


def web_cache_root(home: Path, quota_bytes: int, memory: Path = Path("/dev/shm")) -> Path:
    """Where this user's runs keep Gradio's cache: a folder of their own in memory (`/dev/shm/facerec-<uid>`) when
    that memory has room for twice the upload quota, else `<home>/webcache`.

    Why memory first: uploads of faces then never reach a disk, and a full gallery disk does not stop identify
    (an upload that cannot be written could not be answered). A folder there that is not this user's own plain
    folder (another user made it first, or a link) is not used."""
    try:
        stats = os.statvfs(memory)
        roomy = stats.f_bavail * stats.f_frsize >= 2 * quota_bytes
    except OSError:
        roomy = False
    if roomy:
        root = memory / f"facerec-{os.getuid()}"
        try:
            root.mkdir(mode=0o700, exist_ok=True)
            found = os.lstat(root)
            if stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid():
                return root
        except OSError:
            pass
    return home.resolve() / WEB_CACHE


def private_web_cache(root: Path) -> Path:
    """This run's folder for Gradio's cache, `<root>/run-<pid>` (owner only), after deleting those of runs that
    are gone without cleaning up: uploads and pictures must not outlive the app that received them."""
    root.mkdir(mode=0o700, exist_ok=True)
    root.chmod(0o700)  # also when an older version or someone else made it
    for folder in root.glob("run-*"):
        if not _running(folder.name.removeprefix("run-")):
            shutil.rmtree(folder, ignore_errors=True)
    folder = root / f"run-{os.getpid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _running(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # someone else's process
        return True
    return True
