"""`facerec identify DIR/ --group`: a library's unknown faces grouped into people, and `facerec library
name|add|dismiss OUT GROUP`: what an admin does with a group (#66 items 1-2).

With `--group` the library run keeps, for each face of a photo nobody enrolled matches, its embedding (float16),
its box and its best enrolled candidate in the run's progress file (`OUT.progress.jsonl`, owner only), and at the
end groups them (`facerec.gallery.library_groups`, the suggested people's rule). `OUT.groups.json` holds the
groups: each one's faces (file and box), its most typical faces first, the enrolled person it resembles when most
of its faces are nearest to one (those are that person's missed photos, not a new person), and whether it was named
or dismissed. A second run passes the groups found before, so a group keeps its number and only new or changed
files' faces are placed. A video's unknown tracks are grouped too (by their pooled views); naming a group enrolls
from its photos only.

Running with `--group` is the operator's opt-in to keeping faces of people who are not enrolled, as the strangers
memory is: an embedding is kept at most `KEEP_DAYS` days (a photo answered longer ago is identified again), and
only in the run's own files. At most `MAX_FACES` faces are grouped (their embeddings, 1 KiB each, are in memory
while grouping: 200 MB at the bound).

Naming, adding and dismissing a group: `facerec.library.groups_file` (the REST API and the page do the same).
"""

from __future__ import annotations

import argparse
import base64
import time
from pathlib import Path

import numpy as np

from facerec.cli.output import emit, open_gallery
from facerec.errors import InvalidArgument
from facerec.library.groups_file import KEEP_DAYS, STATE_VERSION, GroupsFile

MAX_FACES = 200_000


def register(command, sub, common: argparse.ArgumentParser) -> None:
    """Add `facerec library` to the `facerec` parser (`--group` itself is an option of `facerec identify`)."""
    p = command("library", cmd_library, "a grouped library run's groups of people not enrolled (`facerec identify "
                "DIR/ --group --out OUT`): name one (enrolls the person from its faces), add one to an enrolled "
                "person, or dismiss one")
    p.add_argument("action", choices=["name", "add", "dismiss"])
    p.add_argument("out", help="the library run's --out (its OUT.groups.json)")
    p.add_argument("group", type=int, help="the group's number")
    p.add_argument("name", nargs="?", help="the person's name (name: a new person; add: an enrolled one)")


def kept_unknown(numbered: list[tuple[int, object, np.ndarray | None]]) -> dict:
    """The fields a grouped run adds to one file's answer: its unknown faces (`unknown_faces`) and when (`at`)."""
    return {"unknown": unknown_faces(numbered), "at": time.time()}


def unknown_faces(numbered: list[tuple[int, object, np.ndarray | None]]) -> list[dict]:
    """What a library run keeps of each unknown face of one file, from (its number in the answer, its `FaceMatch`,
    its embedding: a photo face's own, a video track's pooled views): the embedding, the best enrolled candidate and
    that cosine."""
    kept = []
    for number, match, embedding in numbered:
        if match.name is not None or embedding is None:
            continue
        best = match.candidates[0] if match.candidates else None
        kept.append({"face": number, "embedding": base64.b64encode(
            np.asarray(embedding, np.float16).tobytes()).decode("ascii"),
            "nearest": best.name if best else None, "nearest_similarity": float(best.similarity) if best else -1.0})
    return kept


def kept_embedding(face: dict) -> np.ndarray:
    """An unknown face's embedding as `unknown_faces` keeps it (float16, base64), as float32 (not re-normalised)."""
    return np.frombuffer(base64.b64decode(face["embedding"]), np.float16).astype(np.float32)


def still_kept(entry: dict) -> bool:
    """Whether an answer kept serves a grouped run as it is: a file that could not be used (nothing to group), or
    one whose unknown faces were kept, not longer ago than KEEP_DAYS."""
    return bool(entry.get("problem")) or ("unknown" in entry and time.time() - entry.get("at", 0) <= KEEP_DAYS * 86_400)


def without_expired(entries: list[dict]) -> list[dict]:
    """The answers as the progress file keeps them: an unknown face's embedding dropped once KEEP_DAYS old."""
    return [entry if still_kept(entry) or "unknown" not in entry
            else {key: value for key, value in entry.items() if key not in ("unknown", "at")} for entry in entries]


