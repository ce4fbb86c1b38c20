"""Confirmed faces become templates (#41 items 1-2), on SQLite with FAISS and PostgreSQL with pgvector.

Ana Guevara enrolled from photo 1, at a pinned threshold of 8.0 (normalised score): photo 3 is named (8.4) and kept
as a sighting, photo 2 is not (7.5). Confirming the sighting with the admin's say-so learns photo 3's face as a template, and
photo 2 is then named; rejecting the sighting undoes it. Without the say-so nothing is learned; learned templates
are capped per person; their origin survives an export and import; a person's last face cannot be removed."""

from __future__ import annotations

import pytest

from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.errors import InvalidArgument
from facerec.gallery import Gallery, templates
from facerec.settings import Settings

ANA, OTHERS = "Ana_Guevara", ["Alan_Ball", "Biljana_Plavsic"]


@pytest.fixture(params=["sqlite", "postgresql"])
def gallery(request, tmp_path, lfw_photo):
    backend = SQLiteGalleries() if request.param == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))
    home = tmp_path / "home"
    with Gallery(Settings(home=home, database_url=backend.url_for(home), similarity_threshold=8.0)) as opened:
        opened.enroll(lfw_photo(ANA, 1), "Ana Guevara")
        for person in OTHERS:
            opened.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_low_quality=True)
        yield opened


def sighting_of(gallery, photo) -> int:
    (match,) = gallery.identify(photo)
    assert match.name == "Ana Guevara" and match.sighting_id is not None
    return match.sighting_id


def test_a_confirmed_face_becomes_a_template_and_names_the_next_photo(gallery, lfw_photo):
    assert gallery.identify(lfw_photo(ANA, 2), remember=False)[0].name is None
    sighting = sighting_of(gallery, lfw_photo(ANA, 3))
    info = gallery.services().feedback.confirm(sighting, learn_by="admin password")
    learned = info.learning["learned_face_id"]
    assert learned is not None and info.learning["not_learned_because"] is None
    kept = gallery.services().templates.of("Ana Guevara")
    assert [(t.origin, t.learned_from, t.learned_by) for t in kept] == [
        ("enrolled", None, None), ("learned", sighting, "admin password")]
    assert gallery.identify(lfw_photo(ANA, 2), remember=False)[0].name == "Ana Guevara"
    assert gallery.services().feedback.confirm(sighting, learn_by="admin password").learning["not_learned_because"] == \
        "already learned"
    gallery.services().feedback.reject(sighting)  # it was nobody enrolled after all: what it taught goes with it
    assert [t.origin for t in gallery.services().templates.of("Ana Guevara")] == ["enrolled"]
    assert gallery.identify(lfw_photo(ANA, 2), remember=False)[0].name is None


def test_a_confirmation_without_the_admins_say_so_teaches_nothing(gallery, lfw_photo):
    sighting = sighting_of(gallery, lfw_photo(ANA, 3))
    assert gallery.services().feedback.confirm(sighting).learning is None
    assert len(gallery.services().templates.of("Ana Guevara")) == 1


def test_a_correction_to_someone_else_undoes_what_the_face_taught(gallery, lfw_photo):
    sighting = sighting_of(gallery, lfw_photo(ANA, 3))
    assert gallery.services().feedback.confirm(sighting, learn_by="t").learning["learned_face_id"] is not None
    corrected = gallery.services().feedback.correct(sighting, "Alan Ball", learn_by="t")
    assert corrected.learning["learned_face_id"] is None  # not Alan's face: the checks of add-photo refuse it
    assert "does not match" in corrected.learning["not_learned_because"]
    assert [t.origin for t in gallery.services().templates.of("Ana Guevara")] == ["enrolled"]
    assert [t.origin for t in gallery.services().templates.of("Alan Ball")] == ["enrolled"]


