"""A video file to RGB frames, bounded before and while it is read.

PyAV decodes (FFmpeg's libraries in its wheel: MP4/MOV, WebM/MKV and AVI with the usual codecs). The file's first
bytes must be one of those containers, and that container's demuxer is the only one FFmpeg is given: FFmpeg also
reads text playlists (HLS, concat) that name other files and network addresses. It reads the bytes through a
Python file object, never a name, so no protocol ("file:", "http:") can be reached whatever the path says.

Bounds (`VideoLimits`, from `Settings`): the file's size is checked before it is opened; duration, frame count and
resolution from the container before the first frame; and again while decoding, since a container can lie: every
frame's pixels are bounded by the decoder itself (FFmpeg's `max_pixels`: a larger frame is refused before its
memory is allocated, however small the frame was that the container announced), and the pixels decoded in all by
`max_decoded_pixels` (a few kB of VP9 can decode to thousands of 40-megapixel frames). Frames are converted to
RGB only when asked for (every k-th), straight at the size they are followed at: the first frame's size, shrunk
to `max_side` (a later frame of another size is scaled to it, so boxes keep one coordinate system). Every refusal
is one line (`InvalidVideo`, `VideoTooLarge`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from facerec.errors import InvalidVideo, VideoTooLarge

CONTAINERS = "MP4, MOV, WebM, MKV or AVI"
# The largest frame a video may have: 4K (DCI 4096 x 2160 and UHD 3840 x 2160, with room for 4096 x 2304). A photo may
# have 40 megapixels, but a video decodes hundreds of frames: 40-megapixel ones cost seconds each (row 5 of #63).
MAX_FRAME_PIXELS = 4096 * 2304
UHD_PIXELS = 3840 * 2160  # a 4K UHD frame: what a request may decode, frame for frame, with a key
DEMUXERS = {"mp4": "mov", "matroska": "matroska", "avi": "avi"}  # FFmpeg's demuxer for each container we read


@dataclass(frozen=True)
class VideoLimits:
    """What one request may decode: seconds, bytes, frames, pixels decoded in all (frames x their size: the
    decoding work); frames larger than `max_side` shrink to it."""

    max_seconds: float = 300.0
    max_bytes: int = 256 << 20
    max_frames: int = 9_000
    max_side: int = 1280
    max_decoded_pixels: int = 9_000 * UHD_PIXELS  # the most frames, each 4K UHD

    @classmethod
    def of(cls, settings) -> "VideoLimits":
        return cls(settings.video_max_seconds, settings.video_max_bytes, settings.video_max_frames,
                   settings.video_max_side, settings.video_max_frames * UHD_PIXELS)

    def tighter(self, other: "VideoLimits") -> "VideoLimits":
        """The smaller of each bound (an anonymous caller gets the tighter of its limits and the settings')."""
        return VideoLimits(min(self.max_seconds, other.max_seconds), min(self.max_bytes, other.max_bytes),
                           min(self.max_frames, other.max_frames), min(self.max_side, other.max_side),
                           min(self.max_decoded_pixels, other.max_decoded_pixels))


@dataclass(frozen=True)
class VideoInfo:
    """What the container says: frames (0 when it does not say), frames per second, the video's own size,
    `scale`, the factor the decoded frames are shrunk by (1 when within `max_side`), and `codec`, FFmpeg's name
    of the video stream's codec ('mpeg4' for MPEG-4 Part 2, 'h264', 'vp9', 'mjpeg'; '' when unknown) in its
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


class VideoFile:
    """An opened video: `info`, then `frames()` once. Use as a context manager (the decoder holds a file)."""

    def __init__(self, path: str | Path, limits: VideoLimits = VideoLimits(), label: str | None = None) -> None:
        import av

        self.path, self.limits = Path(path), limits
        self.label = label or self.path.name
        self._handle = self._container = None
        self._decoded_pixels = 0
        try:
            size = os.stat(self.path).st_size
            self._handle = open(self.path, "rb")
            head = self._handle.read(16)
            self._handle.seek(0)
        except OSError:
            self.close()
            raise InvalidVideo(f"{self.label} cannot be read") from None
        if size > limits.max_bytes:
            self.close()
            raise VideoTooLarge(f"{self.label} is {size / (1 << 20):,.0f} MiB, over the {limits.max_bytes >> 20} MiB "
                                "a video may have here")
        self.container = container_of(head)
        if self.container is None:
            self.close()
            raise InvalidVideo(f"{self.label} is not an {CONTAINERS} video (by its first bytes)")
        try:
            self._container = av.open(self._handle, "r", format=DEMUXERS[self.container])
            self._stream = self._container.streams.video[0]
        except (av.error.FFmpegError, IndexError, UnicodeDecodeError):
            self.close()
            raise InvalidVideo(f"{self.label} is not a video facerec can read (its container or codec is not "
                               f"supported, or the file is damaged): try an {CONTAINERS} file with H.264, VP8/VP9 "
                               "or MPEG-4 video") from None
        self.info = self._read_info()

    def _read_info(self) -> VideoInfo:
        stream, limits = self._stream, self.limits
        codec = stream.codec_context
        width, height = int(codec.width or 0), int(codec.height or 0)
        fps = float(stream.average_rate or stream.guessed_rate or 0.0)
        fps = fps if 0 < fps <= 1000 else 30.0  # a container without a rate: times are then approximate
        frames = max(int(stream.frames or 0), 0)
        if frames == 0:  # Matroska and WebM say a duration, not a count
            seconds = (float(stream.duration * stream.time_base) if stream.duration and stream.time_base
                       else (self._container.duration or 0) / 1e6)
            frames = max(int(round(seconds * fps)), 0)
        if width * height > MAX_FRAME_PIXELS:
            self.close()
            raise VideoTooLarge(f"{self.label} has {width} x {height} frames, over the "
                                f"{MAX_FRAME_PIXELS / 1e6:.1f} megapixels (4K) a video's frame may have")
        if width <= 0 or height <= 0:
            self.close()
            raise InvalidVideo(f"{self.label} does not say its frames' size: it is damaged or not a video")
        info = VideoInfo(frames, fps, width, height, min(1.0, limits.max_side / max(width, height, 1)),
                         codec.name or "", self.container)
        self._check(frames, info.seconds)
        if frames * width * height > limits.max_decoded_pixels:
            self.close()
            raise VideoTooLarge(self._too_much_decoding())
        # The decoder refuses any later frame over the bound before allocating it (a frame's size can change).
        codec.options = {"max_pixels": str(MAX_FRAME_PIXELS)}
        codec.thread_count = 1  # one core: a video's decoding never takes the other from the photos being answered
        return info

    def _too_much_decoding(self) -> str:
        return (f"{self.label} decodes to over {self.limits.max_decoded_pixels / 1e6:,.0f} megapixels in all "
                "(frames x their size), the most a video may here: send a shorter or smaller video")

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
        decoded, which the codec needs, and given with `pixels` None). Stops at the end or at a damaged frame, or
        raises VideoTooLarge where the video turns out longer or larger than the container said and passes a
        limit."""
        import av

        info = self.info
        width, height = max(1, round(info.width * info.scale)), max(1, round(info.height * info.scale))
        index = 0
        decoded = self._container.decode(self._stream)
        while True:
            try:
                frame = next(decoded)
            except StopIteration:
                break
            except av.error.ArgumentError:  # FFmpeg's max_pixels: a frame larger than the container said
                self.close()
                raise VideoTooLarge(f"{self.label} has a frame over the {MAX_FRAME_PIXELS / 1e6:.1f} megapixels (4K) "
                                    "a video's frame may have (after a smaller first frame)") from None
            except (av.error.FFmpegError, UnicodeDecodeError):
                break  # a damaged or truncated stream: what was decoded before it is the video
            # Checked once the frame is known to exist: a video of exactly the most frames allowed passes.
            self._check(index + 1, index / info.fps)
            self._decoded_pixels += frame.width * frame.height
            if self._decoded_pixels > self.limits.max_decoded_pixels:
                self.close()
                raise VideoTooLarge(self._too_much_decoding())
            pixels = None
            if index % every == 0:
                pixels = frame.to_ndarray(format="rgb24", width=width, height=height,
                                          interpolation="AREA" if info.scale < 1.0 else None)
            yield Frame(index, index / info.fps, pixels)
            index += 1
        if index == 0:
            raise InvalidVideo(f"{self.label} holds no frame facerec can decode")

    def close(self) -> None:
        for part in ("_container", "_handle"):
            opened = getattr(self, part, None)
            if opened is not None:
                opened.close()
                setattr(self, part, None)

    def __enter__(self) -> "VideoFile":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
