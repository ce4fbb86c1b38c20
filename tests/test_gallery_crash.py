"""Crash safety: a worker process enrolling real LFW photos is killed with SIGKILL at random moments, 20 times in a
row on the same gallery folder. After every kill the gallery must hold every name the worker reported as
enrolled, have no half-written person, and its FAISS index (rebuilt or replayed on open) must agree with the
database.

The worker (tests/helpers_crash_worker.py) logs a name, with fsync, only after `Gallery.enroll` returned, and it
saves the index every 3 enrollments, so kills land inside SQLite transactions, index saves and start-up alike.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from facerec.gallery import Gallery
from facerec.faces.pipeline import FacePipeline
from facerec.settings import Settings
from facerec.gallery.composition import parts_of

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

WORKER = Path(__file__).with_name("helpers_crash_worker.py")
KILLS = 20
SEED = 20240611
# 45 one-photo LFW people whose photo holds exactly one face.
CRASH_PEOPLE = (
    "Andy_Griggs", "Andy_Madikians", "Andy_North", "Andy_Perez", "Andy_Rooney", "Andy_Warhol", "Andy_Wisecarver",
    "Anette_Hosoi", "Angel_Lockward", "Angela_Alvarado_Rosa", "Angela_Mascia-Frye", "Angelica_Romero",
    "Angelo_Genova", "Angie_Arzola", "Anil_Ramsook", "Anita_DeFrantz", "Anja_Paerson", "Anjum_Hussain",
    "Ann_Godbehere", "Ann_Landers", "Ann_Morgan", "Anna_Chicherova", "Anna_Faris", "Anne_Cavers", "Anne_Donovan",
    "Anne_Heche", "Annie-Jeanne_Reynaud", "Annie_Chaplin", "Annika_Sorenstam", "Anthony_Carter", "Anthony_Corso",
    "Anthony_Ervin", "Anthony_Garotinho", "Anthony_Hazen", "Anthony_Lee_Johnson", "Anthony_Mazur", "Anthony_Pico",
    "Anthony_Pisciotti", "Anthony_Principi", "Anthony_Rackauckas", "Anthony_Scott_Miller", "Antje_Buschschulte",
    "Antonio_Bernardo", "Antonio_Cassano", "Antonio_Catania",
)


def sql(home: Path, statement: str) -> list[tuple]:
    connection = sqlite3.connect(home / "gallery.db", timeout=60)
    try:
        return connection.execute(statement).fetchall()
    finally:
        connection.close()


def logged_names(log: Path) -> list[str]:
    """Complete lines only (a kill can never leave a partial one, but do not rely on it)."""
    if not log.exists():
        return []
    text = log.read_text(encoding="utf-8")
    return [line for line in text.split("\n")[:-1] if line]


def start_worker(home: Path, photos_file: Path, log: Path, out: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(out, "w") as handle:
        return subprocess.Popen([sys.executable, str(WORKER), str(home), str(photos_file), str(log), "3"],
                                stdout=handle, stderr=subprocess.STDOUT, env=env)


def check_gallery(home: Path, log: Path, pipeline: FacePipeline, photos: dict[str, str], kills: int,
                  rng: random.Random, save_index: bool) -> set[str]:
    """Every invariant a killed enrollment must leave intact; returns the names in the database."""
    assert sql(home, "PRAGMA integrity_check") == [("ok",)]
    names = [row[0] for row in sql(home, "SELECT name FROM identities")]
    in_db = set(names)
    assert len(names) == len(in_db)
    logged = logged_names(log)
    assert len(logged) == len(set(logged)), "a name was reported as enrolled twice"
    missing = set(logged) - in_db
    assert not missing, f"reported as enrolled but not in the database: {sorted(missing)}"
    assert in_db <= set(photos)
    # At most one enrollment per kill can commit without being logged (killed between commit and log line).
    assert len(in_db - set(logged)) <= kills

    # No orphans, no half-written person: one face per person (one photo each), a journal 'add' for every face.
    assert sql(home, "SELECT COUNT(*) FROM identities i WHERE NOT EXISTS "
                     "(SELECT 1 FROM faces f WHERE f.identity_id = i.id)") == [(0,)]
    assert sql(home, "SELECT COUNT(*) FROM faces f LEFT JOIN identities i ON i.id = f.identity_id "
                     "WHERE i.id IS NULL") == [(0,)]
    assert sql(home, "SELECT COUNT(*) FROM (SELECT identity_id FROM faces GROUP BY identity_id "
                     "HAVING COUNT(*) <> 1)") == [(0,)]
    assert sql(home, "SELECT COUNT(*) FROM faces f WHERE NOT EXISTS "
                     "(SELECT 1 FROM journal j WHERE j.op = 'add' AND j.face_id = f.id)") == [(0,)]
    assert sql(home, "SELECT COUNT(*) FROM journal j WHERE NOT EXISTS "
                     "(SELECT 1 FROM faces f WHERE f.id = j.face_id)") == [(0,)]
    db_ids = [row[0] for row in sql(home, "SELECT id FROM faces ORDER BY id")]

    gallery = Gallery(Settings.from_env(home=home), pipeline=pipeline)
    try:
        index_ids, index_vectors = parts_of(gallery).index.reconstruct_all()
        order = np.argsort(index_ids)
        assert index_ids[order].tolist() == db_ids
        assert len(parts_of(gallery).index) == len(db_ids) == parts_of(gallery).store.counts()[1]
        _ids, db_vectors = parts_of(gallery).store.faces.embeddings()
        np.testing.assert_allclose(index_vectors[order], db_vectors, atol=1e-5)
        if logged:
            name = rng.choice(logged)
            (match,) = gallery.identify(photos[name])
            assert match.name == name and match.similarity > 0.99
    finally:
        if save_index:
            gallery.close()  # the next worker starts from a saved index it must replay
        else:
            parts_of(gallery).store.dispose()  # leave whatever index the killed worker saved (or none)
    return in_db


def wait_until(condition, process: subprocess.Popen, out: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            return
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"worker made no progress within {timeout}s:\n{out.read_text()}")
        time.sleep(0.01)


def test_sigkill_during_enrollment_never_loses_or_corrupts_data(tmp_path, lfw) -> None:
    home = tmp_path / "home"
    photos = {name.replace("_", " "): str(lfw / name / f"{name}_0001.jpg") for name in CRASH_PEOPLE}
    photos_file = tmp_path / "photos.json"
    photos_file.write_text(json.dumps(list(photos.items())))
    log = tmp_path / "success.log"
    pipeline = FacePipeline(Settings.from_env(home=home))
    rng = random.Random(SEED)

    kills, enroll_seconds = 0, 0.4  # running estimate of one enrollment's duration on this machine
    attempt = -1
    while kills < KILLS and attempt < KILLS + 5:  # a kill that finds the worker already gone does not count
        attempt += 1
        out = tmp_path / f"worker_{attempt}.out"
        before = len(logged_names(log))
        worker = start_worker(home, photos_file, log, out)
        try:
            if attempt % 5 == 4:
                # Anywhere from interpreter start-up to the first enrollments; never past the second one, or a
                # fast model would finish the whole list before the kill.
                deadline = time.monotonic() + rng.uniform(0.05, 2.5)
                while time.monotonic() < deadline and len(logged_names(log)) < before + 2 and worker.poll() is None:
                    time.sleep(0.005)
            else:
                # Let 0-2 enrollments complete, then kill at a random point of the next one (detection,
                # embedding, the SQLite transaction, an index save, or the log write).
                wait_until(lambda: "ready" in out.read_text(), worker, out)
                started, wanted = time.monotonic(), rng.randint(0, 2)
                wait_until(lambda: len(logged_names(log)) >= before + wanted, worker, out)
                if wanted:
                    measured = (time.monotonic() - started) / wanted
                    enroll_seconds = min(1.0, 0.5 * enroll_seconds + 0.5 * measured)
                time.sleep(rng.uniform(0.0, enroll_seconds))
            if worker.poll() is None:
                worker.send_signal(signal.SIGKILL)
                kills += 1
            worker.wait(timeout=60)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        assert worker.returncode in (0, -signal.SIGKILL), out.read_text()
        in_db = check_gallery(home, log, pipeline, photos, kills, rng, save_index=attempt % 2 == 0)
        if worker.returncode == 0:  # finished the whole list before the kill (not expected with 45 photos)
            assert "finished" in out.read_text() and in_db == set(photos)
            break

    assert kills == KILLS, f"only {kills} kills landed; the worker finished too early"
    assert logged_names(log), "no enrollment completed between kills"

    # A last, uninterrupted run finishes the list from wherever the kills left it.
    out = tmp_path / "worker_final.out"
    worker = start_worker(home, photos_file, log, out)
    assert worker.wait(timeout=120) == 0, out.read_text()
    assert "finished" in out.read_text()
    in_db = check_gallery(home, log, pipeline, photos, kills, rng, save_index=True)
    assert in_db == set(photos)
    assert set(logged_names(log)) <= in_db
