"""The test suite's own cost (#51): the README's test command's wall time, the venv, and what takes the time."""

from __future__ import annotations

from result_blocks.common import cpu_text, load


def test_suite_block() -> str:
    """Every recorded run of the suite, then the slowest files and tests of the last one (benchmarks/test_suite.py)."""
    result = load("test_suite")
    if not result:
        return ("(not measured yet: `PYTEST_ADDOPTS=--junitxml=/tmp/suite.xml CI=true bash .ci/run`, then "
                "`python benchmarks/test_suite.py --junit /tmp/suite.xml --label after`)")
    rows = [("| run | commit tested | workers | pytest's wall time | tests (skipped, failed) | the tests' own time, "
            "summed | test venv | machine |"), "|---|---|---|---|---|---|---|---|"]
    for label, run in result["runs"].items():
        workers = "one process" if not run["workers"] else f"{run['workers']} (pytest-xdist)"
        machine = "shared with other work" if run["shared_machine"] else "quiet"
        if run.get("load_average"):
            machine += f" (load average {run['load_average'][0]:.1f} at the end)"
        rows.append(f"| {label} | `{run['tested_commit'][:8]}` | {workers} | **{run['wall_seconds'] / 60:.1f} min** | "
                    f"{run['tests']} ({run['skipped']}, {run['failed']}) | {run['test_seconds'] / 60:.1f} min | "
                    f"{run['venv_megabytes'] / 1024:.1f} GB | {cpu_text(run)}, {run['cores']} cores, {machine} |")
    label, last = list(result["runs"].items())[-1]
    files = ", ".join(f"`{name}` {seconds:.0f} s" for name, seconds in last["slowest_files"][:8])
    tests = "; ".join(f"`{name.split('::')[1]}` ({name.split('::')[0].removeprefix('tests/')}) {seconds:.0f} s"
                      for name, seconds in last["slowest_tests"][:6])
    return ("\n".join(rows) + f"\n\nWhere the time goes in the run '{label}', by file: {files}. The slowest tests: "
            f"{tests}.")
