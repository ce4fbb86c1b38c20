"""The answer drawn back on the video: each track's box and label on every frame it spans, written as VP9 WebM.

VP9 in WebM because every current browser plays it in a `<video>` element, and OpenCV's FFmpeg writes it
(fourcc 'VP90', libvpx) with no system ffmpeg. The video is decoded a second time rather than kept in memory while
it is followed: decoding is cheap, and a long video's frames would not fit. Boxes on the frames between two
detections are interpolated (`Track.box_at`); the labels are those of `facerec.faces.drawing`, never covering each
other. Encoding VP9 is the slow part (several times slower than following the faces), so it is only done when
asked for.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from facerec.errors import FaceRecError
from facerec.faces.detect import DetectedFace
from facerec.faces.drawing import KNOWN, UNKNOWN, annotate
from facerec.video.decode import VideoFile, VideoLimits
from facerec.video.tracks import Track

FOURCC = "VP90"
NO_LANDMARKS = np.zeros((5, 2), np.float32)


@contextlib.contextmanager
def _stderr_muted():
    """The process's standard error (file descriptor 2) sent to /dev/null while OpenCV opens the writer: its
    fallback from the fourcc to WebM's codec id is printed with a raw fprintf that no log level silences, on every
    video, for a path that works (#64 row 11). Only this call is muted; a real failure is `isOpened()` below."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def write_annotated(source: str | Path, out: str | Path, tracks: list[tuple[Track, str, bool]],
                    limits: VideoLimits = VideoLimits(), progress: Callable[[int, int], None] | None = None) -> Path:
    """Write `out` (.webm): the video at `source` (shrunk as `limits` shrink it) with each (track, label, known)
    drawn on the frames it spans, green when known, red when not. Returns `out`."""
    import cv2

    out = Path(out)
    with VideoFile(source, limits) as video:
        info = video.info
        width, height = round(info.width * info.scale), round(info.height * info.scale)
        with _stderr_muted():  # OpenCV prints "tag 0x30395056/'VP90' is not supported" for a WebM it then writes
            writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*FOURCC), info.fps, (width, height))
        if not writer.isOpened():
            raise FaceRecError(f"this OpenCV cannot write VP9 WebM video to {out.name}")
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
                writer.write(np.ascontiguousarray(pixels[:, :, ::-1]))
                if progress is not None:
                    progress(frame.index + 1, info.frames)
        finally:
            writer.release()
    out.chmod(0o600)  # it shows people's faces and names: its owner's alone, as every file facerec writes
    return out
