"""#50: faces followed across a video's frames, one answer per track, on real faces (videos built at test time from
shipped portraits: `tests/video_clips.py`), through the Gallery and the CLI as a user runs it; bad videos are one
line."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from facerec.errors import InvalidVideo, VideoTooLarge
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.openset.pooled import PooledCalibration
from facerec.video.decode import VideoFile, VideoLimits
from facerec.video.follow import MAX_VIEWS, relinked
from facerec.video.tracker import MIN_OVERLAP, colour_histogram, is_cut, overlap
from facerec.video.tracks import Track
from facerec.words.video import preview_note
from tests.video_clips import Path2D, clip

# Shipped public-domain portraits (tests/faces): photo 1 of Obama and of Biden enrolled; the clips show Obama's
# photos 2 and 3, and Biden's only photo (what tracking asserts is the names kept, not a new photo named),
# each framed as LFW frames a face (`portrait_square`); Grace Hopper is never enrolled.
ALAN, COLIN, STRANGER = "Barack_Obama", "Joe_Biden", "Grace_Hopper"


@pytest.fixture(scope="module")
def gallery(tmp_path_factory, portrait):
    with Gallery.open(home=tmp_path_factory.mktemp("home")) as opened:
        opened.enroll(portrait(ALAN, 1), "Barack Obama", allow_low_quality=True)
        opened.enroll(portrait(COLIN, 1), "Joe Biden", allow_low_quality=True)
        yield opened


def names(answer) -> list[str | None]:
    return [track.name for track in answer.tracks]


def named(answer) -> list[str]:
    """The names given, in order (a photo can hold a stranger's face in its background: unknown)."""
    return [track.name for track in answer.tracks if track.name is not None]


def test_a_face_moving_across_the_frames_is_one_named_track(gallery, portrait_square, tmp_path):
    video = clip(tmp_path / "walk.mp4", [Path2D(portrait_square(ALAN, 2), (0.2, 0.5), (0.8, 0.5))], frames=50)
    answer = gallery.identify_video(video)
    assert names(answer) == ["Barack Obama"]
    track = answer.tracks[0]
    data = track.to_dict()
    assert data["first_frame"] == 0 and data["last_frame"] >= 45  # the whole clip, detected every k-th frame
    assert data["frames_seen"] >= 0.9 * answer.counts.detected_frames
    assert data["last_time"] == pytest.approx(data["last_frame"] / 25, abs=1e-3)
    assert data["score"] >= answer.rule.threshold and track.match.sighting_id is not None  # a track is one sighting
    assert track.track.best_crop.shape == (112, 112, 3)
    # every face of every detected frame was followed, but far fewer were embedded: the budget of a video
    assert answer.counts.faces == answer.counts.detected_frames and answer.counts.embedded < answer.counts.faces / 2


def test_two_faces_crossing_keep_their_names(gallery, portrait_square, tmp_path):
    video = clip(tmp_path / "cross.mp4", [Path2D(portrait_square(ALAN, 2), (0.15, 0.35), (0.85, 0.6)),
                                           Path2D(portrait_square(COLIN, 1), (0.85, 0.4), (0.15, 0.65))], frames=60)
    answer = gallery.identify_video(video)
    assert sorted(named(answer)) == ["Barack Obama", "Joe Biden"]
    for track in (t for t in answer.tracks if t.name):
        assert track.track.first_frame == 0 and track.track.last_frame >= 55
        xs = [(box[0] + box[2]) / 2 for box in track.track.boxes]
        moving_right = xs[-1] > xs[0]
        assert moving_right == (track.name == "Barack Obama")  # each name stays on its own face past the crossing


def test_a_stranger_is_not_named(gallery, portrait_square, tmp_path):
    video = clip(tmp_path / "stranger.mp4", [Path2D(portrait_square(STRANGER, 1), (0.3, 0.5), (0.7, 0.5))], frames=40)
    answer = gallery.identify_video(video, remember=False)
    assert names(answer) == [None]
    assert answer.tracks[0].match.score < answer.rule.threshold


def test_a_face_replaced_by_another_in_the_same_place_is_two_tracks(gallery, portrait_square, tmp_path):
    """Both faces sit in the same place on the same background, so their boxes overlap far past what continues a
    track and the colours barely change: only the check of who it is (once a second) tells them apart."""
    video = clip(tmp_path / "cut.mp4", [Path2D(portrait_square(ALAN, 2), (0.5, 0.5), (0.5, 0.5), frames=(0, 24)),
                                         Path2D(portrait_square(COLIN, 1), (0.5, 0.5), (0.5, 0.5), frames=(25, 49))],
                 frames=50, background=(90, 100, 110))
    answer = gallery.identify_video(video, remember=False)
    assert names(answer) == ["Barack Obama", "Joe Biden"]
    first, second = (t.track for t in answer.tracks)
    assert overlap(first.boxes[-1], second.boxes[0]) > MIN_OVERLAP



def test_a_track_started_by_a_split_keeps_its_frames_own_times(gallery, portrait_square, tmp_path):
    """A camera joined mid-stream gives frames whose times are not index / fps. The track a split starts took its
    first time from index / fps (the camera then had to look its position up by the nearest frame); every time a
    track keeps is now the time of the frame it was seen in, split or not."""
    from dataclasses import replace

    video = clip(tmp_path / "cut.mp4", [Path2D(portrait_square(ALAN, 2), (0.5, 0.5), (0.5, 0.5), frames=(0, 24)),
                                         Path2D(portrait_square(COLIN, 1), (0.5, 0.5), (0.5, 0.5), frames=(25, 49))],
                 frames=50)
    joined_at = 1000.0  # the stream's position when the camera was joined
    videos = parts_of(gallery).videos
    with VideoFile(video) as opened:
        follower = videos.follower(opened.info.fps, opened.info.scale)
        times = {}
        for frame in opened.frames(videos._every):
            times[frame.index] = joined_at + frame.time
            follower.see(replace(frame, time=times[frame.index]))
    tracks = [t for t in follower.tracks() if t.pooled is not None]
    assert len(tracks) == 2, [t.frames for t in tracks]
    for track in tracks:
        assert track.times == [times[index] for index in track.frames]
def test_a_stranger_stepping_where_a_face_left_moments_ago_never_joins_its_track(gallery, portrait_square, tmp_path):
    """Barack Obama leaves just after his once-a-second check; 0.4 s later a stranger appears in his very place.
    His lost track is still open (a face may be missed for a moment) and its predicted box overlaps the stranger's,
    so by boxes alone the stranger continued it until the next check, most of a second later. A lost track is
    continued only by a face its pool confirms: the stranger's frames are the stranger's own track from the start."""
    video = clip(tmp_path / "left.mp4", [Path2D(portrait_square(ALAN, 3), (0.5, 0.5), (0.5, 0.5), frames=(0, 30)),
                                          Path2D(portrait_square(STRANGER, 1), (0.5, 0.5), (0.5, 0.5),
                                                 frames=(40, 89))],
                 frames=90)
    answer = gallery.identify_video(video, remember=False)
    alan = [t.track for t in answer.tracks if t.name == "Barack Obama"]
    assert len(alan) == 1 and alan[0].first_frame == 0
    assert alan[0].last_frame <= 30, alan[0].frames  # none of the stranger's frames
    stranger = [t for t in answer.tracks if t.track.last_frame > 30]
    assert len(stranger) == 1 and stranger[0].name is None
    assert stranger[0].track.first_frame <= 42, stranger[0].track.frames  # from the first frame detected on


def test_bad_videos_are_one_line_each(gallery, portrait_square, tmp_path):
    text = tmp_path / "notes.mp4"
    text.write_text("#EXTM3U\n#EXT-X-TARGETDURATION:1\nhttp://example.invalid/a.ts\n")
    with pytest.raises(InvalidVideo, match="not an MP4, MOV, WebM, MKV or AVI video"):
        gallery.identify_video(text)
    whole = clip(tmp_path / "whole.mp4", [Path2D(portrait_square(ALAN, 2), (0.5, 0.5), (0.5, 0.5))], frames=30)
    cut_short = tmp_path / "cut_short.mp4"
    cut_short.write_bytes(whole.read_bytes()[:2000])
    with pytest.raises(InvalidVideo):
        gallery.identify_video(cut_short)
    with pytest.raises(VideoTooLarge, match="lasts over 1 s"):
        gallery.identify_video(whole, limits=VideoLimits(max_seconds=1.0))
    with pytest.raises(VideoTooLarge, match="over 10 frames"):
        gallery.identify_video(whole, limits=VideoLimits(max_frames=10))
    with pytest.raises(VideoTooLarge, match="MiB"):
        gallery.identify_video(whole, limits=VideoLimits(max_bytes=1000))


def test_large_frames_shrink_and_faces_come_back_in_the_videos_own_pixels(portrait_square, tmp_path):
    video = clip(tmp_path / "big.mp4", [Path2D(portrait_square(ALAN, 2), (0.5, 0.5), (0.5, 0.5), side=240)],
                 frames=5, size=(960, 540))
    with VideoFile(video, VideoLimits(max_side=480)) as opened:
        assert opened.info.scale == pytest.approx(0.5)
        frames = list(opened.frames(2))
    assert [f.pixels is not None for f in frames] == [True, False, True, False, True]
    assert frames[0].pixels.shape == (270, 480, 3)


def test_the_cli_answers_a_video_with_a_table_files_and_an_annotated_copy(gallery, portrait_square, tmp_path):
    video = clip(tmp_path / "walk.mp4", [Path2D(portrait_square(ALAN, 2), (0.2, 0.5), (0.8, 0.5))], frames=30)
    home = Path(gallery.services().settings.home)
    run = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", str(video), "--home", str(home),
                          "--out", str(tmp_path / "who"), "--annotate", str(tmp_path / "seen.webm")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "Barack Obama" in run.stdout and "1 person named" in run.stdout
    with open(tmp_path / "who.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["name"] for row in rows] == ["Barack Obama"] and rows[0]["seconds"].startswith("0.00-")
    assert json.loads((tmp_path / "who.json").read_text())["photos"][0]["video"] is True
    import cv2

    written = cv2.VideoCapture(str(tmp_path / "seen.webm"))
    count = 0
    while written.read()[0]:
        count += 1
    assert count == 30 and (tmp_path / "seen.webm").stat().st_mode & 0o077 == 0
    as_json = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", str(video), "--home", str(home),
                              "--json"], capture_output=True, text=True, timeout=600)
    assert json.loads(as_json.stdout)["tracks"][0]["name"] == "Barack Obama"
    bad = tmp_path / "bad.mov"
    bad.write_bytes(b"\x00\x00\x00\x18ftypqt  " + bytes(500))
    refused = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", str(bad), "--home", str(home)],
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "bad.mov" in refused.stderr


