"""#63 rows 1, 2 and 6: the Live tab's camera frames are decoded by facerec (photo formats only, the size checked from
the header), never by Gradio, and neither the frame received nor the frame answered stays on the server as a file.

On 8d20703 the camera was a plain streaming `gr.Image`: an EPS frame ran Ghostscript, a 13300 x 13300 PNG was
decoded whole, and every received and answered frame was a file in Gradio's cache."""

from __future__ import annotations

import base64
import io
import struct
import zlib
from pathlib import Path

import numpy as np
from gradio.data_classes import FileData
from PIL import Image

from facerec.ui import live_tab
from facerec.ui.camera_input import MAX_FRAME_BYTES, CameraFrameInput
from facerec.ui.uploads import Unreadable

EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n"
       b"/loop { loop } def 0 0 moveto 10 10 lineto stroke\nshowpage\n%%EOF\n")


def camera() -> CameraFrameInput:
    return CameraFrameInput(sources=["webcam"], streaming=True, type="numpy", image_mode="RGB")


def data_url(data: bytes, mime: str) -> FileData:
    return FileData(url=f"data:{mime};base64,{base64.b64encode(data).decode()}", path="frame")


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height (a pixel bomb's first bytes; one small compressed row follows)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * (width + 1))) + chunk(b"IEND", b""))


def jpeg(portrait_path: Path) -> bytes:
    buffer = io.BytesIO()
    Image.open(portrait_path).convert("RGB").save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def test_an_eps_frame_is_refused_unread_inline_or_as_a_file(tmp_path: Path) -> None:
    for payload in (data_url(EPS, "image/x-eps"), FileData(path=str(tmp_path / "frame.eps"), orig_name="frame.eps")):
        (tmp_path / "frame.eps").write_bytes(EPS)
        value = camera().preprocess(payload)
        assert isinstance(value, Unreadable)
        assert "is not an image facerec reads" in value.message
    assert not (tmp_path / "frame.eps").exists()  # the received frame's file is deleted once read


def test_a_pixel_bomb_frame_is_refused_from_its_header() -> None:
    value = camera().preprocess(data_url(png_header_only(13300, 13300), "image/png"))
    assert isinstance(value, Unreadable)
    assert "too large" in value.message or "over the limit" in value.message


def test_a_frame_over_the_byte_limit_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(b"\x00" * (MAX_FRAME_BYTES + 1))
    value = camera().preprocess(FileData(path=str(big)))
    assert isinstance(value, Unreadable) and "over the limit" in value.message
    assert not big.exists()


def test_a_real_frame_is_decoded_to_rgb_and_its_file_removed(portrait, tmp_path: Path) -> None:
    expected = np.asarray(Image.open(io.BytesIO(jpeg(portrait("Barack_Obama", 3)))).convert("RGB"))
    inline = camera().preprocess(data_url(jpeg(portrait("Barack_Obama", 3)), "image/jpeg"))
    frame_file = tmp_path / "frame.jpeg"
    frame_file.write_bytes(jpeg(portrait("Barack_Obama", 3)))
    saved = camera().preprocess(FileData(path=str(frame_file)))
    for pixels in (inline, saved):
        assert isinstance(pixels, np.ndarray) and pixels.dtype == np.uint8
        np.testing.assert_array_equal(pixels, expected)
    assert not frame_file.exists()


def test_the_answered_frame_travels_in_the_page_not_as_a_file() -> None:
    """The Live tab shows its answer in a `page_picture` (read from its source: no second app in this process)."""
    from facerec.ui.page_pictures import page_picture

    source = Path(live_tab.__file__).read_text()
    assert "CameraFrameInput(" in source and 'page_picture("Who is in front of the camera"' in source
    shown = page_picture("Who is in front of the camera")
    answer = shown.postprocess(np.zeros((48, 64, 3), np.uint8))
    assert answer.path is None and answer.url.startswith("data:image/")
    assert not shown.buttons  # no share or download control on a picture of faces
