"""Merge two people, move one face (#62 item 4), on SQLite with FAISS and PostgreSQL with pgvector: real LFW faces.

Colin Powell enrolled twice by mistake ("Colin Powell" from photo 1, "C. Powell" from photo 2) is merged into one;
the threshold in force follows the smaller gallery, Health counts one person, an export after the merge imports
again; two different people are refused unless forced; a face added to the wrong person is moved to the right one
or to a new person, and a person's last face is never moved."""

from __future__ import annotations

import pytest

from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.errors import InvalidArgument
from facerec.gallery import Gallery
from facerec.settings import Settings

POWELL, BLAIR, OTHERS = "Colin_Powell", "Tony_Blair", ["Alan_Ball", "Biljana_Plavsic"]


@pytest.fixture(params=["sqlite", "postgresql"])
def gallery(request, tmp_path, lfw_photo):
    backend = SQLiteGalleries() if request.param == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))
    home = tmp_path / "home"
    with Gallery(Settings(home=home, database_url=backend.url_for(home))) as opened:
        opened.enroll(lfw_photo(POWELL, 1), "Colin Powell")
        opened.enroll(lfw_photo(POWELL, 2), "C. Powell", allow_lookalike=True)
        opened.enroll(lfw_photo(BLAIR, 1), "Tony Blair")
        for person in OTHERS:
            opened.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_low_quality=True)
        yield opened


def named(gallery, photo) -> str | None:
    return max(gallery.identify(photo, remember=False), key=lambda m: m.face.width).name


def test_one_person_enrolled_twice_is_merged_into_one(gallery, lfw_photo, tmp_path):
    (match,) = gallery.identify(lfw_photo(POWELL, 2))  # a sighting of "C. Powell" follows him into the merge
    assert match.name == "C. Powell" and match.sighting_id is not None
    before = gallery.services().thresholds.in_force(with_people=True)
    merged = gallery.merge("C. Powell", "Colin Powell")
    assert merged.removed_person == "C. Powell" and len(merged.moved) == 1 and merged.duplicates == []
    assert [p.name for p in gallery.people()] == ["Alan Ball", "Biljana Plavsic", "Colin Powell", "Tony Blair"]
    assert [t.origin for t in gallery.services().templates.of("Colin Powell")] == ["enrolled", "added"]
    after = gallery.services().thresholds.in_force(with_people=True)
    assert after.people == before.people - 1
    assert named(gallery, lfw_photo(POWELL, 2)) == "Colin Powell"
    assert gallery.services().feedback.confirm(match.sighting_id).name == "Colin Powell"
    report = gallery.health()
    assert (report.identities, report.faces) == (4, 5)
    exported = tmp_path / "merged.zip"
    gallery.export(exported)
    with Gallery(Settings(home=tmp_path / "again")) as again:
        assert again.import_(exported)["added"] == 5
        assert [(p.name, p.photos) for p in again.people() if p.name == "Colin Powell"] == [("Colin Powell", 2)]


def test_two_different_people_are_not_merged_unless_forced(gallery):
    with pytest.raises(InvalidArgument, match="do not look like one person"):
        gallery.merge("Tony Blair", "Colin Powell")
    assert len(gallery.people()) == 5
    assert gallery.merge("Tony Blair", "Colin Powell", force=True).best_score is not None
    assert len(gallery.people()) == 4


def test_a_face_is_moved_to_its_person_or_to_a_new_one(gallery, lfw_photo):
    added = gallery.add_photo("Tony Blair", lfw_photo(POWELL, 3), allow_mismatch=True)  # the wrong person's photo
    face_id = added.face_id
    with pytest.raises(InvalidArgument, match="does not look like Alan Ball's own photos"):
        gallery.move_face(face_id, to="Alan Ball")
    moved = gallery.move_face(face_id, to="Colin Powell")
    assert moved.moved == [face_id] and moved.name == "Colin Powell"
    assert face_id in [t.face_id for t in gallery.services().templates.of("Colin Powell")]
    again = gallery.move_face(face_id, new_name="Powell from the archive")
    assert [t.origin for t in gallery.services().templates.of("Powell from the archive")] == ["enrolled"]
    (only,) = [t.face_id for t in gallery.services().templates.of("Powell from the archive")]
    assert again.moved == [only]
    with pytest.raises(InvalidArgument, match="last"):
        gallery.move_face(only, to="Colin Powell")


def test_merge_and_move_from_the_command_line(tmp_path, lfw_photo):
    import json

    from tests.test_user_words import facerec

    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as opened:
        opened.enroll(lfw_photo(POWELL, 1), "Colin Powell")
        opened.enroll(lfw_photo(POWELL, 2), "C. Powell", allow_lookalike=True)
    merged = facerec("merge", "C. Powell", "Colin Powell", home=home)
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout.startswith("merged 'C. Powell' into 'Colin Powell': 1 face(s) moved")
    faces = json.loads(facerec("templates", "Colin Powell", "--json", home=home).stdout)
    moved = facerec("move-face", str(faces[1]["face_id"]), "--new-name", "Powell again", home=home)
    assert moved.returncode == 0 and "is now 'Powell again''s" in moved.stdout
    refused = facerec("move-face", str(faces[0]["face_id"]), "--to", "Powell again", home=home)
    assert refused.returncode == 1 and "last" in refused.stderr and refused.stderr.count("\n") == 1