def test_videos_inside_a_folder_are_answered_per_track(gallery, portrait_square, tmp_path):
    library = tmp_path / "library"
    library.mkdir()
    clip(library / "walk.mp4", [Path2D(portrait_square(ALAN, 2), (0.2, 0.5), (0.8, 0.5))], frames=25)
    (library / "broken.webm").write_bytes(b"\x1a\x45\xdf\xa3" + bytes(100))
    run = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", str(library), "--home",
                          str(gallery.services().settings.home), "--out", str(tmp_path / "lib")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    answers = {entry["photo"]: entry for entry in json.loads((tmp_path / "lib.json").read_text())["photos"]}
    assert [face["name"] for face in answers["walk.mp4"]["faces"]] == ["Barack Obama"]
    assert answers["broken.webm"]["problem"] and not answers["broken.webm"]["faces"]


# ----- the parts on their own ---------------------------------------------------------------------------------
def test_a_cut_is_a_wholesale_change_of_colours_not_motion():
    rng = np.random.default_rng(0)
    scene = rng.integers(0, 255, (90, 160, 3), dtype=np.uint8)
    moved = np.roll(scene, 12, axis=1)
    other = np.clip(scene.astype(int) // 3 + np.array([150, 20, 20]), 0, 255).astype(np.uint8)
    assert not is_cut(colour_histogram(scene), colour_histogram(moved))
    assert is_cut(colour_histogram(scene), colour_histogram(other))
    assert not is_cut(None, colour_histogram(scene))


def test_pooling_weighs_views_by_quality_and_relinking_merges_only_strong_pairs():
    a, b = np.eye(4, dtype=np.float32)[0], np.eye(4, dtype=np.float32)[1]
    track = Track(1)
    track.add_view(a, 0.9, 0, None, None)
    track.add_view(b, 0.1, 3, None, None)
    assert track.pooled @ a > 0.99 * np.cos(np.arctan(0.1 / 0.9)) and track.best_quality == 0.9
    first, again, other = Track(1), Track(2), Track(3)
    for t, frames, view in ((first, (0, 3), a), (again, (20, 23), a), (other, (30, 33), b)):
        for frame in frames:
            t.saw(frame, frame / 10, (0, 0, 10, 10))
        t.add_view(view, 0.5, frames[0], None, None)
    same = lambda x, y: float(x @ y) if x @ y > 0.9 else None  # noqa: E731
    kept, merges = relinked([first, again, other], same, window_frames=30)
    assert merges == 1 and [t.id for t in kept] == [1, 3] and kept[0].frames == [0, 3, 20, 23]
    kept, merges = relinked([first, other], lambda x, y: 1.0, window_frames=5)  # too far apart in time
    assert merges == 0


def test_a_missing_or_foreign_pooled_calibration_says_so(tmp_path):
    missing = PooledCalibration.load(tmp_path / "none.video.json", "abc")
    assert missing.shift == 0 and "no calibration for pooled evidence" in missing.warning
    (tmp_path / "m.video.json").write_text(json.dumps({"shift": 0.4, "model_sha256": "other"}))
    assert "another model file" in PooledCalibration.load(tmp_path / "m.video.json", "abc").warning
    (tmp_path / "n.video.json").write_text(json.dumps({"shift": 0.4, "model_sha256": "abc"}))
    assert PooledCalibration.load(tmp_path / "n.video.json", "abc") == PooledCalibration(0.4, "abc", {}, None)


def test_an_unknown_track_is_kept_for_suggestions_only_when_they_are_on(portrait, portrait_square, tmp_path):
    """As a photo's unknown face: one face per unknown track (its pool and best face), the video one photo."""
    video = clip(tmp_path / "stranger.mp4", [Path2D(portrait_square(STRANGER, 1), (0.3, 0.5), (0.7, 0.5))], frames=40)
    for wanted, kept in ((None, 0), (True, 1)):
        with Gallery.open(home=tmp_path / f"home-{wanted}", suggestions=wanted) as opened:
            opened.enroll(portrait(ALAN, 1), "Barack Obama", allow_low_quality=True)
            answer = opened.identify_video(video)
            assert named(answer) == [] and len(answer.tracks) == 1
            opened.identify_video(video)  # the same video again: the same face of the same photo, kept once
            assert parts_of(opened).strangers.count() == kept


def test_a_video_of_exactly_the_most_frames_allowed_is_read_whole(tmp_path):
    """The frame bound is checked once a frame is known to exist: a clip of exactly `max_frames` frames passed the
    container's count and was then refused after its last frame (found measuring a request at the maxima)."""
    video = clip(tmp_path / "exact.mp4", [], frames=40, size=(64, 64))
    with VideoFile(video, VideoLimits(max_frames=40)) as opened:
        assert len(list(opened.frames(1))) == 40
    with pytest.raises(VideoTooLarge):
        with VideoFile(video, VideoLimits(max_frames=39)) as opened:
            list(opened.frames(1))


def test_views_are_bounded_by_max_views_per_stretch_followed_as_the_docs_say(gallery, portrait_square, tmp_path):
    """`MAX_VIEWS` bounds the views pooled while a face is followed without a gap; a track re-linked after one pools
    each stretch's (its `views` may reach a multiple of it): the code's bound, and the docs say the same. At 5
    frames a second a still face earns a view at every once-a-second refresh, so 16 s of it fill the bound."""
    photo = portrait_square(ALAN, 3)
    still = clip(tmp_path / "still.mp4", [Path2D(photo, (0.5, 0.5), (0.5, 0.5))], frames=80, fps=5)
    (track,) = [t.track for t in gallery.identify_video(still, remember=False).tracks]
    assert track.views == MAX_VIEWS
    back = clip(tmp_path / "back.mp4", [Path2D(photo, (0.5, 0.5), (0.5, 0.5), frames=(0, 79)),
                                        Path2D(photo, (0.5, 0.5), (0.5, 0.5), frames=(88, 167))], frames=168, fps=5)
    answer = gallery.identify_video(back, remember=False)  # gone for 1.6 s: past the gap a track survives
    (track,) = [t.track for t in answer.tracks]
    assert answer.counts.relinked == 1 and track.views == 2 * MAX_VIEWS
    docs = " ".join((Path(__file__).parents[1] / "docs" / "architecture.md").read_text().split())
    assert f"at most {MAX_VIEWS} views while the face is followed without a gap" in docs


def test_the_codec_and_container_say_whether_a_browser_can_preview_the_video(tmp_path):
    """What the page tells a user whose upload its player cannot play (`preview_note`): OpenCV's MP4 is MPEG-4
    Part 2, which no browser plays; VP9 WebM plays; an AVI never does, whatever it holds."""
    for name, fourcc, container, codec, note in (("a.mp4", "mp4v", "mp4", "mpeg4", "MPEG-4 Part 2 video"),
                                                 ("a.webm", "VP90", "matroska", "vp9", ""),
                                                 ("a.avi", "MJPG", "avi", "mjpeg", "an AVI file")):
        with VideoFile(clip(tmp_path / name, [], frames=3, size=(64, 64), fourcc=fourcc)) as opened:
            assert (opened.info.container, opened.info.codec) == (container, codec)
            said = preview_note(opened.info.container, opened.info.codec)
        assert (note in said) if note else said == ""
