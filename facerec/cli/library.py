"""`facerec identify DIR/`: a photo library at once, who is in which photo.

Every image file under DIR (JPEG, PNG, WebP, BMP, by extension; subfolders included, in path order) is identified
as `facerec identify` does one photo, on `--workers` threads (default: every core; decoding, detection and the
model release Python's lock). Each answer is appended to `<out>.progress.jsonl` as soon as it is known, so an
interrupted run started again with the same `--out` skips the photos already answered (a file whose size or
modification time changed since is identified again). At the end `<out>.csv` (one row per face, or per photo
without a face or with an error) and `<out>.json` are written, readable by their owner only: they say who is in
which photo. A file that is not a usable photo is one row with its one-line reason; nothing stops the walk.
"""

from __future__ import annotations

import csv
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from facerec.cli.output import emit, open_gallery, progress_bar
from facerec.errors import FaceRecError, InvalidArgument

PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".bmp"}
CSV_HEADERS = ["photo", "face", "name", "similarity", "box", "problem"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run such a cell as a formula


def identify_folder(args) -> int:
    folder = Path(args.photo)
    out = Path(args.out)
    progress = out.with_name(out.name + ".progress.jsonl")
    keys = _photo_keys(folder)
    photos = sorted(keys)
    if not photos:
        raise InvalidArgument(f"no photos (JPEG, PNG, WebP or BMP files) under {folder}")
    done = _answered(progress)
    pending = [path for path in photos if keys[path] not in done]
    lock = threading.Lock()
    with open_gallery(args) as gallery, _private_append(progress) as log, \
            progress_bar(len(pending), "identifying") as bar:

        def answer(path: Path) -> None:
            entry = _identified(gallery, folder, path, keys[path], args.top_k)
            with lock:
                log.write(json.dumps(entry) + "\n")
                log.flush()
                done[entry["key"]] = entry
                bar.update(1)

        with ThreadPoolExecutor(max(1, args.workers or os.cpu_count() or 1)) as pool:
            list(pool.map(answer, pending))
    entries = [done[keys[path]] for path in photos]
    _write_outputs(out, entries)
    faces = sum(len(entry["faces"]) for entry in entries)
    named = sorted({face["name"] for entry in entries for face in entry["faces"] if face["name"]})
    problems = [entry for entry in entries if entry["problem"]]
    text = (f"{len(photos)} photo(s) ({len(photos) - len(pending)} already done before), {faces} face(s), "
            f"{len(named)} enrolled people seen, {len(problems)} problem(s); wrote {out}.csv and {out}.json")
    emit(args, {"photos": len(photos), "resumed": len(photos) - len(pending), "faces": faces, "people": named,
                "problems": [{"photo": e["photo"], "problem": e["problem"]} for e in problems],
                "csv": f"{out}.csv", "json": f"{out}.json"}, text=text)
    return 0


def _identified(gallery, folder: Path, path: Path, key: str, top_k: int) -> dict:
    """One photo's answer as the outputs keep it (a usable photo's faces, or its one-line problem)."""
    entry = {"key": key, "photo": str(path.relative_to(folder)), "faces": [], "faces_found": 0,
             "problem": None}
    try:
        matches = gallery.identify(path, top_k=top_k)
        entry["faces_found"] = matches.found
        entry["faces"] = [{"face": number, "name": match.name, "similarity": None if match.similarity is None
                           else round(match.similarity, 4), "box": [round(v) for v in match.face.box]}
                          for number, match in enumerate(matches)]
    except (FaceRecError, OSError) as error:  # not a photo, no face, gone meanwhile: one line, and on to the next
        entry["problem"] = " ".join(str(error).split())[:300]
    return entry


def _photo_keys(folder: Path) -> dict[Path, str]:
    """Every photo file under `folder`, with which file it is as it is now: its path under the folder, its size
    and its modification time (a file gone while the folder is listed is left out)."""
    keys = {}
    for path in folder.rglob("*"):
        try:
            if path.suffix.lower() in PHOTO_SUFFIXES and path.is_file():
                stat = path.stat()
                keys[path] = f"{path.relative_to(folder)}|{stat.st_size}|{stat.st_mtime_ns}"
        except OSError:
            continue
    return keys


def _answered(progress: Path) -> dict[str, dict]:
    """The answers an earlier run kept (a last line cut short by an interruption is left out)."""
    found: dict[str, dict] = {}
    if progress.is_file():
        for line in progress.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
                found[entry["key"]] = entry
            except (ValueError, KeyError, TypeError):
                continue
    return found


def _private_append(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")


def _write_outputs(out: Path, entries: list[dict]) -> None:
    rows = []
    for entry in entries:
        for face in entry["faces"] or [None]:
            rows.append([entry["photo"], "" if face is None else face["face"],
                         "" if face is None else (face["name"] or "unknown"),
                         "" if face is None or face["similarity"] is None else f"{face['similarity']:.3f}",
                         "" if face is None else " ".join(map(str, face["box"])),
                         entry["problem"] or ("" if entry["faces"] else "no face found")])
    with os.fdopen(os.open(f"{out}.csv", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", newline="",
                   encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_HEADERS)
        writer.writerows([[_cell(value) for value in row] for row in rows])
    photos = [{key: value for key, value in entry.items() if key != "key"} for entry in entries]
    with os.fdopen(os.open(f"{out}.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                   encoding="utf-8") as handle:
        json.dump({"photos": photos}, handle, indent=1, ensure_ascii=True)


def _cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: one starting like a formula gets a leading apostrophe."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
