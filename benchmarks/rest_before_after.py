"""REST identify's latency on two commits of facerec, alternated on one machine: did a change cost the REST path?

    git worktree add /tmp/before da422da
    nice -n 5 python benchmarks/rest_before_after.py --before /tmp/before --data ../shared/data \
        --out benchmarks/results/rest_before_after.json

One gallery of `--people` LFW people is built with this checkout's code and copied, so each app (this checkout's
`app.py` and the one in `--before`) serves an identical gallery of its own. Both run at once; `--rounds` rounds
each send `--requests` identify requests (`--clients` keep-alive connections, a read key) to one app and then the
other, the order swapped every round, so a change in the machine's load falls on both. The figures: p50 and p99 of
each request's latency as its client saw it, and after/before ratios.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from app_server import running_app  # noqa: E402
from rest_throughput import one_face_queries, run_clients, summary  # noqa: E402

from facerec.access.api_keys import ApiKeys  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def commit_of(tree: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--requests", type=int, default=200, help="per app and round, all clients together")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--out")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": ROOT}
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "after" / "home"
        with Gallery(Settings.from_env(home=home)) as gallery:
            enrollments, queries = one_face_queries(gallery, Path(args.data) / "lfw", args.people, args.queries)
            for name, photo in enrollments:
                gallery.enroll(photo, name, allow_lookalike=True, allow_low_quality=True)
            _, key = ApiKeys(parts_of(gallery).store).create("read", "rest before/after benchmark")
        homes = {"after": home, "before": Path(folder) / "before" / "home"}
        shutil.copytree(home, homes["before"])
        print(f"{len(enrollments)} people enrolled, {len(queries)} one-face query photos", flush=True)
        with running_app(homes["before"], repo_root=trees["before"]) as before, \
                running_app(homes["after"], repo_root=trees["after"]) as after:
            sessions = {version: [httpx.Client(base_url=f"{app.url}api/v1", timeout=120, trust_env=False,
                                               headers={"X-API-Key": key}) for _ in range(args.clients)]
                        for version, app in (("before", before), ("after", after))}

            def caller(version: str):
                def call(client: int, data: bytes) -> str:
                    response = sessions[version][client].post("/identify", data={"top_k": "3"},
                                                              files={"photo": ("query.jpg", data, "image/jpeg")})
                    response.raise_for_status()
                    return response.json()["faces"][0]["name"]
                return call

            for round_number in range(args.rounds):
                order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
                for version in order:
                    runs[version].append(run_clients(caller(version), queries, args.requests, args.clients))
                    latencies = sorted(runs[version][-1]["latencies"])
                    print(f"round {round_number + 1} {version}: p50 {1000 * latencies[len(latencies) // 2]:.0f} ms",
                          flush=True)
            for clients in sessions.values():
                for session in clients:
                    session.close()
    results = {"command": "python " + " ".join(sys.argv), "clients": args.clients, "people": len(enrollments),
               "commits": {version: commit_of(tree) for version, tree in trees.items()},
               **{version: summary(version_runs) for version, version_runs in runs.items()}}
    results["after_over_before"] = {f"{q}_ratio": round(results["after"][f"{q}_ms"] / results["before"][f"{q}_ms"], 3)
                                    for q in ("p50", "p99")}
    print(results["after_over_before"], {v: (results[v]["p50_ms"], results[v]["p99_ms"]) for v in trees})
    if args.out:
        write_result(args.out, results, Settings.from_env().model_path, threads=0)


if __name__ == "__main__":
    main()
