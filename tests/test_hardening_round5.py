"""Hardening round 5 (#63), the rows not about the Live tab (tests/test_live_frames.py has rows 1, 2 and 6's Live
part). Each test fails on 8d20703. Real videos made from LFW photos (tests/video_clips.py), a real gallery, the CLI
in a subprocess as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_videos import crowd_clip
from video_clips import Path2D, clip, cross_fade_clip

from facerec.gallery import Gallery
from facerec.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
POWELL = "Colin_Powell"


def test_row_8_a_folder_named_like_a_protocol_is_still_only_a_folder(tmp_path, lfw_photo) -> None:
    """`facerec identify file:` run in a library whose folder is called `file:` used to hand FFmpeg
    "file:/abs/path/clip.mp4": another file, outside the folder (past the link guard). Now FFmpeg gets the
    absolute path of the file inside the folder, which has no face."""
    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(lfw_photo(POWELL, 1), "Colin Powell")
    (tmp_path / "outside").mkdir()
    outside = clip(tmp_path / "outside" / "clip.mp4", [Path2D(lfw_photo(POWELL, 2), (0.5, 0.5), (0.5, 0.5))])
    library = tmp_path / "library"
    inside = library / "file:" / str(outside).lstrip("/")
    inside.parent.mkdir(parents=True)
    clip(inside, [])  # the same name, inside the folder: a plain background, no face
    result = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", "file:", "--out", "answers",
                             "--home", str(home), "--json"], capture_output=True, text=True, timeout=600,
                            cwd=library, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads((library / "answers.json").read_text())["photos"]
    assert entry["photo"] == str(Path(str(outside).lstrip("/")))
    assert entry["faces"] == [], entry  # the face was Colin Powell's, in the file outside the folder


class CountingScorer:
    """The gallery's own scorer, counting how often a face's cohort statistics are computed (each costs a product
    with the whole cohort)."""

    def __init__(self, real) -> None:
        self.real, self.calls = real, 0

    def statistics(self, embeddings):
        self.calls += 1
        return self.real.statistics(embeddings)


def test_row_4_relinking_costs_one_statistic_per_track_and_a_video_has_at_most_so_many_tracks(
        tmp_path, lfw, monkeypatch) -> None:
    """Re-linking compared each track with every track that ended in the 3 s before it, computing both pools'
    cohort statistics for each comparison: cost grew with the square of the tracks (442 CPU-s for 652 tracks).
    Now each pool's statistics are computed once. And past MAX_TRACKS a face starts no track (counted)."""
    from facerec.gallery.composition import parts_of
    from facerec.video import follow
    from facerec.video.decode import VideoFile
    from facerec.video.follow import RELINK_SECONDS, relinked

    video = crowd_clip(tmp_path / "crowd.mp4", lfw)
    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        videos = parts_of(gallery).videos
        with VideoFile(video) as opened:
            follower = videos.follower(opened.info.fps, opened.info.scale)
            for frame in opened.frames(videos._every):
                follower.see(frame)
            fps = opened.info.fps
        tracks = [t for t in follower.tracks() if t.pooled is not None]
        assert len(tracks) >= 50
        counting = CountingScorer(videos._scorer)  # the video service's own part, counted
        monkeypatch.setattr(videos, "_scorer", counting)
        _kept, merges = relinked(tracks, videos.same_face(), RELINK_SECONDS * fps)
        # once per pool: each track's, and each merged track's new one (was 2 per pair compared)
        assert counting.calls <= len(tracks) + merges, (counting.calls, len(tracks), merges)
        monkeypatch.setattr(follow, "MAX_TRACKS", 20)
        answer = gallery.identify_video(video, remember=False)
        assert len(answer.tracks) <= 20 and answer.counts.untracked > 0


def test_row_10_one_video_keeps_at_most_as_many_unknown_faces_as_a_photo(tmp_path, lfw) -> None:
    """With suggestions on, one video kept every unknown track (647 faces from one 2.8 MB request); a photo keeps
    at most its 50 largest faces, and so now does a video."""
    from facerec.faces.detect import MAX_FACES

    video = crowd_clip(tmp_path / "crowd.mp4", lfw, people=80)
    with Gallery(Settings(home=tmp_path / "home", suggestions=True)) as gallery:
        gallery.enroll(sorted((lfw / "Colin_Powell").iterdir())[0], "Colin Powell")
        answer = gallery.identify_video(video)
        assert sum(track.name is None for track in answer.tracks) > MAX_FACES
        from facerec.gallery.composition import parts_of

        memory = parts_of(gallery).strangers
        memory.settle()
        assert memory.count() == MAX_FACES


def test_row_3_a_confirmed_cross_fade_track_does_not_teach_the_stranger(tmp_path, lfw_photo) -> None:
    """Donald Rumsfeld's face cross-fading in place into Vladimir Putin's stays one track, named Rumsfeld, its
    shown face Rumsfeld's; confirming it learned the pooled views, half Putin: 19 of 20 of Putin's photos were
    then named Rumsfeld. Now the face shown is what is learned, and a name through a learned face needs
    Rumsfeld's own photo to agree."""
    video = cross_fade_clip(tmp_path / "fade.mp4", lfw_photo("Donald_Rumsfeld", 1), lfw_photo("Vladimir_Putin", 1))
    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        gallery.enroll(lfw_photo("Donald_Rumsfeld", 2), "Donald Rumsfeld")
        for person in ("Alan_Ball", "Biljana_Plavsic"):
            gallery.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_low_quality=True)
        tracks = [t for t in gallery.identify_video(video).tracks if t.name == "Donald Rumsfeld"]
        assert tracks and tracks[0].match.sighting_id is not None
        for track in tracks:
            gallery.services().feedback.confirm(track.match.sighting_id, learn_by="admin password")
        named = [max(gallery.identify(lfw_photo("Vladimir_Putin", i), remember=False),
                     key=lambda m: m.face.width).name for i in range(2, 22)]
        assert named.count("Donald Rumsfeld") <= 1, named


