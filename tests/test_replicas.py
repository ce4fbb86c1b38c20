"""Two app replicas, separate OS processes, share one gallery on a real PostgreSQL + pgvector server: replica A
searches with pgvector, replica B keeps a local FAISS copy that follows the database's journal. 8 threads each run
a mix of enroll, add photo, identify, rename and delete through the Gallery API on real LFW photos (>= 400
operations), and B is SIGKILLed in the middle of enrollments several times and restarted.

What must hold: a person enrolled through one replica is identified by the other as soon as the enroll call
returned (each identify looks for the other replica's latest reported enrollment, and must name it at once); no
acknowledged enrollment is lost, nothing is duplicated, and afterwards both replicas agree with the database (same
faces and vectors, every face found as its person). The worker is tests/replica_worker.py.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from facerec.faces.pipeline import FacePipeline
from facerec.settings import Settings

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

WORKER = Path(__file__).with_name("replica_worker.py")
THREADS, STABLE, CHURN, IDENTIFIES = 8, 2, 2, 16  # per thread: 2 + 2 * 4 writes and 16 identifies = 26 operations
KILLS = 4
SEED = 14


def one_face_people(lfw: Path, photos: int, count: int, pipeline: FacePipeline, skip: int) -> dict[str, list]:
    """{name: [(photo path, pipeline result)] * photos} for `count` LFW people with exactly `photos` photos, each
    photo holding exactly one face, taken in name order after the first `skip` such people."""
    chosen: dict[str, list] = {}
    folders = sorted(p for p in lfw.iterdir() if p.is_dir() and len(list(p.glob("*.jpg"))) == photos)
    for folder in folders[skip:]:
        results = []
        for path in sorted(folder.glob("*.jpg")):
            photo = pipeline.read(path)
            faces = pipeline.detect(photo)
            if len(faces) != 1:
                break
            crops, embeddings = pipeline.embed(photo, faces)
            results.append((str(path), photo.sha256, (faces, crops, embeddings)))
        if len(results) == photos:
            chosen[folder.name.replace("_", " ")] = results
        if len(chosen) == count:
            return chosen
    raise AssertionError(f"not enough LFW people with {photos} one-face photos")


def plan(stable: list, churn: list) -> list[dict]:
    """One thread's operations: its people's enrollments and changes, an identify after each, then more identifies."""
    operations = []
    for (name, [(photo, _, _)]), (other, [(first, _, _), (second, _, _)]) in zip(stable, churn):
        renamed = f"{other} (renamed)"
        for operation in ({"op": "enroll", "name": name, "photo": photo, "stable": True},
                          {"op": "enroll", "name": other, "photo": first},
                          {"op": "add_photo", "name": other, "photo": second},
                          {"op": "rename", "name": other, "new_name": renamed},
                          {"op": "delete", "name": renamed}):
            operations += [operation, {"op": "identify", "name": stable[0][0], "photo": stable[0][1][0][0]}]
    own = operations[1]
    operations += [dict(own) for _ in range(IDENTIFIES - len(stable) * 5)]
    return operations


def read_logs(work: Path, replica: str) -> list[dict]:
    """Every complete line of the replica's thread logs, with its thread number."""
    entries = []
    for number in range(THREADS):
        path = work / f"log-{replica}-{number}"
        if path.exists():
            entries += [{**json.loads(line), "thread": number} for line in path.read_text().split("\n")[:-1]
                        if line]
    return entries


