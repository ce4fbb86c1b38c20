"""Why an enrolled person's missed photos still form groups in a grouped library (#66's "no enrolled person's face
left in a group"): could any rule on a group's pooled evidence mark them without hiding strangers' groups?

    python benchmarks/library_missed_groups.py --data ../shared/data --out benchmarks/results/library_missed_groups.json

The library of `benchmarks/library_grouping.py` (the same held-out people, the same third enrolled, the same
`facerec identify LIB/ --group` run). Each group shown is pooled as a video's track is (the mean of its faces'
unit embeddings, normalised) and searched in the gallery: its best enrolled candidate and the normalised score
every decision uses. A group is an enrolled person's when most of its faces are theirs, else a stranger's.
Reported: how many of the enrolled people's groups have that person as their pooled best candidate at all, their
pooled scores beside the strangers' groups' best scores, and, for each cut on the pooled score (marking every
group at or above it as an enrolled person's missed photos), the enrolled people's faces left in a group shown,
the strangers' groups hidden, and the strangers with 3+ photos who keep a group (the issue asks at least 80%).
Measurement only: nothing is chosen here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from library_grouping import grouping  # noqa: E402

from facerec.cli.library_groups import kept_embedding  # noqa: E402
from facerec.datasets.folders import held_out, list_identities  # noqa: E402
from facerec.library.groups_file import open_groups  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

CUTS = (6.0, 5.5, 5.0, 4.5, 4.0, 3.5, 3.0, 2.5, 2.0)  # pooled normalised scores tried as the marking cut


def pooled_groups(scratch: Path) -> tuple[list[dict], set[str]]:
    """(each group shown: its faces' owners (from the folders) and its pooled embedding's best enrolled candidate;
    the people enrolled)."""
    from facerec.gallery import Gallery
    from facerec.gallery.composition import parts_of

    out = scratch / "out"
    state = json.loads((out / "who.groups.json").read_text())
    embeddings = {}
    for entry in map(json.loads, (out / "who.progress.jsonl").read_text().splitlines()):
        for face in entry.get("unknown", []):
            vector = kept_embedding(face)
            embeddings[f"{entry['key']}#{face['face']}"] = vector / np.linalg.norm(vector)
    groups = []
    with Gallery.open(home=scratch / "home") as gallery:
        searching, enrolled = parts_of(gallery).searching, {person.name for person in gallery.people()}
        for _number, group in open_groups(state["groups"]):  # the groups shown, as library_grouping counts them
            pooled = np.mean([embeddings[face["key"]] for face in group["faces"]], axis=0)
            pooled /= np.linalg.norm(pooled)
            best = (searching.search(pooled[None], top_k=1)[0] or [None])[0]
            groups.append({"owners": Counter(face["photo"].split("/")[0] for face in group["faces"]),
                           "best": best.name if best else None, "score": best.score if best else float("-inf")})
    return groups, enrolled


def measured(groups: list[dict], enrolled: set[str], strangers: list[str]) -> dict:
    def owner(group: dict) -> str:
        return group["owners"].most_common(1)[0][0]

    def keep_a_group(shown: list[dict]) -> int:
        majority = {owner(g) for g in shown if g["owners"].most_common(1)[0][1] * 2 > sum(g["owners"].values())}
        return sum(person in majority for person in strangers)

    theirs = [g for g in groups if owner(g) in enrolled]
    others = [g for g in groups if owner(g) not in enrolled]
    cuts = []
    for cut in CUTS:
        shown = [g for g in groups if g["score"] < cut]
        cuts.append({"cut": cut,
                     "enrolled_groups_marked": sum(g["score"] >= cut for g in theirs),
                     "enrolled_faces_left": sum(n for g in shown for p, n in g["owners"].items() if p in enrolled),
                     "strangers_groups_hidden": sum(g["score"] >= cut for g in others),
                     "strangers_keeping_a_group": keep_a_group(shown)})
    scores = sorted((g["score"] for g in others), reverse=True)
    return {"groups_shown": len(groups), "enrolled_groups": len(theirs),
            "enrolled_faces": sum(n for g in groups for p, n in g["owners"].items() if p in enrolled),
            "enrolled_groups_nearest_their_own_person": sum(g["best"] == owner(g) for g in theirs),
            "enrolled_groups_pooled_scores": sorted((round(g["score"], 2) for g in theirs), reverse=True),
            "strangers_groups": len(others), "strangers_groups_top_scores": [round(s, 2) for s in scores[:10]],
            "strangers_with_3_photos": len(strangers), "strangers_keeping_a_group_uncut": keep_a_group(groups),
            "cuts": cuts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    celeba = list_identities(args.data / "celeba112")
    people = sorted(held_out(celeba, "single").selection)
    with tempfile.TemporaryDirectory() as scratch:
        grouping(args.data, Path(scratch))
        groups, enrolled = pooled_groups(Path(scratch))
        in_library = Counter(path.parent.name for path in (Path(scratch) / "library").rglob("*.jpg"))
        strangers = [p for p in people if p not in enrolled and in_library[p] >= 3]
        result = measured(groups, enrolled, strangers)
    print(json.dumps(result), flush=True)
    if args.out:
        write_result(args.out, {**result, "cores": os.cpu_count()}, Settings().model_path, None)


if __name__ == "__main__":
    main()