# ----- rows 5 and 9: a video's decoding bounded by what it is -----------------------------------------------------
def peak_added_mb(work) -> tuple[object, float]:
    """Run `work()` and return (its result or the exception it raised, the rise of this process's resident peak
    during it, in MB): the peak (`VmHWM`) is reset first."""
    def peak_kb() -> int:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM"))
        return int(line.split()[1])

    Path("/proc/self/clear_refs").write_text("5")
    before = peak_kb()
    try:
        outcome = work()
    except Exception as error:  # noqa: BLE001 - the refusal is the outcome
        outcome = error
    return outcome, (peak_kb() - before) / 1024


def test_row_9_a_frame_larger_than_the_first_is_refused_before_it_is_decoded(tmp_path) -> None:
    """A 320 x 240 first frame (what the container announces) and then 16,000 x 16,000 Motion JPEG frames: on
    8d20703 each was decoded whole (+390 MB for a 13.5 MB file) and the video answered. Now the decoder itself
    refuses a frame over 4K before allocating it: one line, and the memory of a small frame."""
    from hostile_videos import growing_frames

    from facerec.errors import VideoTooLarge
    from facerec.gallery.video import ANONYMOUS_LIMITS
    from facerec.video.decode import VideoFile

    video = growing_frames(tmp_path / "growing.avi", frames=3)

    def follow():
        with VideoFile(video, ANONYMOUS_LIMITS) as opened:
            assert (opened.info.width, opened.info.height) == (320, 240)
            return sum(1 for _ in opened.frames(1))

    outcome, added_mb = peak_added_mb(follow)
    assert isinstance(outcome, VideoTooLarge), outcome
    assert "has a frame over the 9.4 megapixels (4K)" in str(outcome) and "\n" not in str(outcome)
    assert added_mb < 150, added_mb  # one 16,000 x 16,000 frame alone is 384 MB in 4:2:0


def test_row_5_a_video_that_decodes_to_more_than_its_bound_is_refused_before_its_first_frame(tmp_path) -> None:
    """A few hundred kB of VP9 that decode to 1,800 frames of 39.9 megapixels cost 617 CPU-s on 8d20703. Now a
    video's frames are at most 4K, and the pixels a request may decode in all are bounded (frames x size, from
    the container before the first frame, and counted again while decoding)."""
    from hostile_videos import decompression_bomb

    from facerec.errors import VideoTooLarge
    from facerec.gallery.video import ANONYMOUS_LIMITS
    from facerec.video.decode import MAX_FRAME_PIXELS, VideoFile, VideoLimits

    over_4k = decompression_bomb(tmp_path / "huge.avi", size=(7_296, 5_472), frames=2)
    with pytest.raises(VideoTooLarge, match="has 7296 x 5472 frames, over the 9.4 megapixels"):
        VideoFile(over_4k, ANONYMOUS_LIMITS)
    at_4k = decompression_bomb(tmp_path / "4k.webm", size=(4_096, 2_304), frames=30, format="webm")
    assert 30 * MAX_FRAME_PIXELS > 200e6
    tight = VideoLimits(max_decoded_pixels=200_000_000)
    with pytest.raises(VideoTooLarge, match="decodes to over 200 megapixels in all"):
        VideoFile(at_4k, tight)
    with VideoFile(at_4k, VideoLimits(max_decoded_pixels=31 * MAX_FRAME_PIXELS)) as opened:  # within: read whole
        frames = [frame for frame in opened.frames(10)]
    assert len(frames) == 30 and frames[0].pixels.shape == (720, 1280, 3)  # converted straight at the working size
    assert ANONYMOUS_LIMITS.max_decoded_pixels == 1_800 * 1920 * 1080  # SECURITY.md's figure


def test_row_5_a_fourth_video_is_refused_at_once_while_three_are_in() -> None:
    """The page's anonymous video queue took any number of jobs (the 30th started after ~6.5 h). The waiting room
    both doors use holds the video followed and two waiting; the next is refused in one line, at once."""
    import threading

    from facerec.errors import Busy
    from facerec.video.waiting_room import PLACES, WaitingRoom

    room, inside, release = WaitingRoom(PLACES), threading.Barrier(PLACES + 1), threading.Event()

    def video():
        with room.admitted():
            inside.wait()
            release.wait(30)

    threads = [threading.Thread(target=video) for _ in range(PLACES)]
    for thread in threads:
        thread.start()
    inside.wait(30)
    with pytest.raises(Busy, match="3 videos are already being followed or waiting here; try again in a few minutes"):
        with room.admitted():
            pass
    release.set()
    for thread in threads:
        thread.join(30)
    assert room.inside == 0
    with room.admitted():  # the places came back
        assert room.inside == 1
