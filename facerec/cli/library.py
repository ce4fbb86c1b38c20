"""`facerec identify DIR/`: a photo library at once, who is in which photo (and video).

Every image file under DIR (JPEG, PNG, WebP, BMP, by extension; subfolders included, in path order) is identified
as `facerec identify` does one photo, and every video (`facerec.library.files.VIDEO_SUFFIXES`) as it does one video
(a row per face followed, with its seconds on screen; the video's own bounds, `facerec.video.decode`), on `--workers` threads (default: every core; decoding, detection and the
model release Python's lock). Each answer is appended to `<out>.progress.jsonl` as soon as it is known, so an
interrupted run started again with the same `--out` skips the photos already answered (a file whose size or
modification time changed since is identified again). At the end `<out>.csv` (one row per face, or per photo
without a face or with an error) and `<out>.json` are written, readable by their owner only: they say who is in
which photo. A file that is not a usable photo is one row with its one-line reason; nothing stops the walk.

One vocabulary in both files (#51 row 10): a face has the same fields in the JSON as columns in the CSV
(`FACE_FIELDS`), with the words `facerec identify --json` uses for one photo: `name` "unknown" and `known` false
for a face nobody enrolled matches, the `score` the decision compared, and the `sighting_id` a named face was kept
as (for `facerec sightings confirm|correct|reject`). The CSV writes each JSON value as it is (null as an empty
cell, true/false as JSON spells them, the box as four numbers).

Bounded and contained (#48 row 9): a file's size and first bytes are checked before it is read (at most
MAX_PHOTO_BYTES; JPEG, PNG, WebP or BMP by its header, not its name), so a huge or sparse file costs nothing; a link
is followed only to a file inside the folder, never out of it, and never onto an output; the outputs are written to
a new owner-only file renamed over the old one, so a link at their name is replaced, not written through, and an
existing file's looser mode goes with it; a cell that would start a formula after a comma or a semicolon is written
as text, whichever separator the spreadsheet splits on.
"""

from __future__ import annotations

import csv
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from facerec.cli.library_groups import (
    group_library,
    kept_unknown,
    private_copy,
    still_kept,
    who_where,
    without_expired,
)
from facerec.cli.output import emit, open_gallery, progress_bar
from facerec.cli.video import video_entry
from facerec.errors import FaceRecError, InvalidArgument
from facerec.library.files import is_video, library_files, photo_bytes, replacing
from facerec.library.groups_file import GroupsFile, open_groups
from facerec.words.phrasing import one_line

FACE_FIELDS = ["face", "name", "known", "similarity", "score", "box", "sighting_id"]  # of each face, in both files
VIDEO_FACE_FIELDS = {"first_time", "last_time", "frames_seen"}  # a video's track also says when it was on screen
CSV_HEADERS = ["photo", *FACE_FIELDS, "problem", "seconds"]  # face: a video's track; seconds: when it was on screen
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run such a cell as a formula
NUMBER = re.compile(r"-?\d+(\.\d+)?")  # ... unless it is a plain number (a negative score), which it reads as one


def identify_folder(args) -> int:
    folder = Path(args.photo)
    out = Path(args.out or "facerec-identified")
    progress = out.with_name(out.name + ".progress.jsonl")
    outputs = {progress, out.with_name(out.name + ".csv"), out.with_name(out.name + ".json")}
    skipped: dict[str, int] = {}
    keys = library_files(folder, outputs, skipped)
    photos = sorted(keys)
    if not photos:
        raise InvalidArgument(f"no photos (JPEG, PNG, WebP or BMP files) or videos under {folder}")
    done = _answered(progress)
    group = getattr(args, "group", False)
    pending = [path for path in photos if keys[path] not in done
               or (group and not still_kept(done[keys[path]]))]
    lock = threading.Lock()
    with open_gallery(args) as gallery:
        if group and not gallery.services().settings.store_crops:  # before any file is written
            raise InvalidArgument("privacy mode (FACEREC_STORE_CROPS=off) keeps no faces of people not enrolled: "
                                  "--group is refused; run without it, or outside privacy mode")
        with _private_append(progress) as log, progress_bar(len(pending), "identifying") as bar:

            def answer(path: Path) -> None:
                entry = _identified(gallery, folder, path, keys[path], args.top_k, group)
                with lock:
                    log.write(json.dumps(entry) + "\n")
                    log.flush()
                    done[entry["key"]] = entry
                    bar.update(1)

            with ThreadPoolExecutor(max(1, args.workers or os.cpu_count() or 1)) as pool:
                list(pool.map(answer, pending))
            entries = [done[keys[path]] for path in photos]
            labels, groups = group_library(gallery, folder, out, entries) if group else (None, {})
    if any("unknown" in entry for entry in done.values()):  # embeddings of strangers kept: only current, unexpired
        with replacing(progress) as handle:
            handle.writelines(json.dumps(entry) + "\n" for entry in without_expired(entries))
    write_outputs(out, entries, labels)
    faces = sum(len(entry["faces"]) for entry in entries)
    named = sorted({face["name"] for entry in entries for face in entry["faces"] if face["known"]})
    problems = [entry for entry in entries if entry["problem"]]
    text = (f"{len(photos)} photo(s) ({len(photos) - len(pending)} already done before), {faces} face(s), "
            f"{len(named)} enrolled people seen, {len(problems)} problem(s); wrote {out}.csv and {out}.json "
            f"(answers as they came: {progress.name})")
    if skipped:
        text += "; skipped " + ", ".join(f"{count} {why}" for why, count in sorted(skipped.items()))
    shown = open_groups(groups)
    if group:
        text += (f"; {len(shown)} group(s) of people not enrolled ({sum(len(g['faces']) for _, g in shown)} faces) "
                 f"in {GroupsFile(out).path.name}: `facerec library name {out} GROUP NAME` enrolls one")
    emit(args, {"photos": len(photos), "resumed": len(photos) - len(pending), "faces": faces, "people": named,
                "problems": [{"photo": e["photo"], "problem": e["problem"]} for e in problems], "skipped": skipped,
                "progress": str(progress),
                "csv": f"{out}.csv", "json": f"{out}.json",
                **({"groups": [{"group": number, "faces": len(g["faces"]), "photos": g["photos"]} for number, g in shown],
                    "groups_file": str(GroupsFile(out).path)} if group else {})}, text=text)
    return 0


