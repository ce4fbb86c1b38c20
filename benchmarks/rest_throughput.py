"""Identify over the REST API vs in-process: requests/s and latency with concurrent clients.

    nice -n 5 python benchmarks/rest_throughput.py --data ../shared/data --out benchmarks/results/rest_throughput.json

One gallery of `--people` LFW people (each enrolled from their first photo through `Gallery.enroll`), queried with
other photos of them holding exactly one face (as detected), as file bytes:

- in-process: `--clients` threads calling `Gallery.identify(bytes)` on one shared Gallery;
- REST: `python app.py` on that gallery in a subprocess, `--clients` threads each with its own keep-alive HTTP
  connection posting the photo to `/api/v1/identify` (multipart, a read key) and parsing the JSON answer.

The two modes take turns for `--rounds` rounds (each a warm-up, then `--requests` requests over all clients), so a
change in the machine's load falls on both; the figures are requests/s over all rounds of a mode and the p50/p99 of
each request's latency as its client saw it. Both modes use the app's defaults (onnxruntime on every core, at most 4
Gallery calls at once in the API); while one mode runs, the other's process idles.
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from app_server import running_app  # noqa: E402 - starts app.py the way the tests do

from facerec.access.api_keys import ApiKeys  # noqa: E402
from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

WARM_UP = 8


def one_face_queries(gallery: Gallery, lfw: Path, people: int, wanted: int) -> tuple[list[tuple[str, Path]], list]:
    """(name, photo) enrollments of `people` LFW people with >= 2 one-face photos (among their first four, in which
    exactly one face is detected), and up to `wanted` query photos: their other one-face photos, as (name, bytes)."""
    enrollments, queries = [], []
    for name, photos in sorted(list_identities(lfw).items()):
        if len(enrollments) == people:
            break
        single = [photo for photo in photos[:4] if len(gallery.services().photos.detect(photo)[1]) == 1] if len(photos) >= 2 else []
        if len(single) >= 2:
            enrollments.append((name, single[0]))
            queries += [(name, photo.read_bytes()) for photo in single[1:]]
    return enrollments, queries[:wanted]


def run_clients(call, queries: list, requests: int, clients: int) -> dict:
    """`requests` calls of `call(client_index, photo_bytes) -> name`, spread over `clients` threads after a warm-up:
    the wall time, each call's latency (s) and how many named the query's person."""
    for index in range(WARM_UP):
        call(index % clients, queries[index % len(queries)][1])
    latencies: list[float] = []
    right = 0
    lock = threading.Lock()

    def client(index: int) -> None:
        nonlocal right
        for number in range(index, requests, clients):
            expected, data = queries[number % len(queries)]
            start = time.perf_counter()
            name = call(index, data)
            elapsed = time.perf_counter() - start
            with lock:
                latencies.append(elapsed)
                right += name == expected

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    return {"seconds": time.perf_counter() - start, "latencies": latencies, "named_right": right}


def summary(runs: list[dict]) -> dict:
    """Requests/s over all rounds of one mode, p50/p99 over every request, and each round's requests/s."""
    milliseconds = 1000 * np.array([latency for run in runs for latency in run["latencies"]])
    seconds = sum(run["seconds"] for run in runs)
    return {"requests": len(milliseconds), "seconds": round(seconds, 2),
            "requests_per_s": round(len(milliseconds) / seconds, 2),
            "p50_ms": round(float(np.percentile(milliseconds, 50)), 1),
            "p99_ms": round(float(np.percentile(milliseconds, 99)), 1),
            "mean_ms": round(float(milliseconds.mean()), 1),
            "named_right": sum(run["named_right"] for run in runs),
            "requests_per_s_by_round": [round(len(run["latencies"]) / run["seconds"], 2) for run in runs]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--queries", type=int, default=100, help="distinct query photos (cycled)")
    parser.add_argument("--requests", type=int, default=200, help="per mode and round, all clients together")
    parser.add_argument("--rounds", type=int, default=3,
                        help="in-process and REST take turns, so a change in the machine's load hits both")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--out")
    args = parser.parse_args()
    results = {"command": "python " + " ".join(sys.argv),
               "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                           "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
                           "niceness": os.nice(0)},
               "clients": args.clients, "people": args.people}
    runs: dict[str, list[dict]] = {"in_process": [], "rest": []}
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        with Gallery(Settings.from_env(home=home)) as gallery:
            enrollments, queries = one_face_queries(gallery, Path(args.data) / "lfw", args.people, args.queries)
            for name, photo in enrollments:
                gallery.enroll(photo, name, allow_lookalike=True, allow_low_quality=True)
            _, key = ApiKeys(parts_of(gallery).store).create("read", "rest throughput benchmark")
            parts_of(gallery).index.save(gallery.services().settings.home, gallery.services().maintenance.model_id, parts_of(gallery).store)
            results.update(faces_enrolled=len(parts_of(gallery).index), query_photos=len(queries))
            print(f"{len(enrollments)} people enrolled, {len(queries)} one-face query photos", flush=True)
            with running_app(home) as app:  # the same gallery, opened by the app too
                sessions = [httpx.Client(base_url=f"{app.url}api/v1", timeout=120, trust_env=False,
                                         headers={"X-API-Key": key}) for _ in range(args.clients)]

                def over_http(client: int, data: bytes) -> str:
                    response = sessions[client].post("/identify", data={"top_k": "3"},
                                                     files={"photo": ("query.jpg", data, "image/jpeg")})
                    response.raise_for_status()
                    return response.json()["faces"][0]["name"]

                def in_process(_client: int, data: bytes) -> str:
                    return gallery.identify(data, top_k=3)[0].label

                for round_number in range(args.rounds):
                    for mode, call in (("in_process", in_process), ("rest", over_http)):
                        runs[mode].append(run_clients(call, queries, args.requests, args.clients))
                        print(f"round {round_number + 1} {mode}: "
                              f"{len(runs[mode][-1]['latencies']) / runs[mode][-1]['seconds']:.1f} requests/s",
                              flush=True)
                for session in sessions:
                    session.close()
    results.update({mode: summary(mode_runs) for mode, mode_runs in runs.items()})
    results["rest_over_in_process"] = {
        "throughput_ratio": round(results["rest"]["requests_per_s"] / results["in_process"]["requests_per_s"], 3),
        "p50_overhead_ms": round(results["rest"]["p50_ms"] - results["in_process"]["p50_ms"], 1)}
    results["machine"]["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_result(args.out, results, Settings.from_env().model_path, threads=0)


if __name__ == "__main__":
    main()
