"""Real servers for the camera tests (#67 item 4), started by the tests: GStreamer's RTSP server (tests/rtsp_server.py,
on Debian's python3), Debian's mosquitto as the MQTT broker, and an in-process webhook receiver (one that answers,
or one that hangs). Each fails, not skips, under CI=true when its Debian package is missing (.ci/run installs them)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from app_server import free_port

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = "/usr/bin/python3"
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def need(ok: bool, what: str) -> None:
    if not ok:
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"{what} is missing (.ci/run installs it)", pytrace=False)
        pytest.skip(f"{what} is missing (apt-get install gstreamer1.0-rtsp gir1.2-gst-rtsp-server-1.0 "
                    "gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly gstreamer1.0-libav mosquitto)")


def rtsp_available() -> bool:
    if not Path(SYSTEM_PYTHON).is_file():
        return False
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import gi; gi.require_version('GstRtspServer', '1.0'); "
                            "from gi.repository import Gst, GstRtspServer; Gst.init(None); "
                            "assert Gst.ElementFactory.find('x264enc') and Gst.ElementFactory.find('avdec_mpeg4')"],
                           capture_output=True, timeout=60)
    return probe.returncode == 0


@dataclass
class RtspServer:
    port: int
    path: str
    clip: Path
    loops: int = 1
    encoded: bool = False
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"rtsp://127.0.0.1:{self.port}{self.path}"

    def start(self) -> "RtspServer":
        self.process = subprocess.Popen([SYSTEM_PYTHON, str(HERE / "rtsp_server.py"), str(self.port), self.path,
                                         str(self.clip), "--loops", str(self.loops),
                                         *(["--encoded"] if self.encoded else [])], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()
        assert line.strip() == "ready", f"the RTSP server did not start: {line}{self.process.stdout.read()[:2000]}"
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@contextlib.contextmanager
def rtsp_server(clip: Path, loops: int = 1, path: str = "/door", encoded: bool = False) -> Iterator[RtspServer]:
    need(rtsp_available(), "GStreamer's RTSP server (gir1.2-gst-rtsp-server-1.0, x264enc, avdec_mpeg4)")
    server = RtspServer(free_port(), path, clip, loops, encoded).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def mosquitto(tmp: Path) -> Iterator[int]:
    """A broker on a free port of 127.0.0.1 (anonymous, no persistence); yields its port."""
    need(Path(MOSQUITTO).is_file(), "mosquitto")
    port = free_port()
    config = tmp / "mosquitto.conf"
    config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    process = subprocess.Popen([MOSQUITTO, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _listens(port):
            assert process.poll() is None and time.monotonic() < deadline, "mosquitto did not start"
            time.sleep(0.1)
        yield port
    finally:
        process.kill()
        process.wait(timeout=30)


def _listens(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Subscriber:
    """Every message on the broker, as (topic, payload text, retained)."""

    port: int
    messages: list[tuple[str, str, bool]] = field(default_factory=list)

    def __enter__(self) -> "Subscriber":
        import paho.mqtt.client as mqtt

        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-subscriber")
        ready = threading.Event()
        self.client.on_connect = lambda client, *_: (client.subscribe("#", qos=1), ready.set())
        self.client.on_message = lambda _c, _u, m: self.messages.append((m.topic, m.payload.decode(), m.retain))
        self.client.connect("127.0.0.1", self.port)
        self.client.loop_start()
        assert ready.wait(20), "the test subscriber could not connect"
        time.sleep(0.5)  # its subscription in place
        return self

    def __exit__(self, *_exc) -> None:
        self.client.loop_stop()
        self.client.disconnect()

    def on(self, topic: str) -> list[str]:
        return [payload for t, payload, _retained in self.messages if t == topic]


class LocalServer:
    """An HTTP server of the test's own on a free port of 127.0.0.1, serving `handler()` on threads until exit."""

    path = "/"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def __enter__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Receiver(LocalServer):
    """An HTTP server on a free port that records each POST (with whether its signature is right) or hangs."""

    secret: bytes
    hang: bool = False
    posts: list[dict] = field(default_factory=list)
    bad_signatures: int = 0

    path = "/hook"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.hang:
                    time.sleep(3600)  # a sink that never answers
                    return
                stamp = self.headers.get("X-Facerec-Timestamp", "")
                wanted = "sha256=" + hmac.new(receiver.secret, stamp.encode() + b"." + body,
                                              hashlib.sha256).hexdigest()
                if hmac.compare_digest(wanted, self.headers.get("X-Facerec-Signature", "")):
                    receiver.posts.append(json.loads(body))
                else:
                    receiver.bad_signatures += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_args):
                pass

        return Handler


class MjpegCamera(LocalServer):
    """An HTTP MJPEG camera, as IP cameras serve one (multipart/x-mixed-replace, a JPEG per part), playing a clip's
    frames at `fps` in a loop, on a free port of 127.0.0.1; `url` is its stream."""

    def __init__(self, clip: Path, fps: float = 15.0) -> None:
        import io

        import av
        from PIL import Image

        self.fps, self.frames = fps, []
        with av.open(str(clip)) as container:
            for frame in container.decode(video=0):
                buffer = io.BytesIO()
                Image.fromarray(frame.to_ndarray(format="rgb24")).save(buffer, "JPEG", quality=85)
                self.frames.append(buffer.getvalue())

    path = "/video.mjpg"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        camera = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                try:
                    index = 0
                    while True:
                        jpeg = camera.frames[index % len(camera.frames)]
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                                         + str(len(jpeg)).encode() + b"\r\n\r\n" + jpeg + b"\r\n")
                        index += 1
                        time.sleep(1.0 / camera.fps)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def log_message(self, *_args):
                pass

        return Handler
