"""The one way a camera's moments are written: UTC, ISO 8601, to the millisecond (events, the status)."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now(seconds: float | None = None) -> str:
    """Now, or the Unix time `seconds`, as UTC ISO 8601 to the millisecond."""
    moment = datetime.now(timezone.utc) if seconds is None else datetime.fromtimestamp(seconds, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
