"""Undoing what a confirmation taught, on SQLite with FAISS and PostgreSQL with pgvector: the template a learned
face replaced comes back, and a learned face can be undone after the sighting it came from is gone.

Real faces: Ana Guevara enrolled from LFW photo 1 at a pinned threshold of 7.3 (normalised score), with at most
one learned template (`MAX_LEARNED` patched to 1, so the second learned face is "the 11th"). Photo 5 is named,
confirmed and learned; photo 2 is then learned in its place (photo 5's template is the more redundant of the two).
"""

from __future__ import annotations

import pytest

from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.gallery import Gallery, templates
from facerec.settings import Settings

ANA, OTHERS = "Ana_Guevara", ["Alan_Ball", "Biljana_Plavsic"]
FIRST, SECOND = 5, 2  # LFW photo numbers: the second is learned in the first's place


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request):
    return SQLiteGalleries() if request.param == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))


def open_gallery(backend, home, **settings) -> Gallery:
    return Gallery(Settings(home=home, database_url=backend.url_for(home), similarity_threshold=7.3, **settings))


@pytest.fixture
def gallery(backend, tmp_path, lfw_photo, monkeypatch):
    monkeypatch.setattr(templates, "MAX_LEARNED", 1)
    with open_gallery(backend, tmp_path / "home") as opened:
        opened.enroll(lfw_photo(ANA, 1), "Ana Guevara")
        for person in OTHERS:
            opened.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_low_quality=True)
        yield opened


def confirmed(gallery, photo) -> tuple[int, dict]:
    """(sighting id, what its confirmation taught) of the photo's face, named Ana Guevara and confirmed."""
    (match,) = gallery.identify(photo)
    assert match.name == "Ana Guevara" and match.sighting_id is not None
    return match.sighting_id, gallery.services().feedback.confirm(match.sighting_id, learn_by="admin password").learning


def learned_in_place(gallery, lfw_photo) -> tuple[tuple[int, int], tuple[int, int]]:
    """((sighting, face) of the first learned face, (sighting, face) of the one learned in its place)."""
    first_sighting, first = confirmed(gallery, lfw_photo(ANA, FIRST))
    second_sighting, second = confirmed(gallery, lfw_photo(ANA, SECOND))
    assert first["learned_face_id"] is not None and second["learned_face_id"] is not None
    assert second["replaced_face_id"] == first["learned_face_id"]
    return (first_sighting, first["learned_face_id"]), (second_sighting, second["learned_face_id"])


def templates_of(gallery) -> list[tuple[int, str, int | None]]:
    return [(t.face_id, t.origin, t.learned_from) for t in gallery.services().templates.of("Ana Guevara")]


def best_similarity(gallery, photo) -> float:
    (match,) = gallery.identify(photo, remember=False)
    return match.candidates[0].similarity


@pytest.mark.parametrize("undo", ["reject", "correct", "remove"])
def test_undo_restores_replaced_template(gallery, lfw_photo, undo):
    """Rejecting the face learned in another's place (or correcting it to someone else, or removing the template)
    brings the replaced template back: the same face, searched again."""
    (first_sighting, first_face), (second_sighting, second_face) = learned_in_place(gallery, lfw_photo)
    enrolled = templates_of(gallery)[0]
    assert templates_of(gallery) == [enrolled, (second_face, "learned", second_sighting)]
    assert best_similarity(gallery, lfw_photo(ANA, FIRST)) < 0.99  # its template is out of the search
    if undo == "reject":
        undone = gallery.services().feedback.reject(second_sighting).undone
    elif undo == "correct":
        undone = gallery.services().feedback.correct(second_sighting, "Alan Ball").undone
    else:
        gallery.services().templates.remove(second_face)
    assert templates_of(gallery) == [enrolled, (first_face, "learned", first_sighting)]
    if undo != "remove":
        assert undone == {"removed_face_ids": [second_face], "restored_face_ids": [first_face]}
    assert [t.learned_by for t in gallery.services().templates.of("Ana Guevara")] == [None, "admin password"]
    assert best_similarity(gallery, lfw_photo(ANA, FIRST)) > 0.99  # the very face, searched again
    assert best_similarity(gallery, lfw_photo(ANA, SECOND)) < 0.99


def test_a_replaced_template_whose_own_face_was_rejected_never_comes_back(gallery, lfw_photo):
    (first_sighting, _first_face), (second_sighting, second_face) = learned_in_place(gallery, lfw_photo)
    gallery.services().feedback.reject(first_sighting)  # set aside, and now said to be nobody enrolled: forgotten
    assert [face for face, *_ in templates_of(gallery)][1:] == [second_face]
    gallery.services().feedback.reject(second_sighting)
    assert [origin for _face, origin, _sighting in templates_of(gallery)] == ["enrolled"]


@pytest.mark.parametrize("gone", ["cleared", "evicted"])
def test_a_learned_template_is_undone_after_its_sighting_is_gone(backend, tmp_path, lfw_photo, gone):
    """`sightings clear`, or a full memory's eviction, forgot the sighting: rejecting it still undoes what it
    taught (the template keeps its sighting's id), and what that template replaced comes back."""
    home = tmp_path / "home"
    with open_gallery(backend, home, sightings_memory=2) as gallery:
        gallery.enroll(lfw_photo(ANA, 1), "Ana Guevara")
        learned_sighting, learning = confirmed(gallery, lfw_photo(ANA, SECOND))
        assert learning["learned_face_id"] is not None
        if gone == "cleared":
            assert gallery.services().feedback.clear() >= 1
        else:  # two labelled faces later, the memory of two has let the learned one go
            for number in (3, 4):
                (match,) = gallery.identify(lfw_photo(ANA, number), remember=False)
                gallery.services().feedback.label(match.embedding, "Ana Guevara")
        assert backend.sql(home, "SELECT COUNT(*) FROM sightings WHERE id = ?", (learned_sighting,))[0][0] == 0
        info = gallery.services().feedback.reject(learned_sighting)
        assert (info.id, info.name, info.source) == (learned_sighting, "Ana Guevara", "rejected")
        assert info.undone["removed_face_ids"] == [learning["learned_face_id"]]
        assert [t.origin for t in gallery.services().templates.of("Ana Guevara")] == ["enrolled"]
        assert best_similarity(gallery, lfw_photo(ANA, SECOND)) < 0.99


def test_deleting_the_person_forgets_the_templates_set_aside(backend, gallery, lfw_photo, tmp_path):
    learned_in_place(gallery, lfw_photo)
    home = tmp_path / "home"
    assert backend.sql(home, "SELECT COUNT(*) FROM replaced_faces")[0][0] == 1
    gallery.delete("Ana Guevara")
    assert backend.sql(home, "SELECT COUNT(*) FROM replaced_faces")[0][0] == 0
