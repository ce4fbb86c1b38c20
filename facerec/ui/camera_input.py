"""The Live tab's camera frames, decoded by facerec, never by Gradio, and never left on the server's disk.

Why: a streaming `gr.Image` decodes each frame itself with every format Pillow knows: a 1 KB EPS sent as a frame
(uploaded, or inline as a `data:` URL) made the app run the sender's PostScript in Ghostscript with no time limit,
and a 515 KB PNG of 13300 x 13300 pixels was decoded whole (+1.7 GB a frame). A frame is a photo the browser took,
so it is read as photos are (`facerec.faces.image`: JPEG, PNG, WebP or BMP only, the size checked from the header
before any pixel is decoded), within bounds of its own: at most `MAX_FRAME_BYTES` and `MAX_FRAME_PIXELS` (a 4K
camera's frame), and a frame Gradio wrote to its cache is read once and deleted at once.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
from pathlib import Path

import gradio as gr
import numpy as np

from facerec.errors import InvalidImage
from facerec.faces.image import decode_photo
from facerec.ui.uploads import Unreadable

log = logging.getLogger("facerec.ui")
MAX_FRAME_BYTES = 8 << 20  # a camera frame's file: a 4K JPEG or PNG from a browser is well under this
MAX_FRAME_PIXELS = 3840 * 2160  # a 4K camera; larger is no camera frame and is refused from its header
FRAME_LABEL = "the camera frame"


class CameraFrameInput(gr.Image):
    """A streaming webcam whose callback gets the frame's RGB pixels (uint8 [H, W, 3]) decoded by
    `facerec.faces.image`, or an `Unreadable` with the reason a frame was refused (Gradio describes a component to
    the page by its constructor's parameters, so a subclass keeps gr.Image's)."""

    is_template = True  # rendered by gr.Image's frontend

    def preprocess(self, payload):
        if payload is None:
            return None
        try:
            return decode_photo(frame_bytes(payload), MAX_FRAME_PIXELS, FRAME_LABEL)[0]
        except InvalidImage as error:
            log.info("camera frame refused: %s", error)
            return Unreadable(str(error))


def frame_bytes(payload) -> bytes:
    """The frame's encoded bytes, from an inline `data:` URL or from the file Gradio saved (deleted once read);
    InvalidImage over `MAX_FRAME_BYTES` or when there is nothing to read."""
    url = str(getattr(payload, "url", None) or "")
    if url.startswith("data:"):
        head, _, data = url.partition(",")
        if len(data) > MAX_FRAME_BYTES * 4 // 3 + 4:
            raise InvalidImage(_too_large(len(data) * 3 // 4))
        try:
            return base64.b64decode(data, validate=True) if head.endswith(";base64") else data.encode()
        except (binascii.Error, ValueError):
            raise InvalidImage(f"{FRAME_LABEL} is not valid base64") from None
    path = getattr(payload, "path", None)
    if not path:
        raise InvalidImage(f"{FRAME_LABEL} holds no picture")
    try:
        size = os.path.getsize(path)
        if size > MAX_FRAME_BYTES:
            raise InvalidImage(_too_large(size))
        return Path(path).read_bytes()
    except OSError:
        raise InvalidImage(f"{FRAME_LABEL} is no longer on the server") from None
    finally:
        _remove(path)


def _too_large(size: int) -> str:
    return f"{FRAME_LABEL} is {size / (1 << 20):.1f} MB, over the limit of {MAX_FRAME_BYTES >> 20} MB for a frame"


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def frame_pixels(value) -> np.ndarray | None:
    """The frame's pixels, None for no frame; InvalidImage with the reason for a refused one."""
    if isinstance(value, Unreadable):
        raise InvalidImage(value.message)
    return value
