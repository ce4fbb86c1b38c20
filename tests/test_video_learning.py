"""#50: Confirm and Correct on a video track teach the gallery as a photo's face does (`facerec.gallery.templates`),
on real faces (clips built at test time from shipped portraits: `tests/video_clips.py`).

A named track is one sighting (its pooled embedding and its best aligned face): confirming or correcting it learns
that face through the sighting, as a photo's. A track not kept as a sighting (unknown, or named past the pace of
automatic sightings) has no photo to re-align a face from; its best aligned crop and its pool are labelled
instead, and learned through the same checks: a usable face, one that matches the person named at the threshold in
force, and a photo they were enrolled from. A stranger's track corrected to an enrolled person is not learned.
"""

from __future__ import annotations

import numpy as np
import pytest

from facerec.formats.archive import decode_crop
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from tests.video_clips import Path2D, clip

# Shipped public-domain portraits (tests/faces): photo 1 of Obama and of Biden enrolled; the clips show Obama's
# photos 2 and 3, framed as LFW frames a face (`portrait_square`), and Grace Hopper, never enrolled.
ALAN, COLIN, STRANGER = "Barack_Obama", "Joe_Biden", "Grace_Hopper"
STRICT = 50.0  # a pinned score no track reaches: every track unknown, none kept as a sighting


@pytest.fixture
def gallery(tmp_path, portrait):
    with Gallery.open(home=tmp_path / "home") as opened:
        opened.enroll(portrait(ALAN, 1), "Barack Obama", allow_low_quality=True)
        opened.enroll(portrait(COLIN, 1), "Joe Biden", allow_low_quality=True)
        yield opened


def walk(tmp_path, photo, name: str = "walk.mp4"):
    return clip(tmp_path / name, [Path2D(photo, (0.3, 0.5), (0.7, 0.5))], frames=40)


def main_track(answer):
    """The walking face's track (a photo can hold a stranger's face in its background: another track)."""
    return max(answer.tracks, key=lambda t: len(t.track.frames))


def learned(gallery, name: str) -> list:
    return [t for t in gallery.services().templates.of(name) if t.origin == "learned"]


def test_confirming_a_named_track_learns_its_best_face(gallery, portrait_square, tmp_path):
    answer = gallery.identify_video(walk(tmp_path, portrait_square(ALAN, 2)))
    (track,) = [t for t in answer.tracks if t.name]
    assert track.name == "Barack Obama" and track.match.sighting_id is not None
    info = gallery.services().feedback.confirm(track.match.sighting_id, learn_by="admin password")
    assert info.learning["learned_face_id"] is not None, info.learning
    assert [(t.learned_from, t.learned_by) for t in learned(gallery, "Barack Obama")] == [
        (track.match.sighting_id, "admin password")]


def test_correcting_a_named_track_learns_only_for_the_person_whose_face_it_is(gallery, portrait_square, tmp_path):
    answer = gallery.identify_video(walk(tmp_path, portrait_square(ALAN, 2)))
    (track,) = [t for t in answer.tracks if t.name]
    wrong = gallery.services().feedback.correct(track.match.sighting_id, "Joe Biden", learn_by="t")
    assert wrong.learning["learned_face_id"] is None and "does not match" in wrong.learning["not_learned_because"]
    right = gallery.services().feedback.correct(track.match.sighting_id, "Barack Obama", learn_by="t")
    assert right.learning["learned_face_id"] is not None, right.learning
    assert len(learned(gallery, "Barack Obama")) == 1 and not learned(gallery, "Joe Biden")


def test_correcting_an_unknown_track_learns_its_best_face(gallery, portrait_square, tmp_path):
    """The track was left unknown (a strict pinned threshold), so no sighting was kept: Correct labels the track's
    best aligned face with its pool, and that face, the one shown, is learned as a photo's would be (not the pool,
    which a face cross-fading into another shares between the two: #63 row 3)."""
    answer = gallery.identify_video(walk(tmp_path, portrait_square(ALAN, 2)), threshold=STRICT)
    track = main_track(answer)
    assert track.name is None and track.match.sighting_id is None
    seen = track.track
    info = gallery.services().feedback.label(seen.pooled, "Barack Obama", face=seen.best_face, crop=seen.best_crop,
                                             learn_by="t")
    assert info.learning["learned_face_id"] is not None, info.learning
    (template,) = learned(gallery, "Barack Obama")
    assert template.learned_from == info.id
    kept = parts_of(gallery).store.faces.of_origin(template.identity_id, ("learned",))[1]
    shown = gallery.services().directory.face_crop(template.face_id)  # its crop is kept, for a reindex to re-embed
    assert shown
    face = parts_of(gallery).pipeline.embedder.embed(decode_crop(shown)[None])[0]
    assert float(kept[0] @ face) == pytest.approx(1.0, abs=1e-4)  # the face shown is the template
    assert float(kept[0] @ seen.pooled) > 0.8  # and it is the same face as the pool
    # Confirm of a named track that was not kept (past the pace of automatic sightings) takes the same path.
    again = gallery.identify_video(walk(tmp_path, portrait_square(ALAN, 3), "again.mp4"), remember=False)
    (named,) = [t for t in again.tracks if t.name]
    confirmed = gallery.services().feedback.label(named.track.pooled, "Barack Obama", confirmed=True,
                                                  face=named.track.best_face, crop=named.track.best_crop, learn_by="t")
    assert confirmed.source == "confirmed" and confirmed.learning["learned_face_id"] is not None, confirmed.learning


def test_a_strangers_track_corrected_to_an_enrolled_person_is_not_learned(gallery, portrait_square, tmp_path):
    answer = gallery.identify_video(walk(tmp_path, portrait_square(STRANGER, 1)), remember=False)
    track = main_track(answer)
    assert track.name is None
    seen = track.track
    info = gallery.services().feedback.label(seen.pooled, "Barack Obama", face=seen.best_face, crop=seen.best_crop,
                                             learn_by="t")
    assert info.learning["learned_face_id"] is None and "does not match" in info.learning["not_learned_because"]
    assert not learned(gallery, "Barack Obama")
    assert np.isfinite(info.similarity)
