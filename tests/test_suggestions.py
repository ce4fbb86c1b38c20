"""Suggested people from repeated unknown faces (#41 item 4), on SQLite with FAISS and PostgreSQL with pgvector.

Ana Guevara is enrolled. Andre Agassi is not: his photos 1-4 come back unknown, are kept (only with
suggestions on), and become one suggestion ("seen 4 times in 4 photos"); naming it enrolls him from those faces,
and his photo 5 is then named. Off (unset, or set off) nothing about strangers is kept in any table; set off, or in
privacy mode, what was kept goes; kept faces expire; a photo sent twice is kept once; a group that turns out to
be an enrolled person's faces is never suggested."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy import inspect, text

from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.errors import InvalidArgument, NameTaken, UnknownSuggestion
from facerec.algorithms import grouping
from facerec.gallery import Gallery, suggestions
from facerec.openset.model_card import cosine_calibration_for, load_policy, scorer_for
from facerec.settings import Settings
from facerec.storage import utcnow
from facerec.gallery.composition import parts_of

ANA, AGASSI = "Ana_Guevara", "Andre_Agassi"


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request):
    return SQLiteGalleries() if request.param == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))


def opened(backend, home, **settings) -> Gallery:
    return Gallery(Settings(home=home, database_url=backend.url_for(home), **settings))


@pytest.fixture
def home(backend, tmp_path, lfw_photo):
    home = tmp_path / "home"
    with opened(backend, home) as gallery:
        gallery.enroll(lfw_photo(ANA, 1), "Ana Guevara")
    return home


def every_table(gallery: Gallery) -> dict[str, list[tuple]]:
    """Every row of every table of the gallery's database, as the database holds it (once the faces an identify
    queued are kept: keeping runs off the request, `facerec.gallery.strangers`)."""
    parts_of(gallery).strangers.settle()
    with parts_of(gallery).store.read_engine.connect() as connection:
        tables = inspect(connection).get_table_names()
        return {table: sorted(map(repr, connection.execute(text(f"SELECT * FROM {table}")).all()))
                for table in tables}


def suggested(gallery: Gallery) -> list:
    """Every suggestion, the faces kept so far grouped first (as the command line does; the app groups them on a
    background thread, `tests/test_suggestions_grouping.py`)."""
    return gallery.services().suggestions.list(limit=100, group_first=True).suggestions


def seen(gallery: Gallery, lfw_photo, indices=(1, 2, 3, 4)) -> None:
    for index in indices:
        assert [m.name for m in gallery.identify(lfw_photo(AGASSI, index))] == [None]


@pytest.mark.parametrize("setting", [None, False])
def test_nothing_about_strangers_is_kept_while_suggestions_are_off(backend, home, lfw_photo, setting):
    with opened(backend, home, suggestions=setting) as gallery:
        before = every_table(gallery)
        seen(gallery, lfw_photo)
        assert every_table(gallery) == before  # not a row, not a changed value, in any table
        assert suggested(gallery) == [] and not gallery.services().strangers.enabled
    with opened(backend, home, suggestions=True, store_crops=False) as gallery:  # privacy mode: never
        assert any("suggestions stay off: privacy mode" in notice for notice in gallery.services().maintenance.notices)
        seen(gallery, lfw_photo)
        assert "strangers" in every_table(gallery) and every_table(gallery)["strangers"] == []
    with opened(backend, home, suggestions=True) as gallery:  # and on, they are (the test above can fail)
        seen(gallery, lfw_photo, [1])
        assert len(every_table(gallery)["strangers"]) == 1


def test_a_stranger_seen_again_and_again_is_suggested_then_named(backend, home, lfw_photo):
    with opened(backend, home, suggestions=True) as gallery:
        seen(gallery, lfw_photo)
        seen(gallery, lfw_photo, [1])  # the same photo again: kept once
        (suggestion,) = suggested(gallery)
        assert (suggestion.faces, suggestion.photos) == (4, 4)
        assert gallery.services().suggestions.get(suggestion.id).face_ids == suggestion.face_ids
        assert all(jpeg[:3] == b"\xff\xd8\xff" for jpeg in gallery.services().suggestions.crops(suggestion.face_ids).values())
        with pytest.raises(NameTaken):
            gallery.services().suggestions.name(suggestion.id, "ana guevara")
        named = gallery.services().suggestions.name(suggestion.id, "Andre Agassi")
        assert len(named.face_ids) == 4 and named.forgotten == 0
        assert [t.origin for t in gallery.services().templates.of("Andre Agassi")] == ["enrolled", "added", "added",
                                                                                 "added"]
        assert suggested(gallery) == [] and parts_of(gallery).strangers.count() == 0  # his faces moved, none left behind
        assert [m.name for m in gallery.identify(lfw_photo(AGASSI, 6))] == ["Andre Agassi"]
        with pytest.raises(UnknownSuggestion):
            gallery.services().suggestions.name(suggestion.id, "Someone Else")


def test_dismissing_forgets_and_two_photos_are_not_enough(backend, home, lfw_photo):
    with opened(backend, home, suggestions=True) as gallery:
        seen(gallery, lfw_photo, [1, 2])
        assert suggested(gallery) == []  # two faces: not yet someone seen again and again
        seen(gallery, lfw_photo, [3])
        (suggestion,) = suggested(gallery)
        assert gallery.services().suggestions.dismiss(suggestion.id) == 3
        assert suggested(gallery) == [] and parts_of(gallery).strangers.count() == 0
        with pytest.raises(UnknownSuggestion):
            gallery.services().suggestions.dismiss(suggestion.id)


def test_a_group_of_an_enrolled_persons_faces_is_never_suggested(backend, home, lfw_photo):
    with opened(backend, home, suggestions=True) as gallery:
        seen(gallery, lfw_photo)
        assert len(suggested(gallery)) == 1
        gallery.enroll(lfw_photo(AGASSI, 7), "Andre Agassi")  # enrolled since, from another photo
        assert suggested(gallery) == []


def test_kept_faces_expire_and_are_forgotten_when_turned_off(backend, home, lfw_photo):
    with opened(backend, home, suggestions=True, suggestions_memory=3) as gallery:
        seen(gallery, lfw_photo)
        assert parts_of(gallery).strangers.count() == 3  # the memory's bound: the oldest went
    old = (utcnow() - timedelta(days=31)).isoformat(sep=" ")
    backend.sql(home, "UPDATE strangers SET seen_at = ? WHERE id = (SELECT MIN(id) FROM strangers)", (old,))
    with opened(backend, home) as gallery:  # unset (another shell's command): keeps none, forgets the expired
        assert parts_of(gallery).strangers.count() == 2 and not gallery.services().maintenance.notices
    with opened(backend, home, suggestions=False) as gallery:
        assert parts_of(gallery).strangers.count() == 0
        assert any("forgot 2 face(s) of people not enrolled" in n for n in gallery.services().maintenance.notices)



def test_a_reindex_forgets_the_kept_faces(backend, home, lfw_photo):
    """Another model's embeddings do not compare with these, and kept faces have no photo to re-embed."""
    with opened(backend, home, suggestions=True) as gallery:
        seen(gallery, lfw_photo, [1, 2, 3])
        assert parts_of(gallery).strangers.count() == 3
        gallery.services().maintenance.reindex()
        assert backend.sql(home, "SELECT COUNT(*) FROM strangers")[0][0] == 0

