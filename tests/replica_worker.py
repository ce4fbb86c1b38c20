"""One app replica for tests/test_replicas.py (not a test module): a Gallery on the shared PostgreSQL database, run by
8 threads through its public API, until killed or done.

Usage: python replica_worker.py WORK REPLICA

WORK/config.json gives the database URL and, per replica, its gallery folder, index kind and the operations of
each thread; WORK/photos.pickle the photo pipeline's results for every photo used, computed once by the test with
the real pipeline (detection and embedding are the slow, already-tested part: here every other step of enroll,
add photo, identify, rename and delete runs for real, on real LFW photos).

Each thread logs to WORK/log-REPLICA-THREAD a line before each operation ("start") and one after it returned
("done", fsynced: a done line is written only after the call returned, never before). A restarted replica skips
what its log says is done and redoes the one operation that was in flight when it was killed, accepting that it
may have committed ("recovered": e.g. the enrollment is there, so enrolling again says the name is taken).

An identify looks for the person the other replica reported enrolled last (its done lines; one this thread has
not looked for yet first), so a face is looked for in one replica soon after another's enroll call returned; it
must be found, by name, at once: no replica waits for anything to catch up.
Prints "ready" when the gallery is open; runs once WORK/go exists; when every thread is done writes
WORK/finished-REPLICA, waits for WORK/final, then checks itself against the database into WORK/result-REPLICA.json.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np

from facerec.errors import DuplicatePhoto, InvalidArgument, UnknownIdentity
from facerec.gallery import Gallery
from facerec.faces.pipeline import FacePipeline
from facerec.settings import Settings
from facerec.gallery.composition import parts_of


class PrecomputedPipeline(FacePipeline):
    """The real pipeline's results, looked up by photo: decoding is real, detection and embedding were done once."""

    def __init__(self, settings: Settings, results: dict) -> None:
        super().__init__(settings)  # the models load lazily: never, here
        self.results = results

    def detect(self, photo):
        return self.results[photo.sha256][0]

    def embed(self, photo, faces):
        found = self.results[photo.sha256]
        rows = [next(i for i, f in enumerate(found[0]) if f.box == face.box) for face in faces]
        return found[1][rows], found[2][rows]


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().split("\n")[:-1] if line]


def run_thread(gallery: Gallery, work: Path, replica: str, other: str, number: int,
               operations: list[dict]) -> None:
    log_path = work / f"log-{replica}-{number}"
    if log_path.exists():  # a kill can leave half a line (never half a done line that counts: it lacks "\n")
        data = log_path.read_bytes()
        os.truncate(log_path, data.rfind(b"\n") + 1)
    previous = read_log(log_path)
    done = {entry["i"] for entry in previous if entry["event"] == "done"}
    in_flight = {entry["i"] for entry in previous if entry["event"] == "start"} - done
    seen: set[str] = set()  # the other replica's people this thread has looked for
    with open(log_path, "a") as log:
        def write(entry: dict, durable: bool) -> None:
            log.write(json.dumps(entry) + "\n")
            log.flush()
            if durable:
                os.fsync(log.fileno())

        for i, operation in enumerate(operations):
            if i in done:
                continue
            kind = operation["op"]
            write({"i": i, "event": "start", "op": kind}, durable=False)
            try:
                outcome = perform(gallery, work, other, operation, recovering=i in in_flight, seen=seen)
            except Exception:  # noqa: BLE001 - every failure is reported by the test
                outcome = {"failed": True, "error": traceback.format_exc()}
            write({"i": i, "event": "done", "op": kind, **operation, **outcome, "t": time.time()}, durable=True)


