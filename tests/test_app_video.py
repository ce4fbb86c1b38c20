"""#50 in a real browser against `python app.py`: a clip built at test time from shipped portraits
(`tests/video_clips.py`)
uploaded in the Identify tab gives the annotated video and one row per track, the enrolled person named and a
stranger unknown; the Live tab says where a browser allows the camera."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from app_server import running_app, running_app_with
from browser_helpers import assert_no_toast, assert_no_traceback, expect, open_tab
from tests.video_clips import Path2D, clip

# Shipped public-domain portraits (tests/faces): Obama's photo 1 enrolled, his photos 2 and 3 in clips (framed as
# LFW frames a face: `portrait_square`); Grace Hopper is never enrolled.
ALAN, STRANGER = "Barack_Obama", "Grace_Hopper"


@pytest.fixture(scope="module")
def app(tmp_path_factory, portrait):
    home = tmp_path_factory.mktemp("video-page") / "home"
    with running_app_with(home, {"Barack Obama": portrait(ALAN, 1)}) as running:
        yield running


@pytest.fixture(scope="module")
def walk(tmp_path_factory, portrait_square):
    """Barack Obama walks in the left half for 1.2 s; later a stranger in the right half. VP9 WebM, which the
    browser plays (it does not play the MPEG-4 Part 2 that OpenCV writes into MP4 everywhere: 'Video not
    playable')."""
    return clip(tmp_path_factory.mktemp("clips") / "walk.webm",
                [Path2D(portrait_square(ALAN, 2), (0.15, 0.5), (0.55, 0.5), frames=(0, 30)),
                 Path2D(portrait_square(STRANGER, 1), (0.85, 0.5), (0.75, 0.5), frames=(40, 74))],
                frames=75, fourcc="VP90")


def test_a_video_uploaded_in_identify_gives_one_row_per_track(app, page, shoot, walk):
    panel = open_tab(page, "Identify")
    panel.locator("#identify-video input[type=file]").set_input_files(str(walk))
    expect(panel.locator("#identify-video video")).to_have_count(1)  # the upload is in
    panel.get_by_role("button", name="Identify video", exact=True).click()
    status = page.locator("#identify-video-status")
    expect(status).to_contain_text("1 person named: Barack Obama")
    table = panel.get_by_role("grid", name="One row per face followed (a track)")
    expect(table).to_contain_text("Barack Obama")
    rows = [" ".join(row.split()) for row in table.get_by_role("row").all_inner_texts()]
    rows = [row for row in rows if row.startswith("#")]  # the tracks, not the header
    # Barack Obama's track, and the stranger's (a one-frame face in a photo's background may be a third: unknown)
    names = [row.split(" ", 1)[1] for row in rows]  # the name column onwards (the last column: candidates)
    assert len([name for name in names if name.startswith("Barack Obama ")]) == 1, rows
    assert [name for name in names if name.startswith("unknown ")], rows
    expect(page.locator("#identify-video-annotated video")).to_have_count(1)
    source = page.locator("#identify-video-annotated video").get_attribute("src") or ""
    assert source.endswith(".webm"), source
    expect(page.locator("#video-faces img")).to_have_count(len(rows))  # each track's best face
    # ... inside the answer (#63 row 6: each was a file in the web cache a URL could fetch without a session)
    sources = [image.get_attribute("src") or "" for image in page.locator("#video-faces img").all()]
    assert all(src.startswith("data:image/jpeg;base64,") for src in sources), sources
    assert_no_traceback(page)
    assert_no_toast(page)
    shoot("01-video-tracks")
    # Confirm per track, as per face of a photo: Barack Obama's track is one sighting, confirmed.
    agassi = next(row.split()[0] for row in rows if row.split(" ", 1)[1].startswith("Barack Obama "))
    page.locator("#video-feedback-track input").click()
    page.get_by_role("option", name=f"{agassi} Barack Obama").click()
    panel.get_by_role("button", name="Confirm", exact=True).nth(1).click()  # the photo's Confirm is the first
    expect(page.locator("#video-sighting-status")).to_contain_text(f"Confirmed track {agassi} as Barack Obama")
    live = open_tab(page, "Live")
    assert "only on localhost or over HTTPS" in live.inner_text()


def test_without_the_password_a_video_meets_the_tighter_bounds(browser, tmp_path):
    """A page user without the admin password: a video over the anonymous frame bound (1,800 frames, tiny
    frames: refused by what the container says) is one line under the button; with the password it is followed."""
    from browser_helpers import TIMEOUT_MS, VIEWPORT

    long = clip(tmp_path / "long.webm", [], frames=1_801, size=(32, 32), fps=100, fourcc="VP90")
    with running_app(tmp_path / "home", admin_password="video-secret") as app:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        try:
            for password, expected in (("", "over 1,800 frames"), ("video-secret", "0 faces followed")):
                page.goto(app.url, timeout=TIMEOUT_MS)  # a fresh page: an empty video box
                panel = open_tab(page, "Identify")
                status = page.locator("#identify-video-status")
                page.locator("#admin-password input").fill(password)
                panel.locator("#identify-video input[type=file]").set_input_files(str(long))
                expect(panel.locator("#identify-video video")).to_have_count(1)
                panel.get_by_role("button", name="Identify video", exact=True).click()
                expect(status).to_contain_text(expected)
                assert "Traceback" not in status.inner_text()
        finally:
            context.close()


def test_correcting_an_unknown_track_learns_its_face(app, page, portrait_square, tmp_path):
    """A track left unknown (here: a pinned score no track reaches) was kept as no sighting: Correct labels the
    track's best aligned face with its pool, which is learned as a template as a photo's face would be."""
    alone = clip(tmp_path / "alone.webm", [Path2D(portrait_square(ALAN, 3), (0.3, 0.5), (0.7, 0.5))], frames=40,
                 fourcc="VP90")
    panel = open_tab(page, "Identify")
    panel.get_by_label("Or pin a score threshold (optional)").fill("50")
    panel.locator("#identify-video input[type=file]").set_input_files(str(alone))
    expect(panel.locator("#identify-video video")).to_have_count(1)
    panel.get_by_role("button", name="Identify video", exact=True).click()
    expect(page.locator("#identify-video-status")).to_contain_text("1 face followed")
    page.locator("#video-feedback-track input").click()
    page.get_by_role("option", name="#0 unknown").click()
    page.locator("#video-feedback-name input").click()
    page.get_by_role("option", name="Barack Obama").click()
    panel.get_by_role("button", name="Correct", exact=True).nth(1).click()  # the photo's Correct is the first
    feedback = page.locator("#video-sighting-status")
    expect(feedback).to_contain_text("Track #0 is Barack Obama")
    expect(feedback).to_contain_text("Learned as a template of this person")
    assert_no_traceback(page)


def test_a_video_the_browser_cannot_preview_says_so_and_is_answered(app, page, portrait_square, tmp_path):
    """MPEG-4 Part 2 in MP4 (what OpenCV writes everywhere): the browser's player shows an error of its own for the
    upload; the page says why under the button, and Identify video answers it with a video that plays."""
    mp4v = clip(tmp_path / "walk.mp4", [Path2D(portrait_square(ALAN, 3), (0.3, 0.5), (0.7, 0.5))], frames=40)
    panel = open_tab(page, "Identify")
    panel.locator("#identify-video input[type=file]").set_input_files(str(mp4v))
    status = page.locator("#identify-video-status")
    expect(status).to_contain_text("Browsers cannot play MPEG-4 Part 2 video, so the preview above shows an error")
    panel.get_by_role("button", name="Identify video", exact=True).click()
    expect(status).to_contain_text("1 person named: Barack Obama")
    source = page.locator("#identify-video-annotated video").get_attribute("src") or ""
    assert source.endswith(".webm"), source
    assert_no_traceback(page)


def upload(http, video: Path) -> str:
    """`video` uploaded as the page uploads it; the server's path of the upload."""
    (uploaded,) = http.post("gradio_api/upload", files={"files": (video.name, video.read_bytes(), "video/webm")}).json()
    return uploaded


def page_video_event(http, uploaded: str, session: str = "steps-test") -> list[dict]:
    """The page's own Identify video event on `uploaded`, as the browser sends it: every message of its stream."""
    event = next(d for d in http.get("config").json()["dependencies"] if d.get("api_name") == "identify_video")
    video = {"path": uploaded, "orig_name": Path(uploaded).name, "meta": {"_type": "gradio.FileData"}}
    joined = http.post("gradio_api/queue/join", json={"data": [video, "", 3, "", 1.0], "fn_index": event["id"],
                                                      "session_hash": session, "event_data": None,
                                                      "trigger_id": event["targets"][0][0]})
    assert joined.status_code == 200, joined.text
    messages = []
    with http.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                messages.append(json.loads(line[5:]))
                if messages[-1].get("msg") == "process_completed":
                    break
    return messages


def test_the_page_answers_a_video_in_steps_the_table_before_the_drawing(app, walk):
    """#64 row 1: the page drew and encoded the annotated video before showing anything (41-55 s for
    face_recognition's 9 s clip, behind Gradio's generic timer). Now, as the page's own event stream shows: a
    progress line naming the step, the table and the status as soon as the faces are followed (the annotated
    video still empty, the status saying it is being drawn), then the annotated copy."""
    with httpx.Client(base_url=app.url, timeout=120) as http:
        messages = page_video_event(http, upload(http, walk))
    kinds = [m.get("msg") for m in messages]
    progress = [unit.get("desc") or "" for m in messages if m.get("msg") == "progress"
                for unit in m.get("progress_data") or []]
    assert any(desc.startswith("Following the faces: frame") for desc in progress), (progress, kinds, messages[:3])
    steps = [m for m in messages if m.get("msg") in ("process_generating", "process_completed")]
    assert len(steps) >= 2 and kinds[-1] == "process_completed" and messages[-1].get("success"), kinds
    first = json.dumps(steps[0]["output"])
    assert "Barack Obama" in first and "Drawing the answer on the video" in first, first[:2000]
    assert ".webm" not in first  # the table came first, without the drawing
    assert "identified.webm" in json.dumps(steps[-1]["output"])


def test_a_video_sent_twice_at_once_is_answered_once_and_then_said_to_be_gone(app, walk):
    """Found by the flood (#63): the same bytes uploaded twice share one file in Gradio's cache; the first answer
    deletes it, and the second was refused as "walk.webm cannot be read". Now it says the upload is no longer on
    the server and to upload it again."""
    with httpx.Client(base_url=app.url, timeout=120) as http:
        first, second = upload(http, walk), upload(http, walk)
        assert first == second  # one file for both
        answered = page_video_event(http, first, "first")
        assert answered[-1].get("success") and "Barack Obama" in json.dumps(answered[-1]["output"])
        again = json.dumps(page_video_event(http, second, "second")[-1]["output"])
    assert "The uploaded video is no longer on the server" in again and "upload it again" in again, again[:500]
    assert "cannot be read" not in again
