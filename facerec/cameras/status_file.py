"""How the cameras stand, in one owner-only file under the gallery's home (`HOME/cameras/status.json`): written by
`facerec watch` every `EVERY_S` seconds and when it stops, read by the app's page (admin only), so a watch run on
its own and the app beside it need nothing but the home they share. It holds each camera's state, counts, the
people present and the recent events (names of enrolled people, "unknown" for others; never a face)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from facerec.library.files import replacing

EVERY_S = 2.0
STALE_S = 30.0  # a file not written for this long: its watch is not running any more


def status_path(home: Path) -> Path:
    return Path(home) / "cameras" / "status.json"


def write_status(home: Path, cameras: list[dict], sinks: list[dict], running: bool = True) -> None:
    with replacing(status_path(home)) as handle:
        json.dump({"written_at": time.time(), "running": running, "cameras": cameras, "sinks": sinks}, handle,
                  ensure_ascii=False)


def read_status(home: Path) -> dict | None:
    """The last status written (None: no watch has run here), with `running` false once it is stale."""
    try:
        status = json.loads(status_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(status, dict) or not isinstance(status.get("cameras"), list):
        return None
    status["running"] = bool(status.get("running")) and time.time() - float(status.get("written_at", 0)) < STALE_S
    return status
