"""What the README's test command costs: its wall time, the test venv's size, and what takes the time.

    PYTEST_ADDOPTS="--junitxml=/tmp/suite.xml" CI=true bash .ci/run          # the README's command, on a clean clone
    python benchmarks/test_suite.py --junit /tmp/suite.xml --label after --venv .venv-test \
        --out benchmarks/results/test_suite.json

Reads the JUnit report pytest wrote (`--junitxml`, passed through PYTEST_ADDOPTS so the README's command stays
verbatim) and records, under `runs[label]`: pytest's wall time, the tests that passed, skipped and failed, the
summed time of the tests themselves (their work, which parallel workers share out), the files and tests that took
longest, and the venv's size on disk. Other labels already in the file are kept, so one file holds a before and an
after. A run on a machine shared with other work says so (`--shared`); the load average is recorded when the report is
read just after the run (within ten minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

from facerec.provenance import provenance


def read_junit(path: Path) -> dict:
    """The counts, wall time and per-test times of one pytest JUnit report (seconds)."""
    root = ElementTree.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    tests, files = [], Counter()
    for case in suite.iter("testcase"):
        module = case.get("classname", "").split(".")
        file = "/".join(module[:-1] if module[-1][:1].isupper() else module) + ".py"
        seconds = float(case.get("time", 0))
        tests.append((seconds, f"{file}::{case.get('name')}"))
        files[file] += seconds
    tests.sort(reverse=True)
    return {"wall_seconds": float(suite.get("time")), "tests": int(suite.get("tests")),
            "skipped": int(suite.get("skipped", 0)), "failed": int(suite.get("failures", 0)) + int(suite.get("errors", 0)),
            "test_seconds": round(sum(seconds for seconds, _ in tests), 1),
            "slowest_files": [[name, round(seconds, 1)] for name, seconds in files.most_common(12)],
            "slowest_tests": [[name, round(seconds, 1)] for seconds, name in tests[:12]]}


def folder_megabytes(path: Path) -> float:
    """Disk used by a folder (du), in MB."""
    kilobytes = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True).stdout.split()[0]
    return round(int(kilobytes) / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", type=Path, required=True, help="the JUnit XML report pytest wrote")
    parser.add_argument("--label", required=True, help="the name of this run in the results file (before, after)")
    parser.add_argument("--venv", type=Path, default=Path(".venv-test"), help="the test venv, to measure its size")
    parser.add_argument("--workers", type=int, default=None, help="pytest-xdist workers the run used (0: none)")
    parser.add_argument("--shared", action="store_true", help="the machine ran other work at the same time")
    parser.add_argument("--tested-commit", default=None,
                        help="the commit the report's run tested, when it is not this checkout's (a before)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/test_suite.json"))
    args = parser.parse_args()

    run = read_junit(args.junit)
    fresh = time.time() - args.junit.stat().st_mtime < 600  # the load now says something about the run only just after it
    run.update(venv_megabytes=folder_megabytes(args.venv), workers=args.workers, shared_machine=args.shared,
               load_average=[round(x, 2) for x in os.getloadavg()] if fresh else None, cores=os.cpu_count(),
               provenance=provenance(None, None))
    run["tested_commit"] = args.tested_commit or run["provenance"]["commit"]
    result = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": {}}
    result["runs"][args.label] = run
    result["provenance"] = run["provenance"]  # the file's record is its latest run's (each run keeps its own)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({key: run[key] for key in ("wall_seconds", "tests", "skipped", "failed", "venv_megabytes")}))


if __name__ == "__main__":
    main()
