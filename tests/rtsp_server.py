"""A real RTSP server for the camera tests: GStreamer's gst-rtsp-server (Debian's gir1.2-gst-rtsp-server-1.0,
the server library GStreamer ships and NVRs and test rigs build on), run by Debian's own python3 (python3-gi), not
the test venv. It serves a video file at rtsp://127.0.0.1:PORT/PATH, re-encoded as H.264 as cameras send it, once
per session or `--loops N` times back to back (GStreamer's concat, so the stream runs on without a break), one
stream shared by every client. With `--encoded` (an H.264 MP4, as benchmarks/cameras.py prepares it) the file is
sent as it is to each client on a pipeline of its own: many clients then cost the server almost nothing.

    /usr/bin/python3 tests/rtsp_server.py PORT /door clip.mp4 [--loops N | --encoded]

Prints "ready" once it listens; runs until killed."""

import argparse

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("port")
parser.add_argument("path")
parser.add_argument("clip")
parser.add_argument("--loops", type=int, default=1)
parser.add_argument("--encoded", action="store_true")
args = parser.parse_args()
Gst.init(None)
factory = GstRtspServer.RTSPMediaFactory()
if args.encoded:
    factory.set_launch(f"( filesrc location={args.clip} ! qtdemux ! h264parse ! clocksync "  # paced as a camera
                       "! rtph264pay name=pay0 pt=96 config-interval=1 )")
else:
    sources = " ".join(f"filesrc location={args.clip} ! decodebin ! videoconvert ! video/x-raw,format=I420 ! c."
                       for _ in range(args.loops))
    factory.set_launch(f"( concat name=c ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 "
                       f"! rtph264pay name=pay0 pt=96 config-interval=1 {sources} )")
    factory.set_shared(True)
server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(args.port)
server.get_mount_points().add_factory(args.path, factory)
server.attach(None)
print("ready", flush=True)
GLib.MainLoop().run()
