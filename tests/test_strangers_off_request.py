"""#51 item 9: with suggestions on, keeping an unknown face costs identify nothing a user can feel. Identify picks
the faces to keep and queues them; a background thread writes them (`facerec.gallery.strangers`).

Grace Hopper is enrolled; Barack Obama is not (both shipped public-domain portraits). While the strangers table's
writer is held up (its `add` blocked on an event, as a busy disk or a long lock would), identify still answers
Obama's photo as unknown at once; once the writer goes on, his face is kept, and a reader of the suggestions waits for it. The same hold-up on the old path
(keeping inside identify) would hold the answer: the first check fails there."""

from __future__ import annotations

import threading

import pytest

from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings

HOPPER, OBAMA = "Grace_Hopper", "Barack_Obama"  # shipped portraits (tests/faces): they run on any clone
ANSWER_S = 30  # far above an identify on a loaded 2-core machine; the writer is held far longer than this


@pytest.fixture
def gallery(tmp_path, portrait):
    with Gallery(Settings(home=tmp_path / "home", suggestions=True)) as gallery:
        gallery.enroll(portrait(HOPPER, 1), "Grace Hopper", allow_low_quality=True)
        yield gallery


def held_writer(gallery: Gallery, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Hold every write of a kept stranger until `release` is set; `writing` is set once a write is waiting."""
    writing, release = threading.Event(), threading.Event()
    add = parts_of(gallery).store.strangers.add

    def slow_add(*args, **kwargs):
        writing.set()
        assert release.wait(10 * ANSWER_S), "the test never released the writer"
        return add(*args, **kwargs)

    monkeypatch.setattr(parts_of(gallery).store.strangers, "add", slow_add)
    return writing, release


def test_identify_answers_while_the_unknown_face_is_still_being_kept(gallery, portrait, monkeypatch):
    writing, release = held_writer(gallery, monkeypatch)
    answers: list = []
    identified = threading.Thread(target=lambda: answers.append(gallery.identify(portrait(OBAMA, 1))))
    try:
        identified.start()
        identified.join(ANSWER_S)
        assert not identified.is_alive(), "identify waited for its unknown face to be kept"
        assert [m.name for m in answers[0]] == [None]  # unknown, answered
        assert writing.wait(ANSWER_S), "the unknown face was never handed to the writer"
        assert parts_of(gallery).store.strangers.count() == 0  # still being kept: the answer did not wait for it
    finally:
        release.set()
        identified.join()
    assert parts_of(gallery).strangers.count() == 1  # kept once the writer went on (count waits for what was queued)


def test_the_suggestions_read_after_identify_see_its_faces(gallery, portrait):
    for index in (1, 2, 3):
        assert [m.name for m in gallery.identify(portrait(OBAMA, index))] == [None]
    (suggestion,) = gallery.services().suggestions.list().suggestions  # read at once: it waits for the three faces queued before it
    assert (suggestion.faces, suggestion.photos) == (3, 3)


def test_a_closing_gallery_keeps_what_identify_queued(tmp_path, portrait):
    home = tmp_path / "home"
    with Gallery(Settings(home=home, suggestions=True)) as gallery:
        gallery.enroll(portrait(HOPPER, 1), "Grace Hopper", allow_low_quality=True)
        assert [m.name for m in gallery.identify(portrait(OBAMA, 1))] == [None]
    with Gallery(Settings(home=home, suggestions=True)) as gallery:
        assert parts_of(gallery).strangers.count() == 1