def test_learned_templates_are_capped_per_person(gallery, lfw_photo, monkeypatch):
    monkeypatch.setattr(templates, "MAX_LEARNED", 1)
    first = gallery.services().feedback.confirm(sighting_of(gallery, lfw_photo(ANA, 3)), learn_by="t").learning
    second = gallery.services().feedback.confirm(sighting_of(gallery, lfw_photo(ANA, 5)), learn_by="t").learning
    assert first["learned_face_id"] is not None
    learned = [t for t in gallery.services().templates.of("Ana Guevara") if t.origin == "learned"]
    assert len(learned) == 1  # one replaced the other, or was not learned, never both kept
    assert (second["replaced_face_id"] == first["learned_face_id"]) == (second["learned_face_id"] is not None)


def test_a_face_kept_without_its_crop_is_not_learned_and_the_last_face_stays(gallery, lfw_photo):
    (match,) = gallery.identify(lfw_photo(ANA, 2), remember=False)
    labelled = gallery.services().feedback.label(match.embedding, "Ana Guevara")  # from the page: no aligned face kept
    learning = gallery.services().feedback.confirm(labelled.id, learn_by="t").learning
    assert learning["learned_face_id"] is None and "Add photo" in learning["not_learned_because"]
    (only,) = gallery.services().templates.of("Ana Guevara")
    with pytest.raises(InvalidArgument, match="last photo"):
        gallery.services().templates.remove(only.face_id)


def test_the_origin_of_a_template_survives_export_and_import(gallery, lfw_photo, tmp_path):
    gallery.services().feedback.confirm(sighting_of(gallery, lfw_photo(ANA, 3)), learn_by="API key 7")
    archive = tmp_path / "gallery.zip"
    gallery.export(archive)
    with Gallery(Settings(home=tmp_path / "other", similarity_threshold=8.0)) as other:
        other.import_(archive)
        assert [(t.origin, t.learned_by) for t in other.services().templates.of("Ana Guevara")] == [
            ("enrolled", None), ("learned", "API key 7")]
        learned = other.services().templates.of("Ana Guevara")[1]
        other.services().templates.remove(learned.face_id)
        assert [t.origin for t in other.services().templates.of("Ana Guevara")] == ["enrolled"]


def test_the_command_line_learns_lists_and_removes(tmp_path, lfw_photo):
    import json
    import subprocess
    import sys

    def facerec(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(tmp_path / "home"),
                               "--threshold", "8.0"], capture_output=True, text=True, timeout=300)

    assert facerec("enroll", str(lfw_photo(ANA, 1)), "--name", "Ana Guevara").returncode == 0
    found = json.loads(facerec("identify", str(lfw_photo(ANA, 3)), "--json").stdout)
    confirmed = facerec("sightings", "confirm", str(found[0]["sighting_id"]))
    assert confirmed.returncode == 0 and "Learned as a template" in confirmed.stdout, confirmed.stderr
    listed = json.loads(facerec("templates", "Ana Guevara", "--json").stdout)
    assert [(t["origin"], t["learned_by"]) for t in listed] == [("enrolled", None), ("learned", "command line")]
    removed = facerec("templates", "Ana Guevara", "--remove", str(listed[1]["face_id"]))
    assert removed.returncode == 0 and "removed face" in removed.stdout
    last = facerec("templates", "Ana Guevara", "--remove", str(listed[0]["face_id"]))
    assert last.returncode == 1 and "last photo" in last.stderr and len(last.stderr.strip().splitlines()) == 1


def test_a_sqlite_gallery_from_before_templates_gets_their_columns_on_open(tmp_path, lfw_photo):
    import sqlite3

    home = tmp_path / "old"
    with Gallery(Settings(home=home)) as made:
        made.enroll(lfw_photo(ANA, 1), "Ana Guevara")
    with sqlite3.connect(home / "gallery.db") as connection:  # as the facerec before this change made it
        for table, column in (("faces", "origin"), ("faces", "learned_from"), ("faces", "learned_by"),
                              ("sightings", "crop_jpeg"), ("sightings", "box"), ("sightings", "landmarks")):
            connection.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    with Gallery(Settings(home=home, similarity_threshold=8.0)) as opened:
        assert [t.origin for t in opened.services().templates.of("Ana Guevara")] == ["enrolled"]
        sighting = sighting_of(opened, lfw_photo(ANA, 3))
        assert opened.services().feedback.confirm(sighting, learn_by="t").learning["learned_face_id"] is not None
