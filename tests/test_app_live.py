"""#50: the Live tab in a real browser against `python app.py` on localhost, its camera Chromium's fake one fed a video
built at test time from a shipped public-domain portrait (tests/faces; a Y4M file:
`--use-file-for-fake-video-capture`): the page streams the camera's frames to the server, which names the enrolled
face on the frame it shows and in the status under it."""

from __future__ import annotations

import pytest
from app_server import running_app_with
from browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    VIEWPORT,
    assert_no_traceback,
    expect,
    open_tab,
)

from tests.video_clips import y4m

ALAN = "Barack_Obama"  # photo 1 enrolled; photo 3 (square) is what the camera sees


@pytest.fixture(scope="module")
def app(tmp_path_factory, portrait):
    home = tmp_path_factory.mktemp("live-page") / "home"
    with running_app_with(home, {"Barack Obama": portrait(ALAN, 1)}) as running:
        yield running


@pytest.fixture
def camera_page(browser, app, portrait, tmp_path):
    """A page of a second Chromium (the `browser` fixture's, so skipped or failed as it is) whose camera is the
    Y4M file; the camera is granted without a prompt, as a user's click would."""
    feed = y4m(tmp_path / "camera.y4m", portrait(ALAN, 3))
    chromium = browser.browser_type.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS + [
        "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
        f"--use-file-for-fake-video-capture={feed}"])
    try:
        context = chromium.new_context(viewport=VIEWPORT)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        page.goto(app.url, timeout=TIMEOUT_MS)  # http://127.0.0.1: a secure context, where browsers allow cameras
        yield page
    finally:
        chromium.close()


def test_the_live_tab_names_the_enrolled_face_in_front_of_the_camera(camera_page, shots):
    page = camera_page
    panel = open_tab(page, "Live")
    camera = panel.locator("#live-camera")
    camera.get_by_text("Click to Access Webcam").click()
    camera.get_by_role("button", name="capture photo").click()  # Gradio's Record: frames stream from now on
    status = page.locator("#live-status")
    expect(status).to_contain_text("1 face on this frame: Barack Obama")
    expect(page.locator("#live-shown img")).to_have_count(1)  # the frame with his box and name drawn on it
    assert "dropped while the server was busy" in status.inner_text()
    assert page.locator("#live-camera-note").inner_text().strip() == ""  # a camera: nothing to say about it
    assert_no_traceback(page)
    page.screenshot(path=str(shots / "01-live.png"))


def test_without_a_camera_the_live_tab_says_so_and_no_picture_offers_a_share(page, shots):
    """#64 row 6: with no camera, "Click to Access Webcam" did nothing; Gradio's share button sat on pictures of
    faces. Now the tab says in a sentence that no camera was found (this headless Chromium has none), and no share
    control is anywhere in the page."""
    open_tab(page, "Live")
    note = page.locator("#live-camera-note")
    expect(note).to_contain_text("No camera was found on this device")
    page.screenshot(path=str(shots / "02-live-no-camera.png"))
    for tab in ("Identify", "Live", "Verify", "Enroll"):
        open_tab(page, tab)
        assert page.locator("[aria-label*='share' i], [title*='share' i], .share-button").count() == 0, tab
    assert_no_traceback(page)

