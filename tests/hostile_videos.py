"""Videos made to cost the server more than their size says (hardening round 5, rows 5 and 9), written at run time
by PyAV's muxer from packets encoded here: nothing of them is committed.

- `growing_frames`: a Motion JPEG AVI whose first frame is small (the container announces its size) and whose later
  frames are huge; each JPEG of one flat colour is a few hundred kB however many pixels it has.
- `crowd_clip`: a crowd passing a camera, a new pair of LFW faces every few frames (row 4: tracks by the hundred).
- `decompression_bomb`: a VP9 video of large frames in a few hundred kB: one key frame of one colour, then inter
  frames that change nothing, each under 200 bytes that decode to a full frame.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

from video_clips import Path2D, clip


def _jpeg(width: int, height: int, shade: int) -> bytes:
    import cv2

    ok, encoded = cv2.imencode(".jpg", np.full((height, width, 3), shade, np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 50])
    assert ok
    return encoded.tobytes()


def _mux(out: Path, format: str, codec: str, size: tuple[int, int], packets: list[bytes], fps: int,
         extradata: bytes | None = None) -> Path:
    import av

    with av.open(str(out), "w", format=format) as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height = size
        stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "yuv420p"
        if extradata:
            stream.codec_context.extradata = extradata
        for index, data in enumerate(packets):
            packet = av.Packet(data)
            packet.stream = stream
            packet.pts = packet.dts = index
            packet.time_base = Fraction(1, fps)
            packet.is_keyframe = codec == "mjpeg" or index == 0
            container.mux(packet)
    return out


def growing_frames(out: Path, first: tuple[int, int] = (320, 240), later: tuple[int, int] = (16_000, 16_000),
                   frames: int = 6, fps: int = 10) -> Path:
    """An AVI of Motion JPEG: one `first`-sized frame, then `frames - 1` of `later` size."""
    huge = _jpeg(*later, shade=128)
    return _mux(out, "avi", "mjpeg", first, [_jpeg(*first, shade=100)] + [huge] * (frames - 1), fps)


def decompression_bomb(out: Path, size: tuple[int, int] = (7_296, 5_472), frames: int = 1_800, fps: int = 30,
                       format: str = "avi") -> Path:
    """A VP9 video of `frames` frames of `size` (39.9 megapixels by default) in a few hundred kB: every frame one
    colour, each encoded (libvpx, its fastest setting; about 0.1 s a 40-megapixel frame here), so that any decoder
    reads it whole."""
    import av

    encoder = av.CodecContext.create("libvpx-vp9", "w")
    encoder.width, encoder.height = size
    encoder.pix_fmt, encoder.time_base = "yuv420p", Fraction(1, fps)
    encoder.options = {"deadline": "realtime", "cpu-used": "8", "lag-in-frames": "0", "row-mt": "1"}
    flat = av.VideoFrame.from_ndarray(np.full((size[1], size[0], 3), 90, np.uint8), format="rgb24").reformat(
        format="yuv420p")
    packets: list[bytes] = []
    for index in range(frames):
        flat.pts = index
        packets += [bytes(packet) for packet in encoder.encode(flat)]
    packets += [bytes(packet) for packet in encoder.encode(None)]
    return _mux(out, format, "vp9", size, packets[:frames], fps)


GRID = [(x, y) for y in (0.2, 0.5, 0.8) for x in (0.12, 0.37, 0.63, 0.88)]  # 12 places, far enough apart


def crowd_clip(out: Path, lfw: Path, people: int = 60, frames_each: int = 6) -> Path:
    """Two new strangers' faces at a time, each pair on screen for `frames_each` frames in places that come back
    only after 1.4 s (so a new face is not taken for the last one's track): `people` different faces in a few
    seconds, as a crowd passing a camera."""
    names = sorted(p.name for p in lfw.iterdir())[100:100 + people]
    faces = []
    for pair in range(people // 2):
        span = (pair * frames_each, pair * frames_each + frames_each - 1)
        for slot in (0, 1):
            place = GRID[(2 * pair + slot) % len(GRID)]
            photo = sorted((lfw / names[2 * pair + slot]).iterdir())[0]
            faces.append(Path2D(photo, place, place, side=120, frames=span))
    return clip(out, faces, frames=people // 2 * frames_each, size=(1280, 720))
