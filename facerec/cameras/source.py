"""One camera's frames, newest only: RTSP, HTTP (MJPEG), a local device or a file, decoded with PyAV (the decoder
facerec reads video files with), on a thread of its own.

Frames are never queued: the decoder keeps only the newest frame not yet taken, and a frame that arrives before the
last was taken replaces it (counted as dropped), so a camera costs one frame of memory however slow recognition is,
and recognition always works on the present. When a stream cannot be opened, stalls past `READ_TIMEOUT_S` or ends,
the source reconnects after a back-off (`BACKOFF_S`: 1, 2, 4, 8, 15, then every 30 s), reset once frames flow
again. A file (for tests, and to replay a recording) is played at its own pace, once or in a loop.

A camera's address often holds its password (`rtsp://user:secret@host/...`, `?pwd=...`): `redacted` is what is
ever printed, logged or shown of it, and the decoder's own messages are cleaned of it too.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from facerec.cameras.clock import utc_now
from facerec.words.phrasing import one_line

BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
OPEN_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 10.0
MAX_SIDE = 1280  # a frame larger than this is shrunk as it is converted (as a video file's frames are)
NETWORK = ("rtsp", "rtsps", "http", "https", "rtmp")


def redacted(url: str) -> str:
    """The address without its secrets: the password of user:password@ and every query value replaced by ***."""
    parts = urlsplit(url)
    if parts.scheme not in NETWORK:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    query = urlencode([(key, "***") for key, _value in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _secrets(url: str) -> list[str]:
    parts = urlsplit(url)
    found = [value for _key, value in parse_qsl(parts.query) if value]
    if parts.password:
        found.append(parts.password)
    return sorted(found, key=len, reverse=True)


class CameraSource:
    """`start()`, then `take()` as often as recognition is free; `state`, `problem` and the counts say how the
    camera stands (for the page and the status file); `stop()` ends the thread."""

    def __init__(self, url: str, loop: bool = False, backoff: tuple[float, ...] = BACKOFF_S) -> None:
        self.url, self.loop, self.backoff = url, loop, backoff
        self.is_file = urlsplit(url).scheme not in NETWORK and not url.startswith("/dev/")
        self.state, self.problem = "starting", None
        self.received = self.taken = self.dropped = self.reconnects = 0
        self.fps = 0.0
        self.streaming_since: str | None = None  # when the first frame of the current connection came (UTC)
        self._pending = None  # the newest decoded frame not yet taken (an av.VideoFrame), with when it came
        self._ready = threading.Condition()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"camera {redacted(url)}", daemon=True)

    def start(self) -> "CameraSource":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        with self._ready:
            self._ready.notify_all()
        self._thread.join(timeout=OPEN_TIMEOUT_S + READ_TIMEOUT_S)

    @property
    def ended(self) -> bool:
        """A file played to its end (without `loop`), or stopped."""
        return self.state in ("ended", "stopped")

    def take(self, timeout: float = 1.0) -> tuple[np.ndarray, float, float] | None:
        """The newest frame (RGB uint8, at most MAX_SIDE), when it arrived (time.monotonic()) and where it is in the
        stream (seconds since the connection's first frame, by the stream's own clock, or by its count at the
        nominal rate while the stream gives no time), or None when no frame came within `timeout`."""
        with self._ready:
            if self._pending is None:
                self._ready.wait(timeout)
            if self._pending is None:
                return None
            frame, arrived, position = self._pending
            self._pending = None
            self.taken += 1
        scale = min(1.0, MAX_SIDE / max(frame.width, frame.height))
        if scale < 1.0:
            frame = frame.reformat(width=int(frame.width * scale) // 2 * 2, height=int(frame.height * scale) // 2 * 2)
        return frame.to_ndarray(format="rgb24"), arrived, position

    # ----- the decoding thread ----------------------------------------------------------------------------------
    def _run(self) -> None:
        failures = 0
        while not self._stopped.is_set():
            self.state = "connecting" if not self.reconnects else "reconnecting"
            flowed = self._play()
            if self._stopped.is_set():
                break
            if self.is_file and not self.loop and self.problem is None:
                self.state = "ended"
                return
            failures = 0 if flowed else failures + 1
            wait = self.backoff[min(failures, len(self.backoff) - 1)] if not (self.is_file and flowed) else 0.0
            self.state = f"reconnecting in {wait:g} s" if wait else "reconnecting"
            self.reconnects += 1
            self._stopped.wait(wait)
        self.state = "stopped"

    def _play(self) -> bool:
        """Open the stream and hand over its frames until it ends, fails or the source is stopped; whether any
        frame came."""
        import av

        flowed = False
        container = handle = None
        try:
            options = {"rtsp_transport": "tcp"} if self.url.startswith("rtsp") else {}
            if self.is_file:  # a file handle, as a video file is read: FFmpeg follows no address inside it
                handle = open(Path(self.url), "rb")
                container = av.open(handle, "r")
            else:
                container = av.open(self.url, options=options, timeout=(OPEN_TIMEOUT_S, READ_TIMEOUT_S),
                                    format="v4l2" if self.url.startswith("/dev/") else None)
            stream = container.streams.video[0]
            stream.codec_context.thread_count = 1  # a camera's frames are small; many cameras share the cores
            rate = stream.average_rate or stream.guessed_rate
            self.fps = float(rate) if rate else self.fps or 15.0
            self.problem = None
            self.state = "streaming"
            started, origin, count = time.monotonic(), None, 0  # origin: the first frame's time on the stream's clock
            for frame in container.decode(stream):
                if self._stopped.is_set():
                    break
                if not flowed:
                    self.streaming_since = utc_now()
                if origin is None and frame.time is not None:  # an RTSP stream's first frame may have none
                    origin = frame.time - count / self.fps
                untimed = frame.time is None or origin is None  # placed by its count at the nominal rate
                position = count / self.fps if untimed else frame.time - origin
                count += 1
                flowed = True
                if self.is_file and not untimed:  # a file plays at its own pace, as a camera would
                    ahead = position - (time.monotonic() - started)
                    if ahead > 0:
                        self._stopped.wait(ahead)
                self._hand_over(frame, position)
        except (av.error.FFmpegError, OSError, IndexError, UnicodeDecodeError) as error:
            self.problem = self._clean(str(error)) or type(error).__name__
        finally:
            if container is not None:
                container.close()
            if handle is not None:
                handle.close()
        return flowed

    def _hand_over(self, frame, position: float) -> None:
        with self._ready:
            self.received += 1
            if self._pending is not None:
                self.dropped += 1  # recognition was busy: the older frame gives way, never queues
            self._pending = (frame, time.monotonic(), position)
            self._ready.notify()

    def _clean(self, message: str) -> str:
        """The decoder's message without the address's secrets, on one line."""
        message = message.replace(self.url, redacted(self.url))
        for secret in _secrets(self.url):
            message = message.replace(secret, "***")
        return one_line(message)
