"""Identification end to end on both backends: enrolled people named from another photo, strangers unknown, group
photos.

The galleries and helpers are gallery_world.py's (every test runs on SQLite and on PostgreSQL)."""

from __future__ import annotations

import json

import pytest
from gallery_world import PEOPLE, STRANGERS, display
from group_photos import group_photo

from facerec.errors import InvalidArgument
from facerec.gallery.results import FaceMatch
from facerec.openset.threshold_policy import ThresholdPolicy


# ----- identification ---------------------------------------------------------------------------------------
def test_other_photo_of_each_enrolled_person_is_identified_by_name(gallery, lfw_photo) -> None:
    for person in PEOPLE:
        matches = gallery.identify(lfw_photo(person, 2))
        assert len(matches) == 1
        match = matches[0]
        assert isinstance(match, FaceMatch)
        assert match.name == display(person) and match.label == display(person)
        assert match.score >= gallery.services().thresholds.in_force().threshold == match.score_threshold
        assert match.candidates[0].name == display(person)
        assert match.candidates[0].similarity == pytest.approx(match.similarity)
        assert [c.score for c in match.candidates] == sorted((c.score for c in match.candidates),
                                                              reverse=True)  # best first by the score
        assert match.to_dict()["known"] is True


def test_threshold_comes_from_the_model_card(gallery) -> None:
    # The model card's calibration, at the accepted stranger-match rate, for this gallery's size
    # (facerec.openset.threshold_policy; tests/test_threshold_policy.py covers the rule itself).
    card = json.loads(gallery.services().settings.model_card_path.read_text())
    policy = ThresholdPolicy.from_card(card, gallery.services().settings.fpir)
    assert gallery.services().thresholds.in_force().threshold == pytest.approx(policy.for_gallery(len(PEOPLE)).threshold)
    assert 1.0 < gallery.services().thresholds.in_force().threshold < 10.0  # a normalised score: cohort standard deviations


def test_stranger_is_unknown_at_the_default_threshold(gallery, lfw_photo) -> None:
    for stranger in STRANGERS:
        (match,) = gallery.identify(lfw_photo(stranger, 1))
        assert match.name is None and match.label == "unknown"
        assert match.similarity is not None and match.score < gallery.services().thresholds.in_force().threshold
        assert match.candidates and all(c.name in {display(p) for p in PEOPLE} for c in match.candidates)
        assert match.to_dict()["known"] is False and match.to_dict()["name"] == "unknown"


def test_identify_on_an_empty_gallery_is_unknown_without_candidates(empty_gallery, lfw_photo) -> None:
    (match,) = empty_gallery.identify(lfw_photo(PEOPLE[0], 2))
    assert match.name is None and match.similarity is None and match.candidates == []
    with pytest.raises(InvalidArgument):
        empty_gallery.identify(lfw_photo(PEOPLE[0], 2), top_k=0)


def test_group_photo_gives_one_match_per_face_left_to_right(gallery, lfw_photo, tmp_path) -> None:
    group = group_photo([lfw_photo(PEOPLE[0], 2), lfw_photo(STRANGERS[0], 1), lfw_photo(PEOPLE[2], 2)],
                         tmp_path / "group.jpg")
    matches = gallery.identify(group)
    assert len(matches) == 3
    assert [m.name for m in matches] == [display(PEOPLE[0]), None, display(PEOPLE[2])]
    for tile, match in enumerate(matches):
        assert 250 * tile <= match.face.center[0] < 250 * (tile + 1)  # each match sits on its own photo
    assert matches[0].score >= gallery.services().thresholds.in_force().threshold and matches[2].score >= gallery.services().thresholds.in_force().threshold
    assert matches[1].score < gallery.services().thresholds.in_force().threshold


