"""Export, import and privacy mode on both backends: a gallery round-trips with its history; privacy mode stores no
face.

The galleries and helpers are gallery_world.py's (every test runs on SQLite and on PostgreSQL)."""

from __future__ import annotations

import math
import zipfile

import gallery_world as world
import numpy as np
import pytest
from gallery_world import (
    EXTRA_PERSON,
    PEOPLE,
    assert_index_matches_db,
    display,
    open_gallery,
    sql,
)

from facerec.errors import (
    FaceRecError,
    InvalidArgument,
)
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of


# ----- export / import ------------------------------------------------------------------------------------
def _faces_by_name(gallery: Gallery) -> dict[str, list[tuple[str, bytes, bytes | None]]]:
    rows = sql(gallery.services().settings.home, "SELECT i.name, f.photo_sha256, f.embedding, f.crop_jpeg "
                                      "FROM faces f JOIN identities i ON i.id = f.identity_id")
    grouped: dict[str, list] = {}
    for name, sha, embedding, crop in rows:
        grouped.setdefault(name, []).append((sha, embedding, crop))
    return {name: sorted(faces) for name, faces in grouped.items()}


def test_export_then_import_into_a_fresh_gallery_round_trips(gallery, lfw_photo, tmp_path, pipeline) -> None:
    gallery.add_photo(display(PEOPLE[0]), lfw_photo(PEOPLE[0], 2))
    archive = tmp_path / "export.zip"
    assert gallery.export(archive) == len(PEOPLE) + 1
    with zipfile.ZipFile(archive) as opened:
        assert {"gallery.json", "embeddings.npy"} <= set(opened.namelist())
        assert sum(name.startswith("crops/") for name in opened.namelist()) == len(PEOPLE) + 1

    with open_gallery(tmp_path / "imported", pipeline) as fresh:
        assert fresh.import_(archive) == {"added": len(PEOPLE) + 1, "skipped": 0}
        assert [(p.name, p.photos) for p in fresh.people()] == [(p.name, p.photos) for p in gallery.people()]
        original, copied = _faces_by_name(gallery), _faces_by_name(fresh)
        assert copied == original  # same photos, identical embedding bytes, identical crops
        assert_index_matches_db(fresh)
        for person in PEOPLE[1:]:
            (match,) = fresh.identify(lfw_photo(person, 2))
            assert match.name == display(person) and match.score >= fresh.services().thresholds.in_force().threshold

        assert fresh.import_(archive) == {"added": 0, "skipped": len(PEOPLE) + 1}
        assert parts_of(fresh).store.counts() == (len(PEOPLE), len(PEOPLE) + 1)
        assert_index_matches_db(fresh)

        not_an_export = tmp_path / "other.zip"
        with zipfile.ZipFile(not_an_export, "w") as other:
            other.writestr("readme.txt", "hello")
        with pytest.raises(InvalidArgument):
            fresh.import_(not_an_export)
        with pytest.raises(InvalidArgument):
            fresh.import_(lfw_photo(PEOPLE[0], 1))  # not a zip at all
        assert parts_of(fresh).store.counts() == (len(PEOPLE), len(PEOPLE) + 1)


# ----- privacy mode ---------------------------------------------------------------------------------------
def test_export_then_import_keeps_the_history(gallery, tmp_path, pipeline) -> None:
    """Imported people showed the import time as enrolled: the export had no dates (#31 item 4). A round trip now
    keeps what a user calls the history: when each person was enrolled and last renamed, when each photo was
    added, notes and photo counts. (Database ids are the receiving gallery's own.)"""
    from datetime import datetime, timedelta, timezone

    from facerec.storage.schema import Face, Identity

    past = datetime(2021, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
    with parts_of(gallery).store.transaction() as session:
        for offset, person in enumerate(session.query(Identity).order_by(Identity.id)):
            person.created_at = past + timedelta(days=offset)
            person.updated_at = past + timedelta(days=offset, hours=1)
            person.note = f"note {offset}"
        for offset, face in enumerate(session.query(Face).order_by(Face.id)):
            face.created_at = past + timedelta(days=offset, minutes=30)
    before = {p.name: p for p in gallery.people()}
    added_before = sorted(row[0] for row in sql(gallery.services().settings.home, "SELECT created_at FROM faces"))
    gallery.export(tmp_path / "history.zip")

    with open_gallery(tmp_path / "receiver", pipeline) as receiver:
        assert receiver.import_(tmp_path / "history.zip")["added"] == len(PEOPLE)
        after = {p.name: p for p in receiver.people()}
        added_after = sorted(row[0] for row in sql(receiver.services().settings.home, "SELECT created_at FROM faces"))

    def utc(moment: datetime) -> datetime:
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)

    assert set(after) == set(before)
    for name, person in before.items():
        assert (after[name].note, after[name].photos) == (person.note, person.photos)
        assert utc(after[name].created_at) == utc(person.created_at) < past + timedelta(days=5)
        assert utc(after[name].updated_at) == utc(person.updated_at)
    assert [str(a)[:19] for a in added_after] == [str(b)[:19] for b in added_before]


def test_privacy_mode_stores_no_face_crops(gallery, lfw_photo, tmp_path, pipeline) -> None:
    archive = tmp_path / "with_crops.zip"
    gallery.export(archive, include_crops=True)

    home = tmp_path / "private"
    with open_gallery(home, pipeline, store_crops=False) as private:
        result = private.enroll(lfw_photo(EXTRA_PERSON, 1), display(EXTRA_PERSON))
        private.add_photo(display(EXTRA_PERSON), lfw_photo(EXTRA_PERSON, 2))
        crop = np.full((112, 112, 3), 100, np.uint8)
        vector = np.ones(512, np.float32) / math.sqrt(512)
        parts_of(private).enrollment.add_embeddings([{"name": "Bulk Person", "embedding": vector, "photo_sha256": "0" * 64,
                                 "box": [0, 0, 10, 10], "landmarks": [], "crop": crop}])
        assert private.import_(archive)["added"] == len(PEOPLE)
        assert private.services().maintenance.stats()["store_crops"] is False
        assert private.services().directory.face_crop(result.face_id) is None
        with pytest.raises(FaceRecError, match="no stored crop"):
            private.services().maintenance.reindex()
        (match,) = private.identify(lfw_photo(PEOPLE[2], 2))
        assert match.name == display(PEOPLE[2])
        faces = private.services().maintenance.stats()["faces"]
    assert faces == 2 + 1 + len(PEOPLE)

    assert sql(home, "SELECT COUNT(*), COUNT(crop_jpeg) FROM faces") == [(faces, 0)]
    # No JPEG (or PNG) bytes in any blob of any table.
    for column, images in world.BACKEND.image_columns(home).items():
        assert images == 0, f"{column} holds image bytes in privacy mode"


