"""Identify does its work once (#40 item 4): per request one journal sync, one threshold rule, no database read
while the index lock is held (searches take that lock too), and the model check only when the journal has moved,
on SQLite with FAISS and on PostgreSQL with pgvector. The methods are wrapped to count their calls; what runs is
the real code on real faces."""

from __future__ import annotations

import collections
import functools

import pytest

from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.gallery import Gallery
from facerec.openset.threshold_policy import ThresholdPolicy
from facerec.settings import Settings
from facerec.storage.faces import FacesTable
from facerec.storage.journal import JournalTable
from facerec.gallery.composition import parts_of

PEOPLE = ["Alan_Ball", "Biljana_Plavsic", "Art_Hoffmann", "Antonio_Trillanes"]
STRANGER = "Andy_Griggs"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def gallery(request, tmp_path_factory, lfw_photo):
    backend = SQLiteGalleries() if request.param == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))
    home = tmp_path_factory.mktemp(f"one_pass_{request.param}")
    with Gallery(Settings(home=home, database_url=backend.url_for(home))) as opened:
        for person in PEOPLE:
            opened.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_lookalike=True,
                          allow_low_quality=True)
        yield opened


@pytest.fixture
def counts(gallery, monkeypatch):
    """Calls of: the model check's query, the index's sync, the policy's decision, the journal read (and those
    made while this thread holds the index lock)."""
    counted: collections.Counter = collections.Counter()
    lock = getattr(parts_of(gallery).index, "lock", None)

    def counting(owner, name, key):
        method = getattr(owner, name)

        @functools.wraps(method)
        def wrapper(*args, **kwargs):
            counted[key] += 1
            if key == "journal reads" and lock is not None and getattr(lock, "_is_owned", lambda: False)():
                counted["journal reads under the index lock"] += 1
            return method(*args, **kwargs)
        monkeypatch.setattr(owner, name, wrapper)

    counting(FacesTable, "other_model_ids", "model checks")
    counting(type(parts_of(gallery).index), "sync", "syncs")
    counting(ThresholdPolicy, "_decide", "rules")
    counting(JournalTable, "since", "journal reads")
    return counted


def test_one_identify_syncs_once_and_decides_once(gallery, counts, lfw_photo):
    photo = gallery.services().photos.read(lfw_photo(PEOPLE[0], 2))
    gallery.identify(photo)  # the model check runs on the first search at this journal position
    counts.clear()
    for _ in range(3):
        assert gallery.identify(photo, top_k=3)[0].name == "Alan Ball"
    assert counts["syncs"] == 3 and counts["rules"] == 3 and counts["model checks"] == 0
    assert counts["journal reads under the index lock"] == 0


def test_the_page_without_the_password_asks_once_and_never_loosens_the_rule(gallery, counts, lfw_photo):
    photo = gallery.services().photos.read(lfw_photo(STRANGER, 1))
    default = gallery.identify(photo, remember=False)[0].threshold
    counts.clear()
    at_slider = gallery.identify(photo, fpir=gallery.services().settings.fpir, not_below_default=True)  # the slider untouched
    assert counts["syncs"] == 1 and counts["rules"] == 1 and at_slider[0].threshold == default
    counts.clear()
    loose = gallery.identify(photo, fpir=0.5, not_below_default=True)
    assert counts["syncs"] == 1 and counts["rules"] == 2  # the asked rate, and the default beside it
    assert loose[0].threshold == default  # a looser rate falls back to the rule in force
    assert gallery.identify(photo, fpir=0.5, remember=False)[0].threshold < default  # with the password it may


def test_the_model_is_checked_again_once_the_journal_moves(gallery, counts, lfw_photo):
    photo = gallery.services().photos.read(lfw_photo(PEOPLE[1], 2))
    gallery.identify(photo)
    counts.clear()
    gallery.enroll(lfw_photo("Andre_Agassi", 1), "Andre Agassi", allow_lookalike=True, allow_low_quality=True)
    gallery.identify(photo)
    gallery.identify(photo)
    assert counts["model checks"] == 1
