"""The vector index on both backends: it survives reopening, is rebuilt or caught up from the database, follows another
model only after a reindex, and other index kinds behave alike.

The galleries and helpers are gallery_world.py's (every test runs on SQLite and on PostgreSQL)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import gallery_world as world
import numpy as np
import pytest
from gallery_world import (
    EXTRA_PERSON,
    PEOPLE,
    STRANGERS,
    assert_index_matches_db,
    display,
    embed_photo,
    journal_head,
    open_gallery,
    sql,
)

from facerec.errors import ModelMismatch
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.vectors.saved_files import INDEX_FILE, INDEX_META_FILE


# ----- index persistence and recovery (the FAISS index file) -------------------------------------------------
def _query_vectors(gallery: Gallery, lfw_photo) -> np.ndarray:
    paths = [lfw_photo(p, 2) for p in PEOPLE] + [lfw_photo(s, 1) for s in STRANGERS[:1]]
    return np.stack([embed_photo(gallery, path) for path in paths])


def _results(gallery: Gallery, queries: np.ndarray) -> list[list[tuple[str, float]]]:
    return [[(c.name, round(c.similarity, 5)) for c in row] for row in parts_of(gallery).searching.search(queries, top_k=5)]


@pytest.mark.local_index
def test_index_survives_close_and_reopen(home, pipeline, lfw_photo) -> None:
    gallery = open_gallery(home, pipeline)
    gallery.enroll(lfw_photo(EXTRA_PERSON, 1), display(EXTRA_PERSON))
    queries = _query_vectors(gallery, lfw_photo)
    before = _results(gallery, queries)
    gallery.close()

    meta = json.loads((home / INDEX_META_FILE).read_text())
    assert meta["seq"] == journal_head(home) and meta["count"] == len(PEOPLE) + 1
    assert meta["model_id"] == gallery.services().maintenance.model_id and meta["kind"] == parts_of(gallery).index.kind
    assert meta["kind"] == world.LOCAL_INDEX.get("index_kind", "auto")  # the embedded default, or the replica-local copy

    with open_gallery(home, pipeline) as reopened:
        assert parts_of(reopened).index.seq == meta["seq"]
        assert _results(reopened, queries) == before
        assert [row[0][0] for row in before[:len(PEOPLE)]] == [display(p) for p in PEOPLE]
        assert_index_matches_db(reopened)


@pytest.mark.local_index
@pytest.mark.parametrize("damage", ["delete_index", "garbage_index", "truncated_index", "delete_meta",
                                    "garbage_meta"])
def test_missing_or_corrupt_index_is_rebuilt_from_the_database(home, pipeline, lfw_photo, damage) -> None:
    index_file, meta_file = home / INDEX_FILE, home / INDEX_META_FILE
    assert index_file.is_file() and meta_file.is_file()
    if damage == "delete_index":
        index_file.unlink()
    elif damage == "garbage_index":
        index_file.write_bytes(b"\x13\x37garbage, not a FAISS index\xff" * 500)
    elif damage == "truncated_index":
        index_file.write_bytes(index_file.read_bytes()[:1000])
    elif damage == "delete_meta":
        meta_file.unlink()
    else:
        meta_file.write_text("{not json")

    with open_gallery(home, pipeline) as gallery:
        assert len(parts_of(gallery).index) == len(PEOPLE)
        assert parts_of(gallery).index.seq == journal_head(home)
        assert_index_matches_db(gallery)
        (match,) = gallery.identify(lfw_photo(PEOPLE[2], 2))
        assert match.name == display(PEOPLE[2]) and match.score >= gallery.services().thresholds.in_force().threshold
    # ... and close() wrote a good index again.
    assert json.loads(meta_file.read_text())["count"] == len(PEOPLE)


@pytest.mark.local_index
def test_index_saved_at_an_older_database_state_is_caught_up(home, pipeline, lfw_photo, tmp_path) -> None:
    old = tmp_path / "old_index"
    old.mkdir()
    for name in (INDEX_FILE, INDEX_META_FILE):
        shutil.copy2(home / name, old / name)
    old_seq = json.loads((old / INDEX_META_FILE).read_text())["seq"]

    with open_gallery(home, pipeline) as gallery:
        gallery.enroll(lfw_photo(EXTRA_PERSON, 1), display(EXTRA_PERSON))
    assert journal_head(home) > old_seq
    for name in (INDEX_FILE, INDEX_META_FILE):  # put the stale index back, as after a crash before saving
        shutil.copy2(old / name, home / name)

    with open_gallery(home, pipeline) as gallery:
        assert len(parts_of(gallery).index) == len(PEOPLE) + 1
        assert parts_of(gallery).index.seq == journal_head(home)
        assert_index_matches_db(gallery)
        (match,) = gallery.identify(lfw_photo(EXTRA_PERSON, 2))
        assert match.name == display(EXTRA_PERSON) and match.score >= gallery.services().thresholds.in_force().threshold


def test_other_model_in_gallery_warns_refuses_search_until_reindex(home, pipeline, lfw_photo) -> None:
    sql(home, "UPDATE faces SET model_id = 'facerec-r18-arcface@0123456789ab'")
    with open_gallery(home, pipeline) as gallery:
        warning = gallery.services().maintenance.stats()["model_warning"]
        assert warning and "facerec-r18-arcface@0123456789ab" in warning and "reindex" in warning
        assert gallery.services().maintenance.model_warning() == warning
        assert gallery.services().maintenance.stats()["gallery_models"] == ["facerec-r18-arcface@0123456789ab"]
        with pytest.raises(ModelMismatch):
            gallery.identify(lfw_photo(PEOPLE[0], 2))
        with pytest.raises(ModelMismatch):
            gallery.enroll(lfw_photo(EXTRA_PERSON, 1), display(EXTRA_PERSON))  # its look-alike check searches
        assert parts_of(gallery).store.counts() == (len(PEOPLE), len(PEOPLE))

        assert gallery.services().maintenance.reindex() == len(PEOPLE)
        assert gallery.services().maintenance.model_warning() is None and gallery.services().maintenance.stats()["gallery_models"] == [gallery.services().maintenance.model_id]
        assert_index_matches_db(gallery)
        for person in PEOPLE:
            (match,) = gallery.identify(lfw_photo(person, 2))
            assert match.name == display(person) and match.score >= gallery.services().thresholds.in_force().threshold
        (match,) = gallery.identify(lfw_photo(PEOPLE[0], 1))  # re-embedded from the stored crop
        assert match.name == display(PEOPLE[0]) and match.similarity > 0.95
    assert sql(home, "SELECT DISTINCT model_id FROM faces") == [(gallery.services().maintenance.model_id,)]


# ----- approximate (HNSW) and float16 indexes -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["hnsw", "flat16"])
def test_other_index_kinds_enroll_identify_delete(home, pipeline, lfw_photo, kind) -> None:
    # The copied folder holds a flat index: opening it as another kind rebuilds it from the database.
    with open_gallery(home, pipeline, index_kind=kind) as gallery:
        assert gallery.services().maintenance.stats()["index"] == kind and len(parts_of(gallery).index) == len(PEOPLE)
        result = gallery.enroll(lfw_photo(EXTRA_PERSON, 1), display(EXTRA_PERSON))
        for person in (*PEOPLE, EXTRA_PERSON):
            (match,) = gallery.identify(lfw_photo(person, 2))
            assert match.name == display(person) and match.score >= gallery.services().thresholds.in_force().threshold
        (match,) = gallery.identify(lfw_photo(STRANGERS[1], 1))
        assert match.name is None

        gallery.delete(display(PEOPLE[0]))
        assert len(parts_of(gallery).index) == len(PEOPLE)
        assert_index_matches_db(gallery)
        (match,) = gallery.identify(lfw_photo(PEOPLE[0], 2))
        assert match.name is None
        assert result.face_id in parts_of(gallery).index.reconstruct_ids().tolist()
    assert json.loads((home / INDEX_META_FILE).read_text())["kind"] == kind

    with open_gallery(home, pipeline, index_kind=kind) as reopened:
        assert_index_matches_db(reopened)
        (match,) = reopened.identify(lfw_photo(EXTRA_PERSON, 2))
        assert match.name == display(EXTRA_PERSON)


# ----- several Gallery objects on one folder (as the UI and the CLI are) -------------------------------------
def _make_ids_reusable(home: Path) -> None:
    """Turn the gallery into one made before ids were AUTOINCREMENT (SQLite then reuses the highest freed id)."""
    legacy = home / "legacy.db"
    source = sqlite3.connect(home / "gallery.db")
    schema = source.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND "
                            "name <> 'sqlite_sequence' ORDER BY type DESC, rowid").fetchall()  # tables first
    source.close()
    target = sqlite3.connect(legacy)
    for kind, _name, ddl in schema:
        target.execute(ddl.replace(" AUTOINCREMENT", ""))
    target.execute("ATTACH DATABASE ? AS source", (str(home / "gallery.db"),))
    for kind, name, _ddl in schema:
        if kind == "table":
            target.execute(f"INSERT INTO {name} SELECT * FROM source.{name}")
    target.commit()
    target.execute("DETACH DATABASE source")
    target.close()
    os.replace(legacy, home / "gallery.db")
    assert "AUTOINCREMENT" not in str(sql(home, "SELECT sql FROM sqlite_master WHERE name = 'faces'"))


@pytest.mark.local_index
@pytest.mark.parametrize("ids", ["never_reused", "reused_by_an_older_schema"])
def test_delete_then_enroll_elsewhere_leaves_no_stale_vector(home, pipeline, lfw_photo, ids) -> None:
    if ids == "reused_by_an_older_schema":
        if world.BACKEND.name != "sqlite":
            pytest.skip("only SQLite galleries made by older versions reuse ids (PostgreSQL sequences never do)")
        _make_ids_reusable(home)
    first = open_gallery(home, pipeline)  # e.g. the web app
    second = open_gallery(home, pipeline)  # e.g. the CLI, on the same folder
    try:
        (match,) = first.identify(lfw_photo(PEOPLE[2], 2))
        assert match.name == display(PEOPLE[2])
        removed = second.delete(display(PEOPLE[2]))  # the newest face
        added = second.enroll(lfw_photo(EXTRA_PERSON, 1), display(EXTRA_PERSON))
        assert (added.face_id in removed.face_ids) == (ids == "reused_by_an_older_schema")

        # The first gallery catches up from the journal: the deleted person must not come back under the new
        # person's name (a stale vector kept under a reused id), and the new person is found.
        (match,) = first.identify(lfw_photo(PEOPLE[2], 2))
        assert match.name is None
        (match,) = first.identify(lfw_photo(EXTRA_PERSON, 2))
        assert match.name == display(EXTRA_PERSON) and match.score >= first.services().thresholds.in_force().threshold
        assert_index_matches_db(first)
    finally:
        second.close()
        first.close()


def test_reindex_by_another_gallery_reaches_this_gallerys_index(home, pipeline, lfw_photo) -> None:
    # A gallery whose vectors come from an older model (simulated: other model id, unrelated unit vectors).
    rng = np.random.default_rng(7)
    for (face_id,) in sql(home, "SELECT id FROM faces"):
        vector = rng.normal(size=512).astype(np.float32)
        sql(home, "UPDATE faces SET model_id = 'facerec-r18-arcface@old000000000', embedding = ? WHERE id = ?",
            (world.BACKEND.vector(vector / np.linalg.norm(vector)), face_id))
    (home / INDEX_FILE).unlink()
    first = open_gallery(home, pipeline)  # holds the old model's vectors
    second = open_gallery(home, pipeline)
    try:
        with pytest.raises(ModelMismatch):
            first.identify(lfw_photo(PEOPLE[0], 2))
        assert second.services().maintenance.reindex() == len(PEOPLE)  # a remove + add journal pair for every face
        assert first.services().maintenance.model_warning() is None
        assert_index_matches_db(first)
        (match,) = first.identify(lfw_photo(PEOPLE[0], 2))
        assert match.name == display(PEOPLE[0]) and match.score >= first.services().thresholds.in_force().threshold
    finally:
        second.close()
        first.close()
