"""A gallery's files: a lost, replaced or garbage database, a missing model card or a corrupt index gives one
line (and the saved index is never replaced over a database that lost it); files are readable by their owner
only; commits and index saves are durable; the web cache is private per run."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from hardening import (  # noqa: F401 - pytest finds the shared fixtures by name in this module
    HOPPER,
    OBAMA,
    RACERS,
    REPO_ROOT,
    assert_cli_refused,
    assert_one_line,
    base,
    display,
    export,
    facerec_cli,
    folder_digest,
    home,
    open_gallery,
    pipeline,
    sql,
    unchanged,
)

from facerec.errors import UnusableFile
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.openset.model_card import policy_for
from facerec.settings import Settings
from facerec.vectors.saved_files import INDEX_FILE, INDEX_META_FILE
from facerec.web.cache import WEB_CACHE, private_web_cache, web_cache_root


@pytest.mark.parametrize("accident", ["deleted", "emptied_file", "emptied_tables", "older_backup"])
def test_database_lost_or_replaced_refuses_and_keeps_the_index(home, pipeline, portrait, tmp_path, accident):
    database = home / "gallery.db"
    if accident == "deleted":
        database.unlink()
    elif accident == "emptied_file":
        database.write_bytes(b"")
    elif accident == "emptied_tables":
        sql(home, "DELETE FROM faces")
        sql(home, "DELETE FROM identities")
        sql(home, "DELETE FROM journal")
        sql(home, "VACUUM")
    elif accident == "older_backup":
        backup = tmp_path / "backup.db"
        shutil.copy2(database, backup)
        with open_gallery(home, pipeline) as gallery:
            gallery.enroll(portrait(HOPPER, 1), display(HOPPER), allow_low_quality=True)
        shutil.copy2(backup, database)
    before = folder_digest(home)
    with pytest.raises(UnusableFile) as caught:
        open_gallery(home, pipeline)
    message = assert_one_line(caught.value)
    assert "Nothing was changed" in message and INDEX_FILE in message
    assert folder_digest(home) == before  # no new gallery.db, the index not rebuilt over
    if accident == "deleted":
        assert not database.exists()
        assert_cli_refused(facerec_cli("list", home=home), "missing or empty", "holds 3 faces")
        assert folder_digest(home) == before


def test_another_gallerys_database_put_in_place_is_that_gallery_and_its_index_is_rebuilt(home, pipeline, lfw_photo,
                                                                                        tmp_path):
    """The saved index is a cache of its own gallery: beside another gallery's database (with a longer journal of
    other faces) it no longer stops the app; it is rebuilt from the database in place (#39 row 6)."""
    other = tmp_path / "other"
    with open_gallery(other, pipeline) as gallery:
        gallery.enroll(lfw_photo(RACERS[0], 1), display(RACERS[0]))
        gallery.delete(display(RACERS[0]))
        for person in RACERS[1:]:
            gallery.enroll(lfw_photo(person, 1), display(person))
    shutil.copy2(other / "gallery.db", home / "gallery.db")
    with open_gallery(home, pipeline) as gallery:
        assert "another gallery" in " ".join(gallery.services().maintenance.notices)
        assert sorted(p.name for p in gallery.people()) == sorted(display(p) for p in RACERS[1:])
        assert len(parts_of(gallery).index) == len(RACERS) - 1


def test_garbage_database_gives_one_line(home, pipeline):
    (home / "gallery.db").write_bytes(b"this is not a database\n" * 400)
    before = folder_digest(home)
    with pytest.raises(UnusableFile) as caught:
        open_gallery(home, pipeline)
    assert "file is not a database" in assert_one_line(caught.value)
    assert_cli_refused(facerec_cli("stats", home=home), "cannot open the gallery database", "not a database")
    assert folder_digest(home) == before


def test_missing_or_unreadable_model_card_is_an_error(tmp_path, pipeline):
    model = tmp_path / "model"
    model.mkdir()
    shipped = Settings().model_path
    (model / shipped.name).symlink_to(shipped)
    settings = Settings(home=tmp_path / "home", model_path=model / shipped.name)
    with pytest.raises(UnusableFile, match="is missing") as caught:
        policy_for(settings)
    assert "--threshold" in assert_one_line(caught.value)
    (model / shipped.with_suffix(".json").name).write_text("{not json")
    with pytest.raises(UnusableFile, match="cannot be read"):
        Gallery(settings, pipeline=pipeline)
    assert not (tmp_path / "home").exists()  # refused before creating anything
    with Gallery(settings.with_(similarity_threshold=0.7), pipeline=pipeline) as gallery:  # explicit: fine
        assert gallery.services().thresholds.in_force().threshold == 0.7


def test_corrupt_index_is_rebuilt_and_says_so(home, pipeline):
    (home / INDEX_FILE).write_bytes(b"garbage" * 100)
    with open_gallery(home, pipeline) as gallery:
        (notice,) = gallery.services().maintenance.notices
        assert "rebuilt it from the database (3 faces)" in assert_one_line(notice)
        assert len(parts_of(gallery).index) == 3
    (home / INDEX_FILE).write_bytes(b"garbage again" * 100)
    listed = facerec_cli("list", home=home)
    assert listed.returncode == 0
    assert [line for line in listed.stderr.splitlines() if "rebuilt" in line][0].startswith("warning: ")


def test_gallery_files_are_readable_by_their_owner_only(tmp_path, pipeline, portrait, home):
    old_umask = os.umask(0o022)  # what a typical shell gives
    try:
        fresh = tmp_path / "fresh"
        with open_gallery(fresh, pipeline) as gallery:
            gallery.enroll(portrait(OBAMA, 1), display(OBAMA))
            gallery.export(tmp_path / "export.zip")
            assert {p.name for p in fresh.iterdir()} >= {"gallery.db", "gallery.db-wal", "gallery.db-shm"}
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in fresh.iterdir()}
        modes.update({p.name: stat.S_IMODE(p.stat().st_mode) for p in fresh.iterdir()})  # index files on close
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
        assert set(modes) >= {"gallery.db", "gallery.db-wal", "gallery.db-shm", INDEX_FILE, INDEX_META_FILE}
        assert all(mode == 0o600 for mode in modes.values()), modes
        assert stat.S_IMODE((tmp_path / "export.zip").stat().st_mode) == 0o600
        # A gallery made world-readable by an older version is tightened when opened.
        os.chmod(home / "gallery.db", 0o644)
        open_gallery(home, pipeline).close()
        assert stat.S_IMODE((home / "gallery.db").stat().st_mode) == 0o600
    finally:
        os.umask(old_umask)


