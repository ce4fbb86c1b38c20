"""Group photos for tests (not a test module): real LFW faces pasted side by side, so a test knows which face is
which (#0, #1, ... left to right, as facerec numbers them)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def group_photo(paths: list[Path], out: Path) -> Path:
    """LFW photos (250x250) pasted left to right into one JPEG at `out`: faces #0, #1, ... in that order."""
    tiles = [Image.open(p).convert("RGB") for p in paths]
    canvas = Image.new("RGB", (sum(t.width for t in tiles), max(t.height for t in tiles)), (0, 0, 0))
    x = 0
    for tile in tiles:
        canvas.paste(tile, (x, 0))
        x += tile.width
    canvas.save(out, "JPEG", quality=95)
    return out