def who_where(photos: list[dict]) -> dict:
    """A grouped run's index: each enrolled person's and each group's files and face boxes."""
    people: dict[str, list] = {}
    groups: dict[str, list] = {}
    for photo in photos:
        for face in photo["faces"]:
            place = {"photo": photo["photo"], "box": face["box"]}
            if face.get("known"):
                people.setdefault(face["name"], []).append(place)
            elif face.get("group") is not None:
                groups.setdefault(str(face["group"]), []).append(place)
    return {"people": people, "groups": groups}


def group_library(gallery, folder: Path, out: Path, entries: list[dict]) -> tuple[dict[str, int], dict]:
    """Group every kept unknown face of `entries` (the run's answers), keeping the groups found before; write
    OUT.groups.json; return ({face key: group} for the outputs, the groups as written). The groups file is held
    from its read to its write, so a group named or dismissed meanwhile (the page, REST) waits and is kept."""
    with GroupsFile(out).locked():
        return _grouped(gallery, folder, out, entries)


def _grouped(gallery, folder: Path, out: Path, entries: list[dict]) -> tuple[dict[str, int], dict]:
    state = GroupsFile(out).read()
    keys, vectors, nearest = [], [], []
    for entry in entries:
        for face in entry.get("unknown", []):
            keys.append(f"{entry['key']}#{face['face']}")
            vectors.append(kept_embedding(face))
            nearest.append((face["nearest"], face["nearest_similarity"]))
    if len(keys) > MAX_FACES:
        raise InvalidArgument(f"{len(keys):,} unknown faces are more than the {MAX_FACES:,} a library run groups; "
                              "group its folders one at a time")
    if not keys:
        return {}, _write_state(out, folder, state, {}, [], {}, {}, np.zeros(0), {})
    embeddings = np.stack(vectors)
    embeddings /= np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    before = np.array([int(state["faces"].get(key, -1)) for key in keys], np.int64)
    grouping = gallery.services().library.group(embeddings, before, nearest)
    labels = {key: int(label) for key, label in zip(keys, grouping.labels)}
    where = {f"{entry['key']}#{face['face']}": (entry["photo"], face["box"])
             for entry in entries for face in entry["faces"]}
    return labels, _write_state(out, folder, state, labels, keys, where, grouping.resembles, grouping.typical,
                                grouping.closest)


def _write_state(out: Path, folder: Path, state: dict, labels: dict[str, int], keys: list[str],
                 where: dict[str, tuple], resembles: dict[int, str], typical: np.ndarray,
                 closest: dict[int, tuple[str, float]]) -> dict:
    members: dict[int, list[tuple[float, str]]] = {}
    for key, value in zip(keys, typical):
        members.setdefault(labels[key], []).append((float(value), key))
    groups = {}
    for group, faces in sorted(members.items()):
        earlier = state["groups"].get(str(group), {})
        ordered = [key for _value, key in sorted(faces, key=lambda item: -item[0])]
        groups[str(group)] = {
            "faces": [{"photo": where[key][0], "box": where[key][1], "key": key} for key in ordered],
            "photos": len({where[key][0] for key in ordered}), "resembles": resembles.get(group),
            "closest_enrolled": list(closest[group]) if group in closest else None,
            "status": earlier.get("status", "open"), "named": earlier.get("named")}
    GroupsFile(out).save({"version": STATE_VERSION, "folder": str(folder.resolve()), "faces": labels,
                          "groups": groups})
    return groups


def cmd_library(args) -> int:
    """`facerec library name|add|dismiss OUT GROUP [NAME]`."""
    groups = GroupsFile(Path(args.out))
    groups.group(args.group)  # one line when the run has no such group
    if args.action == "dismiss":
        groups.dismiss(args.group)
        emit(args, {"group": args.group, "status": "dismissed"}, text=f"group {args.group} dismissed")
        return 0
    if not args.name:
        raise InvalidArgument(f"`facerec library {args.action} OUT GROUP NAME` needs the person's name")
    with open_gallery(args) as gallery:
        outcomes = groups.take(gallery, args.group, args.name, new_person=args.action == "name")
    taken = [o for o in outcomes if o["outcome"] in ("enrolled", "added")]
    emit(args, {"group": args.group, "name": args.name, "faces": outcomes},
         [[o["photo"], o["outcome"]] for o in outcomes], ["photo", "outcome"],
         text=f"group {args.group}: {len(taken)} face(s) of {args.name} taken from {len(outcomes)} tried")
    return 0 if taken else 1


def private_copy(entry: dict) -> dict:
    """An answer as the outputs show it: without the kept embeddings."""
    return {key: value for key, value in entry.items() if key not in ("key", "unknown", "at")}