def test_commits_and_index_saves_are_durable(home, pipeline, portrait, monkeypatch):
    with open_gallery(home, pipeline) as gallery:
        for engine in (parts_of(gallery).store.write_engine, parts_of(gallery).store.read_engine):
            with engine.connect() as connection:
                assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        ddl = sql(home, "SELECT sql FROM sqlite_master WHERE name = 'journal'")[0][0]
        assert "AUTOINCREMENT" in ddl
        # Sequence numbers are never handed out twice, even when the newest journal rows disappear.
        newest = sql(home, "SELECT MAX(seq) FROM journal")[0][0]
        sql(home, "DELETE FROM journal WHERE seq = ?", (newest,))
        gallery.enroll(portrait(HOPPER, 1), display(HOPPER), allow_low_quality=True)
        assert sql(home, "SELECT MAX(seq) FROM journal")[0][0] == newest + 1

        synced = []
        real_fsync = os.fsync

        def recording_fsync(descriptor):  # records what is flushed, and flushes it
            synced.append(Path(os.readlink(f"/proc/self/fd/{descriptor}")).name)
            real_fsync(descriptor)

        monkeypatch.setattr(os, "fsync", recording_fsync)
        parts_of(gallery).index.sync(parts_of(gallery).store)
        parts_of(gallery).index.save(home, gallery.services().maintenance.model_id, parts_of(gallery).store)
        assert any(INDEX_FILE in name for name in synced) and any(INDEX_META_FILE in name for name in synced)
        assert home.name in synced  # the folder too, so the renames survive a power cut
        assert not list(home.glob(".*.tmp"))
        meta = json.loads((home / INDEX_META_FILE).read_text())
        assert meta["head"] == ["add", gallery.services().directory.get(display(HOPPER)).face_ids[0]]
        synced.clear()
        parts_of(gallery).index.save(home, gallery.services().maintenance.model_id, parts_of(gallery).store)
        assert synced == []  # nothing changed: nothing rewritten


def test_web_cache_is_private_per_run_and_outlives_no_run(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    stale = home / WEB_CACHE / "run-999999999"  # a run that crashed: no such process
    stale.mkdir(parents=True)
    (stale / "upload.jpg").write_bytes(b"a face")
    folder = private_web_cache(home / WEB_CACHE)
    assert folder == (home / WEB_CACHE / f"run-{os.getpid()}") and folder.is_dir()
    assert not stale.exists()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    assert private_web_cache(home / WEB_CACHE) == folder  # this run's folder is kept


def test_web_cache_lives_in_memory_only_where_there_is_room_and_the_folder_is_ours(tmp_path):
    """Uploads go to memory (they never reach a disk, and a full gallery disk does not stop identify) when the
    memory has room for twice the quota and the folder there is this user's own; otherwise the gallery folder."""
    home, memory = tmp_path / "home", tmp_path / "memory"
    home.mkdir()
    memory.mkdir()
    assert web_cache_root(home, 1 << 20, memory) == memory / f"facerec-{os.getuid()}"
    assert web_cache_root(home, 1 << 60, memory) == home.resolve() / WEB_CACHE  # no room for the quota
    (memory / f"facerec-{os.getuid()}").rmdir()
    (memory / f"facerec-{os.getuid()}").symlink_to(tmp_path)  # someone's link in a shared folder
    assert web_cache_root(home, 1 << 20, memory) == home.resolve() / WEB_CACHE
