"""A poor enrollment photo made from a real one (not a test module): the face shrunk to a 90 px square on a grey
250 px canvas and blurred (Gaussian, 1.5 px), as a distant, out-of-focus snapshot would be. With the shipped
quality calibration Colin_Powell_0001 and Gerhard_Schroeder_0001 made so score about 0.35-0.4, flagged for blur
(a typical LFW photo scores about 0.8); not every photo suffers as much (Serena_Williams_0001 keeps 0.7)."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageFilter

SIDE, BLUR = 90, 1.5


def poor_photo(path: Path) -> bytes:
    """JPEG bytes of the poor version of the photo at `path`."""
    canvas = Image.new("RGB", (250, 250), (128, 128, 128))
    small = Image.open(path).convert("RGB").resize((SIDE, SIDE), Image.BILINEAR).filter(ImageFilter.GaussianBlur(BLUR))
    canvas.paste(small, ((250 - SIDE) // 2, (250 - SIDE) // 2))
    buffer = io.BytesIO()
    canvas.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()