def test_the_command_line_lists_shows_names_and_dismisses(tmp_path, lfw_photo):
    home = tmp_path / "home"
    env = {**os.environ, "FACEREC_SUGGESTIONS": "on", "FACEREC_HOME": str(home)}

    def facerec(*args):
        done = subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--json"], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    folder = tmp_path / "library"
    folder.mkdir()
    for index in (1, 2, 3):
        (folder / f"photo{index}.jpg").write_bytes(lfw_photo(AGASSI, index).read_bytes())
    facerec("enroll", str(lfw_photo(ANA, 1)), "--name", "Ana Guevara")
    facerec("identify", str(folder), "--out", str(tmp_path / "who"))  # a photo library feeds the suggestions
    listed = facerec("suggestions")
    (suggestion,) = listed["suggestions"]
    assert (suggestion["faces"], suggestion["photos"], listed["total"], listed["refreshing"]) == (3, 3, 1, False)
    saved = facerec("suggestions", "faces", str(suggestion["id"]), str(tmp_path / "faces"))
    assert len(saved["files"]) == 3
    assert all(oct(os.stat(path).st_mode & 0o777) == "0o600" for path in saved["files"])
    named = facerec("suggestions", "name", str(suggestion["id"]), "Andre Agassi")
    assert named["photos"] == 3 and facerec("suggestions")["suggestions"] == []
    facerec("identify", str(lfw_photo(AGASSI, 6)))
    facerec("identify", str(lfw_photo("Amelie_Mauresmo", 1)))
    assert facerec("suggestions", "clear") == {"forgotten": 1}
    refused = subprocess.run([sys.executable, "-m", "facerec.cli", "suggestions", "dismiss", "99"], env=env,
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "no suggestion 99" in refused.stderr
    off = subprocess.run([sys.executable, "-m", "facerec.cli", "suggestions"], capture_output=True, text=True,
                         env={k: v for k, v in env.items() if k != "FACEREC_SUGGESTIONS"}, timeout=300)
    assert off.returncode == 0 and "FACEREC_SUGGESTIONS=on" in off.stdout  # says how to turn them on


def test_a_name_is_checked_like_an_enrollment(backend, home, lfw_photo):
    with opened(backend, home, suggestions=True) as gallery:
        seen(gallery, lfw_photo, [1, 2, 3])
        (suggestion,) = suggested(gallery)
        with pytest.raises(InvalidArgument):
            gallery.services().suggestions.name(suggestion.id, "\u202e evil")
        assert len(suggested(gallery)) == 1  # refused: nothing enrolled, nothing forgotten



def test_in_a_memory_of_many_strangers_look_alikes_stay_apart_and_people_still_group(celeba112):
    """From COHORT_MEMORY kept faces on, two faces match only when they also stand out from their cohorts of
    look-alikes (`facerec.algorithms.grouping`). Real faces: one aligned CelebA photo of each of 1,200 people, then
    three photos each of the next 10 people whose photos clearly match (cosine 0.08 above the threshold). Some of
    the 1,200 look enough alike to be merged on the cosine alone; the cohort test merges no more of them (with
    model v8 it merged fewer; v9's cosine threshold already keeps most apart), and still groups the people seen
    three times, with no stranger in their groups."""
    from facerec.faces.embed import FaceEmbedder
    from facerec.faces.image import decode_photo
    from facerec.settings import default_model_path

    folders = sorted(p for p in celeba112.iterdir() if p.is_dir())
    embedder = FaceEmbedder(default_model_path())
    settings = Settings()
    card = cosine_calibration_for(settings, load_policy(settings.model_card_path, 0.01, None))
    threshold = card.threshold_at_far(suggestions.GROUPING_FAR)  # the shipped card's strict pairwise cosine

    def embedded(paths):
        return embedder.embed(np.stack([decode_photo(path, 10_000_000)[0] for path in paths]))

    people = []
    for person in (f for f in folders[1200:] if len(list(f.iterdir())) >= 3):
        theirs = embedded(sorted(person.iterdir())[:3])
        if (theirs @ theirs.T).min() >= threshold + 0.08:
            people.append(theirs)
        if len(people) == 10:
            break
    embeddings = np.concatenate([embedded([sorted(f.iterdir())[0] for f in folders[:1200]]), *people])
    assert grouping.cohort_statistics(embeddings) is not None  # the cohort test is in force
    assert grouping.cohort_statistics(embeddings[:grouping.COHORT_MEMORY - 1]) is None
    ids = np.arange(1, len(embeddings) + 1)

    def grouped(min_z: float, pair_threshold: float = threshold, statistics=None) -> tuple[int, int]:
        placed = grouping.assign_groups(ids, embeddings, np.full(len(ids), -1), pair_threshold, min_z=min_z,
                                        statistics=statistics)
        groups = np.array([placed[int(i)] for i in ids])
        sizes = Counter(groups[:1200].tolist())
        merged = sum(count for count in sizes.values() if count > 1)  # strangers seen once, put with another
        whole = sum(len(set(groups[1200 + 3 * k:1203 + 3 * k])) == 1 and not set(groups[1200 + 3 * k:1203 + 3 * k])
                    & set(groups[:1200].tolist()) for k in range(10))
        return merged, whole

    merged_by_cosine, _ = grouped(-np.inf)
    merged, whole = grouped(grouping.MIN_Z)
    assert merged <= merged_by_cosine and merged <= 12  # at most 1% of the strangers seen once put with another
    assert whole >= 9
    # The pair test on the model cohort's normalised score instead of the cosine (the rule benchmarks/suggestions.py
    # measures beside the shipped one) also keeps the people whole and merges no more strangers than the cosine.
    policy = load_policy(settings.model_card_path, 0.01, None)
    faces = scorer_for(settings, policy).statistics(embeddings)
    merged_by_score, whole_by_score = grouped(grouping.MIN_Z, policy.calibration.threshold_at_far(
        suggestions.GROUPING_FAR), (faces.mean, faces.sd))
    assert whole_by_score >= 9 and merged_by_score <= merged_by_cosine