def perform(gallery: Gallery, work: Path, other: str, operation: dict, recovering: bool, seen: set) -> dict:
    kind = operation["op"]
    if kind == "enroll":
        try:
            result = gallery.enroll(operation["photo"], operation["name"], allow_lookalike=True,
                                allow_low_quality=True)  # what is tested here is concurrency, not photo quality
            assert result.name == operation["name"] and result.photos == 1
            return {"recovered": False}
        except (InvalidArgument, DuplicatePhoto):
            if not recovering:
                raise
            assert gallery.services().directory.get(operation["name"]).photos == 1  # it committed before the kill
            return {"recovered": True}
    if kind == "add_photo":
        try:
            assert gallery.add_photo(operation["name"], operation["photo"], allow_mismatch=True,
                                     allow_low_quality=True).photos == 2
            return {"recovered": False}
        except DuplicatePhoto:
            if not recovering:
                raise
            assert gallery.services().directory.get(operation["name"]).photos == 2
            return {"recovered": True}
    if kind == "rename":
        try:
            assert gallery.rename(operation["name"], operation["new_name"]).name == operation["new_name"]
            return {"recovered": False}
        except UnknownIdentity:
            if not recovering:
                raise
            gallery.services().directory.get(operation["new_name"])
            return {"recovered": True}
    if kind == "delete":
        try:
            gallery.delete(operation["name"])
            return {"recovered": False}
        except UnknownIdentity:
            if not recovering:
                raise
            return {"recovered": True}
    if kind == "identify":
        # The other replica's latest enrollment this thread has not looked for yet (else its latest, else one of
        # this thread's own people): it must be found at once, however recently its enroll call returned.
        enrolled_there = [entry for n in range(8) for entry in read_log(work / f"log-{other}-{n}")
                          if entry["event"] == "done" and entry["op"] == "enroll" and entry.get("stable")
                          and not entry.get("failed")]
        fresh = [entry for entry in enrolled_there if entry["name"] not in seen] or enrolled_there
        target = max(fresh, key=lambda e: e["t"]) if fresh else operation
        seen.add(target["name"])
        asked = time.time()
        (match,) = gallery.identify(target["photo"])
        assert match.name == target["name"] and match.similarity > 0.99, (target["name"], match.name)
        return {"target": target["name"], "cross": bool(enrolled_there),
                "after_s": asked - target["t"] if enrolled_there else None}
    raise ValueError(kind)


def self_check(gallery: Gallery) -> dict:
    """This replica against the database: the same faces and vectors, and every face found as its person."""
    parts_of(gallery).index.sync(parts_of(gallery).store)
    problems = []
    index_ids, index_vectors = parts_of(gallery).index.reconstruct_all()
    db_ids, db_vectors = parts_of(gallery).store.faces.embeddings()
    order = np.argsort(index_ids)
    if index_ids[order].tolist() != db_ids.tolist():
        problems.append(f"index faces {len(index_ids)} != database faces {len(db_ids)}")
    elif not np.allclose(index_vectors[order], db_vectors, atol=1e-5):
        problems.append("index vectors differ from the database's")
    if len(parts_of(gallery).index) != parts_of(gallery).store.counts()[1]:
        problems.append(f"len(index) {len(parts_of(gallery).index)} != {parts_of(gallery).store.counts()[1]} faces")
    labels = parts_of(gallery).store.faces.labels()
    for face_id, vector in zip(db_ids, db_vectors):
        (candidates,) = parts_of(gallery).searching.search(vector[None], top_k=1)
        if not candidates or candidates[0].name != labels[int(face_id)][1]:
            problems.append(f"face {face_id} not found as {labels[int(face_id)][1]}")
    return {"problems": problems, "people": sorted(p.name for p in gallery.people()), "faces": len(db_ids),
            "index": parts_of(gallery).index.kind}


def main(work: Path, replica: str) -> int:
    config = json.loads((work / "config.json").read_text())
    mine = config["replicas"][replica]
    other = next(name for name in config["replicas"] if name != replica)
    settings = Settings.from_env(home=mine["home"], database_url=config["url"], index_kind=mine["index_kind"])
    with open(work / "photos.pickle", "rb") as handle:
        results = pickle.load(handle)
    gallery = Gallery(settings, pipeline=PrecomputedPipeline(settings, results))
    print("ready", flush=True)
    while not (work / "go").exists():
        time.sleep(0.01)
    threads = [threading.Thread(target=run_thread, args=(gallery, work, replica, other, n, operations))
               for n, operations in enumerate(mine["threads"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (work / f"finished-{replica}").touch()
    while not (work / "final").exists():
        time.sleep(0.01)
    result = self_check(gallery)
    gallery.close()
    (work / f"result-{replica}.json").write_text(json.dumps(result))
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