def start(work: Path, replica: str, incarnation: int) -> tuple[subprocess.Popen, Path]:
    out = work / f"{replica}-{incarnation}.out"
    with open(out, "w") as handle:
        process = subprocess.Popen([sys.executable, str(WORKER), str(work), replica], stdout=handle,
                                   stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    deadline = time.monotonic() + 120
    while "ready" not in out.read_text():
        assert process.poll() is None, out.read_text()
        assert time.monotonic() < deadline, f"replica {replica} did not start:\n{out.read_text()}"
        time.sleep(0.01)
    return process, out


def progress(work: Path, replica: str) -> tuple[int, bool]:
    """(operations done, whether an enrollment is under way) of a replica."""
    entries = read_logs(work, replica)
    done = {(e["thread"], e["i"]) for e in entries if e["event"] == "done"}
    enrolling = any((e["thread"], e["i"]) not in done for e in entries if e["event"] == "start" and e["op"] == "enroll")
    return len(done), enrolling


def test_two_replicas_on_one_postgres_lose_nothing_when_one_is_killed(postgres, lfw, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    url = postgres.new_database()
    pipeline = FacePipeline(Settings.from_env())  # the real pipeline, once per photo
    per_replica = THREADS * STABLE
    stable = list(one_face_people(lfw, 1, 2 * per_replica, pipeline, skip=300).items())
    churn = list(one_face_people(lfw, 2, 2 * per_replica, pipeline, skip=100).items())
    with open(work / "photos.pickle", "wb") as handle:
        pickle.dump({sha: result for _name, photos in stable + churn for _path, sha, result in photos}, handle)
    replicas = {}
    for r, (replica, kind) in enumerate((("A", "pgvector"), ("B", "flat"))):
        threads = []
        for t in range(THREADS):
            at = (r * THREADS + t) * STABLE
            threads.append(plan(stable[at : at + STABLE], churn[at : at + CHURN]))
        replicas[replica] = {"home": str(tmp_path / f"home-{replica}"), "index_kind": kind, "threads": threads}
    (work / "config.json").write_text(json.dumps({"url": url, "replicas": replicas}))
    total = sum(len(ops) for config in replicas.values() for ops in config["threads"])
    assert total >= 400

    rng = random.Random(SEED)
    processes = {name: start(work, name, 0)[0] for name in ("A", "B")}
    started = time.monotonic()
    kills, incarnation = 0, 0
    try:
        (work / "go").touch()
        while kills < KILLS and not (work / "finished-B").exists():
            done_before = progress(work, "B")[0]  # let some operations pass between kills, then one mid-enroll
            while not (work / "finished-B").exists():
                done_now, enrolling = progress(work, "B")
                if enrolling and done_now >= done_before + 12:
                    break
                assert processes["B"].poll() is None, (work / f"B-{incarnation}.out").read_text()
                assert time.monotonic() - started < 240, "replica B made no progress"
                time.sleep(0.002)
            if (work / "finished-B").exists():
                break
            time.sleep(rng.uniform(0.0, 0.015))  # somewhere in the enrollment: pipeline, checks, commit, log
            processes["B"].send_signal(signal.SIGKILL)
            processes["B"].wait(timeout=30)
            kills += 1
            incarnation += 1
            processes["B"] = start(work, "B", incarnation)[0]
        for name in ("A", "B"):
            deadline = time.monotonic() + 240
            while not (work / f"finished-{name}").exists():
                assert processes[name].poll() is None, (work / f"{name}-{incarnation}.out").read_text()
                assert time.monotonic() < deadline, f"replica {name} did not finish"
                time.sleep(0.02)
        (work / "final").touch()
        for name, process in processes.items():
            assert process.wait(timeout=120) == 0, f"replica {name} failed"
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    seconds = time.monotonic() - started

    done = [{**e, "replica": name} for name in ("A", "B") for e in read_logs(work, name) if e["event"] == "done"]
    failures = [e["error"] for e in done if e.get("failed")]
    assert not failures, failures[0]
    assert len(done) == len({(e["replica"], e["thread"], e["i"]) for e in done}) == total  # each op once
    by_op = {op: sum(e["op"] == op for e in done) for op in ("enroll", "add_photo", "identify", "rename", "delete")}
    recovered = sum(bool(e.get("recovered")) for e in done)
    cross = [e for e in done if e["op"] == "identify" and e["cross"]]
    acknowledged = [e["name"] for e in done if e["op"] == "enroll"]  # the call returned (some after a restart)
    stable_names = {e["name"] for e in done if e["op"] == "enroll" and e.get("stable")}

    people = postgres.sql(url, "SELECT name FROM identities ORDER BY name")
    faces, photos = postgres.sql(url, "SELECT count(*), count(DISTINCT photo_sha256) FROM faces")[0]
    per_person = postgres.sql(url, "SELECT count(*) FROM faces GROUP BY identity_id HAVING count(*) <> 1")
    unjournalled = postgres.sql(url, "SELECT count(*) FROM faces f WHERE NOT EXISTS (SELECT 1 FROM journal j "
                                     "WHERE j.op = 'add' AND j.face_id = f.id)")[0][0]
    lost = stable_names - {name for (name,) in people}
    leftover_churn = {name for (name,) in people} - stable_names
    counts = {"operations": total, **by_op, "kills": kills, "recovered_after_kill": recovered,
              "acknowledged_enrollments": len(acknowledged), "cross_replica_identifies": len(cross),
              "cross_identify_after_ms_min": round(1000 * min(e["after_s"] for e in cross), 1),
              "cross_identify_after_ms_median": round(1000 * statistics.median(e["after_s"] for e in cross), 1),
              "people": len(people), "faces": faces, "lost": len(lost), "duplicate_photos": faces - photos,
              "seconds": round(seconds, 1)}
    print("\nreplicas:", json.dumps(counts))
    (tmp_path / "counts.json").write_text(json.dumps(counts))

    assert kills == KILLS, f"only {kills} kills landed: replica B finished first"
    assert lost == set() and leftover_churn == set()  # every acknowledged enrollment is there; deletes hold
    assert len(people) == len(stable_names) == 2 * per_replica and faces == len(people)
    assert faces == photos and per_person == [] and unjournalled == 0  # no duplicate, no half-written person
    assert len(cross) >= 200  # most identifies looked for the other replica's enrollments, and found them all
    for name in ("A", "B"):
        result = json.loads((work / f"result-{name}.json").read_text())
        assert result["problems"] == [], (name, result["problems"][:5])
        assert result["people"] == [name for (name,) in people] and result["faces"] == faces