def _identified(gallery, folder: Path, path: Path, key: str, top_k: int, group: bool = False) -> dict:
    """One photo's answer as the outputs keep it (a usable photo's faces, or its one-line problem); with `group`,
    also its unknown faces' embeddings for grouping (`facerec.cli.library_groups`), never in the outputs."""
    entry = {"key": key, "photo": str(path.relative_to(folder)), "faces": [], "faces_found": 0,
             "problem": None}
    try:
        if is_video(path):
            keep = (lambda answer: kept_unknown([(t.track.id, t.match, t.track.pooled) for t in answer.tracks])) \
                if group else None
            return {**video_entry(gallery, path, str(path.relative_to(folder)), top_k, keep), "key": key}
        matches = gallery.identify(photo_bytes(path), top_k=top_k)
        entry["faces_found"] = matches.found
        entry["faces"] = [_face_fields(number, match.to_dict()) for number, match in enumerate(matches)]
        if group:
            entry.update(kept_unknown([(n, match, match.embedding) for n, match in enumerate(matches)]))
    except (FaceRecError, OSError) as error:  # not a photo, no face, gone meanwhile: one line, and on to the next
        entry["problem"] = one_line(error)
    return entry


def _face_fields(number: int, answer: dict) -> dict:
    """One face of a photo, as both files keep it (`FACE_FIELDS`): the fields of `facerec identify --json`'s
    answer (`IdentifyResult.to_dict`) that say who it is, with the face's number and its box in whole pixels."""
    return {"face": number, "name": answer["name"], "known": answer["known"], "similarity": answer["similarity"],
            "score": answer["score"], "box": [round(v) for v in answer["face"]["box"]],
            "sighting_id": answer.get("sighting_id")}


def _answered(progress: Path) -> dict[str, dict]:
    """The answers an earlier run kept (a last line cut short by an interruption is left out, and so is an answer
    kept by an older facerec with other fields: that photo is identified again)."""
    found: dict[str, dict] = {}
    if progress.is_file():
        for line in progress.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
                fields = set(FACE_FIELDS) | (VIDEO_FACE_FIELDS if entry.get("video") else set())
                if all(set(face) == fields for face in entry["faces"]):  # else: an older run's words
                    found[entry["key"]] = entry
            except (ValueError, KeyError, TypeError):
                continue
    return found


def _private_append(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")


def write_outputs(out: Path, entries: list[dict], groups: dict[str, int] | None = None) -> None:
    """OUT.csv (one row per face or track, or per file without one) and OUT.json, each replacing the old whole.
    `groups`: a grouped run's group of each unknown face (by "<entry key>#<face>"), a `group` column and field."""
    rows, photos = [], []
    for entry in entries:
        shown = private_copy(entry)
        if groups is not None:
            shown["faces"] = [{**face, "group": groups.get(f"{entry['key']}#{face['face']}")}
                              for face in entry["faces"]]
        photos.append(shown)
        for face in shown["faces"] or [None]:
            cells = ["" if face is None else _csv_value(face.get(field)) for field in FACE_FIELDS]
            seconds = "" if face is None or "first_time" not in face else \
                f"{face['first_time']:.2f}-{face['last_time']:.2f}"
            grouped = [] if groups is None else ["" if face is None else _csv_value(face.get("group"))]
            rows.append([entry["photo"], *cells, entry["problem"] or ("" if entry["faces"] else "no face found"),
                         seconds, *grouped])
    with replacing(Path(f"{out}.csv"), newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_HEADERS + ([] if groups is None else ["group"]))
        writer.writerows([[_cell(value) for value in row] for row in rows])
    with replacing(Path(f"{out}.json")) as handle:
        json.dump({"photos": photos, **({} if groups is None else who_where(photos))}, handle, indent=1,
                  ensure_ascii=True)


def _csv_value(value) -> str:
    """A JSON value as the CSV writes it: null as an empty cell, true/false as JSON spells them, a box as its four
    numbers, anything else as the JSON has it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(map(str, value))
    return str(value)


def _cell(value) -> str:
    """A CSV cell a spreadsheet shows as text, whether it splits rows on commas or on semicolons: every piece of
    the cell that would start a formula after such a separator (or at its start) gets a leading apostrophe; a
    plain number ("-0.804") stays a number."""
    pieces = re.split(r"([,;])", str(value))
    return "".join("'" + piece if piece.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(piece) else piece
                   for piece in pieces)
