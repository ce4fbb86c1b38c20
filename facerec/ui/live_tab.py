"""Live: the webcam followed frame by frame (`Gallery.live`), names drawn on the frame as tracks are decided, and
said in the status under it (who is on the frame, in words).

Frames are dropped, never queued, when the server falls behind: a page's camera follows one frame at a time, and a
frame that arrives while the previous one is still being followed is skipped at once (a non-blocking lock), so the
answer shown is about what the camera sees now, not seconds ago, and a slow server holds no growing backlog.
Everyone gets the same answer: a track's name when it matches at the threshold in force (never a looser one),
else "unknown" (no runners-up, no scores), as a photo answers a page user without the admin password; frames are
shrunk to the anonymous video bounds' side; live answers are not kept as sightings.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import gradio as gr
import numpy as np

from facerec.errors import InvalidImage
from facerec.faces.detect import DetectedFace
from facerec.faces.drawing import KNOWN, UNKNOWN, annotate
from facerec.gallery.video import LiveFaces
from facerec.ui.camera_input import CameraFrameInput, frame_pixels
from facerec.ui.context import AppContext
from facerec.ui.page_pictures import page_picture
from facerec.ui.text import markdown_text
from facerec.gallery.video import ANONYMOUS_LIMITS
from facerec.words.video import CAMERA_PROBLEMS, LIVE_NOTE, live_refused, live_status

FPS = 5.0  # frames the page sends a second (`stream_every`)
MAX_CAMERAS = 8  # pages following a camera at once; the one idle longest is forgotten first
NO_LANDMARKS = np.zeros((5, 2), np.float32)


class LiveCamera:
    """One page's camera: its `LiveFaces`, and a lock held while a frame is followed."""

    def __init__(self, faces: LiveFaces) -> None:
        self.faces, self.busy = faces, threading.Lock()
        self.followed = self.dropped = self.faces_now = 0
        self.names_now: list[str] = []  # each face's name on the last frame followed, or "unknown"
        self.used = time.monotonic()

    def frame(self, pixels: np.ndarray) -> np.ndarray | None:
        """The frame (RGB uint8) with each face's box and name, or None when it was dropped: the previous frame is
        still being followed."""
        if not self.busy.acquire(blocking=False):
            self.dropped += 1
            return None
        try:
            self.used = time.monotonic()
            pixels = shrunk(np.ascontiguousarray(pixels[..., :3], np.uint8), ANONYMOUS_LIMITS.max_side)
            found = self.faces.see(pixels)
            self.followed += 1
            self.faces_now = len(found)
            faces = [DetectedFace(tuple(box), 1.0, NO_LANDMARKS) for box, _match, _id in found]
            labels = [match.label if match is not None and match.name is not None else "unknown"
                      for _box, match, _id in found]
            self.names_now = labels
            colours = [KNOWN if label != "unknown" else UNKNOWN for label in labels]
            return annotate(pixels, faces, labels, colours) if faces else pixels
        finally:
            self.busy.release()


class LiveCameras:
    """The cameras of the open pages, by Gradio session: at most `most`, the one idle longest forgotten first
    (its tracks with it)."""

    def __init__(self, start: Callable[[], LiveFaces], most: int = MAX_CAMERAS) -> None:
        self.start, self.most = start, most
        self.cameras: OrderedDict[str, LiveCamera] = OrderedDict()
        self.lock = threading.Lock()

    def of(self, session: str) -> LiveCamera:
        with self.lock:
            camera = self.cameras.pop(session, None) or LiveCamera(self.start())
            self.cameras[session] = camera  # the most recently used last
            while len(self.cameras) > self.most:
                self.cameras.popitem(last=False)
            return camera


def shrunk(pixels: np.ndarray, max_side: int) -> np.ndarray:
    """`pixels` with its longer side at most `max_side` (a camera's frame is small; a crafted one need not be)."""
    height, width = pixels.shape[:2]
    if max(height, width) <= max_side:
        return pixels
    import cv2

    scale = max_side / max(height, width)
    return cv2.resize(pixels, (max(1, round(width * scale)), max(1, round(height * scale))),
                      interpolation=cv2.INTER_AREA)


# Run in the page when the tab opens: whether the browser can give it a camera at all, said in a sentence (Gradio's
# webcam box does nothing when it cannot), and again if the user then denies access.
CAMERA_CHECK = """async () => {
  const say = %s;
  const media = navigator.mediaDevices;
  if (!window.isSecureContext || !media || !media.getUserMedia) return say.insecure;
  try {
    const permission = await navigator.permissions.query({name: "camera"});
    permission.onchange = () => {
      const note = document.querySelector("#live-camera-note");
      if (note) note.innerText = permission.state === "denied" ? say.denied : "";
    };
    if (permission.state === "denied") return say.denied;
  } catch (error) {}
  try {
    const devices = await media.enumerateDevices();
    if (!devices.some((device) => device.kind === "videoinput")) return say.none;
  } catch (error) {
    return say.unlisted;
  }
  return "";
}""" % json.dumps(CAMERA_PROBLEMS)


def build(context: AppContext) -> gr.Tab:
    cameras = LiveCameras(lambda: context.gallery.services().video.live(FPS))
    with gr.Tab("Live", id="live") as tab:
        gr.Markdown(LIVE_NOTE, elem_id="live-note")
        with gr.Row():
            # Frames decoded by facerec (photo formats only, bounded), never by Gradio: `facerec.ui.camera_input`.
            camera = CameraFrameInput(sources=["webcam"], streaming=True, type="numpy", image_mode="RGB",
                                      label="Camera", elem_id="live-camera", buttons=[])  # no share of a face
            # Sent inside the answer, never written as a file a URL could fetch; no share button on a face.
            shown = page_picture("Who is in front of the camera", elem_id="live-shown")
        camera_note = gr.Markdown(elem_id="live-camera-note")
        status = gr.Markdown(elem_id="live-status")
    tab.select(None, None, [camera_note], js=CAMERA_CHECK)

    def see(frame, request: gr.Request = None):
        try:
            pixels = frame_pixels(frame)
        except InvalidImage as error:
            return gr.skip(), live_refused(str(error))
        if pixels is None:
            return gr.skip(), gr.skip()
        live = cameras.of(getattr(request, "session_hash", None) or "page")
        drawn = live.frame(pixels)
        if drawn is None:  # dropped: the page keeps showing the last answer
            return gr.skip(), gr.skip()
        return drawn, live_status(live.followed, live.dropped, [markdown_text(name) for name in live.names_now])

    camera.stream(see, [camera], [shown, status], stream_every=1 / FPS, time_limit=600, concurrency_limit=MAX_CAMERAS,
                  api_visibility="private")
    return tab
