"""Deleting forgets: after a person, a template or a sighting is deleted, none of its aligned face's bytes are
left in the SQLite gallery's files (`gallery.db` and `gallery.db-wal`), on the running gallery, without closing it
(#48 row 8: a deleted person's face and sighting crops were still in the -wal file 30 s later)."""

from __future__ import annotations

from pathlib import Path

from facerec.gallery import Gallery
from facerec.settings import Settings

ANA, ALAN = "Barack_Obama", "Joe_Biden"  # shipped public-domain portraits (tests/faces): Obama has three photos


def _sql(home: Path, statement: str, params: tuple = ()) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(home / "gallery.db") as db:
        return db.execute(statement, params).fetchall()


def _readable(home: Path, crop: bytes) -> list[str]:
    """The gallery files that hold a stretch of the crop's bytes (one from its middle: past the JPEG header every
    crop shares)."""
    piece = crop[len(crop) // 2:len(crop) // 2 + 64]
    return [path.name for path in sorted(home.glob("gallery.db*")) if piece in path.read_bytes()]


def test_a_deleted_persons_faces_and_sightings_leave_the_database_files(tmp_path, portrait):
    home = tmp_path / "home"
    with Gallery(Settings.from_env(home=home)) as gallery:
        ana = gallery.enroll(portrait(ANA, 1), "Barack Obama")
        gallery.enroll(portrait(ALAN, 1), "Joe Biden", allow_low_quality=True)
        added = gallery.add_photo("Barack Obama", portrait(ANA, 2), allow_mismatch=True)
        (seen,) = gallery.identify(portrait(ANA, 3))
        assert seen.name == "Barack Obama" and seen.sighting_id is not None
        enrolled_crop, added_crop = gallery.services().directory.face_crop(ana.face_id), gallery.services().directory.face_crop(added.face_id)
        (sighting_crop,) = [row[0] for row in _sql(home, "SELECT crop_jpeg FROM sightings WHERE id = ?",
                                                   (seen.sighting_id,))]
        assert enrolled_crop and added_crop and sighting_crop
        assert _readable(home, enrolled_crop)  # the control: the bytes are there to find while she is enrolled

        gallery.services().templates.remove(added.face_id)
        assert _readable(home, added_crop) == []  # a removed template, at once
        gallery.delete("Barack Obama")
        for crop in (enrolled_crop, added_crop, sighting_crop):
            assert _readable(home, crop) == [], "a deleted face is still readable in the gallery's files"
        assert gallery.people()[0].name == "Joe Biden"  # the rest of the gallery is untouched
