"""The house's measures (#65's must-show), from the source alone: the folder graph (rooms, floors, arrows, arrows
back up and circles), lines per folder, functions over 60 lines and with 8+ parameters, the admin checks written in
ui/, and the public names an interface reaches through `Gallery.services()` (this one opens a gallery in a
temporary folder).

    python benchmarks/house.py --out benchmarks/results/house.json

A room is a folder of facerec/ with the folders inside it (a module at the top, such as settings.py, is a room of
its own); an arrow, a room importing another (any import, inside functions
and under TYPE_CHECKING too); a floor, a step of the longest chain of arrows. An arrow back up is one inside a circle
of rooms."""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_architecture import circles, imports, modules  # noqa: E402 - the graph the house rules are checked on

PACKAGE = ROOT / "facerec"
LONG_FUNCTION_LINES = 60
MANY_PARAMETERS = 8
ADMIN_CHECKS = ("require_admin", "is_admin")


def room_of(path: Path) -> str:
    """A module's room: the folder of facerec/ it is in (with the folders inside it: storage/backends is storage's),
    or, for a module at the package's top (settings.py, errors.py), itself."""
    return str(PACKAGE.relative_to(ROOT) / path.relative_to(PACKAGE).parts[0])


def floors(graph: dict[str, set[str]], cyclic: set[str]) -> int:
    """Steps of the longest chain of arrows (a room that imports nothing is floor 1); rooms in a circle are left out
    of the chain so that it ends."""
    memo: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in memo:
            memo[room] = 1 + max((floor(o) for o in graph[room] if o not in cyclic), default=0)
        return memo[room]

    return max((floor(room) for room in graph if room not in cyclic), default=0)


def measure_source() -> dict:
    known = modules()
    trees = {name: ast.parse(path.read_text()) for name, path in known.items()}
    graph: dict[str, set[str]] = defaultdict(set)
    lines: dict[str, int] = defaultdict(int)
    long_functions, many_parameters, admin_calls = [], [], defaultdict(int)
    for name, path in known.items():
        room = room_of(path)
        graph[room]
        lines[room] += len(path.read_text().splitlines())
        for target in imports(path, known):
            other = room_of(known[target])
            if other != room:
                graph[room].add(other)
        for node in ast.walk(trees[name]):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                length = node.end_lineno - node.lineno + 1
                if length > LONG_FUNCTION_LINES:
                    long_functions.append({"function": where, "lines": length})
                arguments = node.args
                names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
                names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
                count = len([n for n in names if n not in ("self", "cls")])
                if count >= MANY_PARAMETERS:
                    many_parameters.append({"function": where, "parameters": count})
            if (room.startswith("facerec/ui") and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ADMIN_CHECKS):
                admin_calls[str(path.relative_to(ROOT))] += 1
    circle_of = {room: i for i, circle in enumerate(circles(graph)) for room in circle}
    cyclic_rooms = set(circle_of)
    back = sorted(f"{a} -> {b}" for a in graph for b in graph[a] if a in circle_of and circle_of.get(b) == circle_of[a])
    return {"rooms": len(graph), "floors": floors(graph, cyclic_rooms),
            "arrows": sum(len(targets) for targets in graph.values()), "arrows_back": back,
            "circles": circles(graph), "lines_per_folder": dict(sorted(lines.items())),
            "functions_over_60_lines": sorted(long_functions, key=lambda f: -f["lines"]),
            "functions_with_8_or_more_parameters": sorted(many_parameters, key=lambda f: -f["parameters"]),
            "admin_checks_in_ui": {"calls": sum(admin_calls.values()), "modules": dict(sorted(admin_calls.items()))}}


def measure_services() -> dict:
    """The public names of every service `Gallery.services()` hands an interface, split into methods and
    attributes (what `dir` shows of the object, less the underscored)."""
    sys.path.insert(0, str(ROOT))
    import facerec

    found = {}
    with tempfile.TemporaryDirectory() as home, facerec.Gallery.open(home) as gallery:
        services = gallery.services()
        for field in type(services).__dataclass_fields__:
            service = getattr(services, field)
            if field == "settings":
                continue  # the settings record, read by every interface
            names = [n for n in dir(service) if not n.startswith("_")]
            methods = sorted(n for n in names if callable(getattr(type(service), n, None)))
            attributes = sorted(set(names) - set(methods))
            found[field] = {"methods": methods, "attributes": attributes}
    return {"services": found, "methods": sum(len(s["methods"]) for s in found.values()),
            "attributes": sum(len(s["attributes"]) for s in found.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the JSON here (else print it)")
    args = parser.parse_args()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "facerec"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip())
    result = {"source": "with uncommitted changes" if dirty else "as committed", **measure_source(),
              **measure_services()}
    if args.out:
        from facerec.provenance import write_result
        from facerec.settings import Settings

        write_result(args.out, result, Settings().model_path, threads=None)
    summary = {k: (len(v) if isinstance(v, list) else v) for k, v in result.items()
               if k not in ("lines_per_folder", "services", "admin_checks_in_ui")}
    print(json.dumps({**summary, "admin_checks_in_ui": result["admin_checks_in_ui"]["calls"]}))


if __name__ == "__main__":
    main()
