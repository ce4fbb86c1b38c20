"""A photo library grouped in one pass (#66 must-show): groups that are one person, strangers who get a group, no
enrolled person's face in a group, time and memory per 1,000 photos; and a 10,000-photo library killed and resumed.

    python benchmarks/library_grouping.py --data ../shared/data --out benchmarks/results/library_grouping.json

1. Held-out people (the 150 celeba112 identities facerec's network never trained on, `held_out(..., "single")`),
   a seeded third of them enrolled from their first photo (one whose first photo has no usable face stays a
   stranger); the library holds every other photo of all 150 (the
   enrolled people's too, as a family's library holds photos of people already named). `facerec identify LIB/
   --group` runs on it as a user runs it (a subprocess, every core). Read from its files: a group shown is one with
   faces from 2 photos or more, not marked as resembling an enrolled person; it is one person when all its faces
   are; a stranger "gets a group" when a shown group is mostly their photos; an enrolled person's face in a shown
   group is counted. Wall time and the run's peak resident memory (`ru_maxrss` of the child), scaled to 1,000
   photos.
2. 10,000 celeba112 crops of training identities (any photos do) as a library: the run killed after `--kill-after`
   seconds, then run again to the end; how many photos the second run found done, that every photo was answered
   once (the progress file's keys), the two runs' times and peaks.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.cli.library_groups import kept_embedding  # noqa: E402
from facerec.datasets.folders import held_out, list_identities  # noqa: E402
from facerec.library.groups_file import open_groups  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

SEED = 66


def facerec(*args: str, home: Path, timeout: float | None = None) -> tuple[subprocess.CompletedProcess | None, float, float]:
    """Run the CLI; (its result or None when killed at `timeout`, wall seconds, peak resident MB of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # as a power cut or `kill -9` would
        process.communicate()
        done = None
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far (kB)
    if done is not None and done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return done, wall, max(peak, before) / 1024


def grouping(data: Path, scratch: Path) -> dict:
    celeba = list_identities(data / "celeba112")
    people = sorted(held_out(celeba, "single").selection)
    enrolled = set(random.Random(SEED).sample(people, len(people) // 3))
    library, home = scratch / "library", scratch / "home"
    photos = 0
    for person in people:
        (library / person).mkdir(parents=True)
        for photo in celeba[person][1:] if person in enrolled else celeba[person]:
            shutil.copy(photo, library / person / photo.name)
            photos += 1
    from facerec.errors import FaceRecError
    from facerec.gallery import Gallery

    refused = set()
    with Gallery.open(home=home) as gallery:  # as `facerec enroll --force --allow-low-quality` would, one by one
        for person in sorted(enrolled):
            try:
                gallery.enroll(celeba[person][0], person, allow_lookalike=True, allow_low_quality=True)
            except FaceRecError:  # no usable face: a stranger to the gallery, whose first photo the library lacks
                refused.add(person)
    enrolled -= refused
    out = scratch / "out" / "who"
    done, wall, peak = facerec("identify", str(library), "--group", "--out", str(out), "--json", home=home)
    state = json.loads(out.with_name("who.groups.json").read_text())
    shown = dict(open_groups(state["groups"]))  # as the page and `facerec library` show them
    owners = {number: Counter(face["photo"].split("/")[0] for face in group["faces"]) for number, group in shown.items()}
    pure = sum(len(counts) == 1 for counts in owners.values())
    in_library = Counter(path.parent.name for path in library.rglob("*.jpg"))
    strangers = [p for p in people if p not in enrolled and in_library[p] >= 3]
    majority = {counts.most_common(1)[0][0] for counts in owners.values()
                if counts.most_common(1)[0][1] * 2 > sum(counts.values())}
    enrolled_faces = sum(count for counts in owners.values() for person, count in counts.items() if person in enrolled)
    with_cohort_test = _with_cohort_test(out, home, people, enrolled, in_library)
    return {"people": len(people), "enrolled": len(enrolled), "enrollment_refused": len(refused),
            "library_photos": photos,
            "with_the_suggestions_cohort_test": with_cohort_test,
            "faces_grouped": len(state["faces"]), "groups_shown": len(shown), "groups_one_person": pure,
            "share_one_person": round(pure / max(1, len(shown)), 4),
            "strangers_with_3_photos": len(strangers), "strangers_with_a_group": sum(p in majority for p in strangers),
            "share_strangers_with_a_group": round(sum(p in majority for p in strangers) / max(1, len(strangers)), 4),
            "enrolled_faces_in_shown_groups": enrolled_faces,
            "groups_resembling_an_enrolled_person": sum(1 for g in state["groups"].values() if g["resembles"]),
            "seconds": round(wall, 1), "seconds_per_1000_photos": round(wall * 1000 / photos, 1),
            "peak_resident_mb": round(peak)}


def _with_cohort_test(out: Path, home: Path, people: list[str], enrolled: set[str], in_library: Counter) -> dict:
    """The same faces grouped again with the suggestions' second test (each pair's cohort z-score at least MIN_Z),
    the control for leaving it out: groups shown, one person, strangers with a group."""
    import numpy as np

    from facerec.algorithms.grouping import MIN_Z, assign_groups
    from facerec.gallery import Gallery
    from facerec.gallery.suggestions import GROUPING_FAR
    from facerec.openset.model_card import cosine_calibration_for

    faces = [(entry["key"], entry["photo"].split("/")[0], face) for entry in
             map(json.loads, out.with_name("who.progress.jsonl").read_text().splitlines())
             for face in entry.get("unknown", [])]
    embeddings = np.stack([kept_embedding(f) for _k, _o, f in faces])
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    with Gallery.open(home=home) as gallery:
        from facerec.gallery.composition import parts_of

        parts = parts_of(gallery)
        threshold = cosine_calibration_for(parts.settings, parts.policy).threshold_at_far(GROUPING_FAR)
    placed = assign_groups(np.arange(len(faces)), embeddings, -np.ones(len(faces), np.int64), threshold, min_z=MIN_Z)
    members: dict[int, list[int]] = {}
    for row, group in placed.items():
        members.setdefault(group, []).append(row)
    shown = [Counter(faces[m][1] for m in rows) for rows in members.values() if len({faces[m][0] for m in rows}) >= 2]
    strangers = [p for p in people if p not in enrolled and in_library[p] >= 3]
    majority = {c.most_common(1)[0][0] for c in shown if c.most_common(1)[0][1] * 2 > sum(c.values())}
    return {"groups_shown": len(shown), "groups_one_person": sum(len(c) == 1 for c in shown),
            "strangers_with_a_group": sum(p in majority for p in strangers)}


def big_library(data: Path, scratch: Path, size: int, kill_after: float) -> dict:
    celeba = list_identities(data / "celeba112")
    held = held_out(celeba, "single").everyone
    crops = [photo for person, photos in sorted(celeba.items()) if person not in held for photo in photos]
    chosen = random.Random(SEED).sample(crops, min(size, len(crops)))
    library, home = scratch / "big", scratch / "big-home"
    for photo in chosen:
        (library / photo.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(photo, library / photo.parent.name / photo.name)
    out = scratch / "big-out" / "who"
    killed, first_wall, first_peak = facerec("identify", str(library), "--group", "--out", str(out), home=home,
                                             timeout=kill_after)
    lines_before = len(out.with_name("who.progress.jsonl").read_text().splitlines())
    done, wall, peak = facerec("identify", str(library), "--group", "--out", str(out), "--json", home=home)
    answer = json.loads(done.stdout)
    keys = [json.loads(line)["key"] for line in out.with_name("who.progress.jsonl").read_text().splitlines()]
    return {"photos": len(chosen), "killed_after_seconds": kill_after, "killed": killed is None,
            "answered_before_the_kill": lines_before, "second_run_found_done": answer["resumed"],
            "answers_kept": len(keys), "distinct_photos_answered": len(set(keys)),
            "groups_shown": len(answer["groups"]), "first_run_seconds": round(first_wall, 1),
            "second_run_seconds": round(wall, 1), "peak_resident_mb": round(max(first_peak, peak)),
            "photos_per_second": round(len(chosen) / (first_wall + wall), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--kill-after", type=float, default=120.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        first = grouping(args.data, Path(scratch))
        print(json.dumps(first), flush=True)
        second = big_library(args.data, Path(scratch), args.size, args.kill_after)
        print(json.dumps(second), flush=True)
    if args.out:
        write_result(args.out, {"grouping": first, "big_library": second, "cores": os.cpu_count()},
                     Settings().model_path, None)


if __name__ == "__main__":
    main()
