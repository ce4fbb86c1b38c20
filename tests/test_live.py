"""#50: the Live tab's camera (`facerec.ui.live_tab`) on real faces: frames of a clip built from a shipped
public-domain portrait (tests/faces), fed as a webcam's would be, name the enrolled person; a frame that arrives
while the previous one is still being followed is dropped at once, never queued; the cameras of many pages are
bounded."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from facerec.gallery import Gallery
from facerec.ui.live_tab import LiveCamera, LiveCameras
from facerec.video.decode import VideoFile
from tests.video_clips import Path2D, clip

ALAN = "Barack_Obama"  # photo 1 enrolled; photo 3 (square, as a clip's face is) walks across the frames


@pytest.fixture(scope="module")
def gallery(tmp_path_factory, portrait):
    with Gallery.open(home=tmp_path_factory.mktemp("home")) as opened:
        opened.enroll(portrait(ALAN, 1), "Barack Obama", allow_low_quality=True)
        yield opened


@pytest.fixture(scope="module")
def frames(tmp_path_factory, portrait) -> list[np.ndarray]:
    video = clip(tmp_path_factory.mktemp("live") / "walk.mp4",
                 [Path2D(portrait(ALAN, 3), (0.3, 0.5), (0.7, 0.5))], frames=20)
    with VideoFile(video) as opened:
        return [frame.pixels for frame in opened.frames()]


def test_the_camera_names_the_enrolled_face_on_the_frame(gallery, frames):
    camera = LiveCamera(gallery.services().video.live(5.0))
    drawn = [camera.frame(pixels) for pixels in frames]
    assert camera.followed == len(frames) and camera.dropped == 0 and camera.faces_now >= 1
    assert all(d is not None and d.shape == frames[0].shape for d in drawn)
    assert not np.array_equal(drawn[-1], frames[-1])  # boxes and names drawn on it
    answers = [match for _box, match, _id in camera.faces.see(frames[-1]) if match is not None]
    assert [m.name for m in answers if m.name] == ["Barack Obama"]
    assert camera.names_now == ["Barack Obama"]  # what the status under the frame says (`live_status`)


def test_a_frame_arriving_while_one_is_followed_is_dropped_not_queued(gallery, frames):
    camera = LiveCamera(gallery.services().video.live(5.0))
    started, release = threading.Event(), threading.Event()
    see = camera.faces.see

    def slow_see(pixels):  # the real follower, held open: the server falling behind
        started.set()
        release.wait(30)
        return see(pixels)

    camera.faces.see = slow_see
    worker = threading.Thread(target=camera.frame, args=(frames[0],))
    worker.start()
    assert started.wait(30)
    begun = time.perf_counter()
    assert [camera.frame(pixels) for pixels in frames[1:6]] == [None] * 5  # dropped at once, none waiting
    assert time.perf_counter() - begun < 0.5 and camera.dropped == 5
    release.set()
    worker.join(30)
    camera.faces.see = see
    assert camera.frame(frames[6]) is not None and camera.followed == 2  # the next frame after it is followed


def test_the_cameras_of_pages_are_bounded_the_idle_longest_forgotten(gallery):
    cameras = LiveCameras(lambda: gallery.services().video.live(5.0), most=2)
    first, second = cameras.of("a"), cameras.of("b")
    assert cameras.of("a") is first  # the same page keeps its camera (and its tracks)
    cameras.of("c")
    assert set(cameras.cameras) == {"a", "c"} and cameras.of("b") is not second
