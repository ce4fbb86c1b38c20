"""The answer drawn back on the video: each track's box and label on every frame it spans, written as VP9 WebM.

VP9 in WebM because every current browser plays it in a `<video>` element; PyAV's libvpx writes it, at libvpx's
real-time setting (`deadline=realtime`, `cpu-used=8`, rows in parallel), which draws a 720p clip several times
faster than it plays (OpenCV's writer, used before, offers no speed setting and drew ~5 frames a second: #64 row
1). The video is decoded a second time rather than kept in memory while it is followed: decoding is cheap, and a
long video's frames would not fit. Boxes on the frames between two detections are interpolated (`Track.box_at`);
the labels are those of `facerec.faces.drawing`, never covering each other.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np

from facerec.errors import FaceRecError
from facerec.faces.detect import DetectedFace
from facerec.faces.drawing import KNOWN, UNKNOWN, annotate
from facerec.video.decode import VideoFile, VideoLimits
from facerec.video.tracks import Track

NO_LANDMARKS = np.zeros((5, 2), np.float32)
# libvpx at its fastest real-time setting, at a constant quality (crf; no target bit rate)
ENCODER_OPTIONS = {"deadline": "realtime", "cpu-used": "8", "row-mt": "1", "lag-in-frames": "0", "crf": "30"}


def write_annotated(source: str | Path, out: str | Path, tracks: list[tuple[Track, str, bool]],
                    limits: VideoLimits = VideoLimits(), progress: Callable[[int, int], None] | None = None) -> Path:
    """Write `out` (.webm): the video at `source` (shrunk as `limits` shrink it) with each (track, label, known)
    drawn on the frames it spans, green when known, red when not. Returns `out`."""
    import av

    out = Path(out)
    with VideoFile(source, limits) as video:
        info = video.info
        # libvpx's 4:2:0 wants even sides: the last row or column of an odd size is left out
        width, height = round(info.width * info.scale) // 2 * 2, round(info.height * info.scale) // 2 * 2
        container = None
        try:
            container = av.open(str(out), "w", format="webm")
            stream = container.add_stream("libvpx-vp9", rate=Fraction(info.fps).limit_denominator(1001),
                                          options=ENCODER_OPTIONS)
        except (av.error.FFmpegError, ValueError) as error:
            if container is not None:
                container.close()
            raise FaceRecError(f"this PyAV cannot write VP9 WebM video to {out.name} ({error})") from None
        stream.width, stream.height, stream.pix_fmt, stream.bit_rate = max(width, 2), max(height, 2), "yuv420p", 0
        try:
            for frame in video.frames(1):
                faces, labels, colours = [], [], []
                for track, label, known in tracks:
                    box = track.box_at(frame.index)
                    if box is not None:
                        faces.append(DetectedFace(tuple(v * info.scale for v in box), 1.0, NO_LANDMARKS))
                        labels.append(label)
                        colours.append(KNOWN if known else UNKNOWN)
                pixels = annotate(frame.pixels, faces, labels, colours) if faces else frame.pixels
                picture = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels[:stream.height, :stream.width]),
                                                     format="rgb24")
                container.mux(stream.encode(picture))
                if progress is not None:
                    progress(frame.index + 1, info.frames)
            container.mux(stream.encode(None))
        finally:
            container.close()
    out.chmod(0o600)  # it shows people's faces and names: its owner's alone, as every file facerec writes
    return out
