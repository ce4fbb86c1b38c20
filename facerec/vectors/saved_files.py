"""The files a local index is saved in beside the database, and the refusals that protect them.

A saved index is `index.faiss` (the engine's file) and `index.json` (the journal position and model it reflects,
its checksum and the engine's own fields). Saves are durable: each file is written to a temporary name, fsynced,
renamed into place, and the folder fsynced; files are readable by their owner only. A killed save's temporary
file (a full copy of the embeddings) is removed at the next open.

The one case the database does not win: when it is empty, older than the saved index or has another history
(gallery.db deleted, emptied, replaced or restored from a backup), the saved index may be the last copy of the
embeddings, so opening refuses (`UnusableFile`) and touches nothing.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from facerec.errors import UnusableFile
from facerec.storage import Store

INDEX_FILE, INDEX_META_FILE = "index.faiss", "index.json"


def temporary_names(folder: Path) -> tuple[Path, Path]:
    """Where this thread writes a save before renaming it into place."""
    tag = f"{os.getpid()}.{threading.get_ident()}.tmp"
    return folder / f".{INDEX_FILE}.{tag}", folder / f".{INDEX_META_FILE}.{tag}"


def private_empty_file(path: Path) -> None:
    """Create `path` readable by its owner only, before any byte of the embeddings is written to it."""
    os.close(os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600))


def write_private_json(path: Path, data: dict) -> None:
    with open(os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600), "w") as handle:
        handle.write(json.dumps(data))


def replace_durably(tmp: Path, final: Path) -> None:
    fsync(tmp)
    os.replace(tmp, final)


def fsync(path: Path) -> None:
    """Flush a file's (or a folder's: its entries, after a rename) contents to the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def read_meta(folder: Path) -> dict:
    return json.loads((folder / INDEX_META_FILE).read_text())


def saved_face_count(folder: Path) -> int | None:
    """Faces held by the index saved in `folder` (None when there is none, or it cannot be read at all)."""
    try:
        return int(read_meta(folder)["count"])
    except Exception:  # noqa: BLE001 - no usable metadata: ask the index file itself
        pass
    try:
        import faiss

        return int(faiss.read_index(str(folder / INDEX_FILE)).ntotal) if (folder / INDEX_FILE).is_file() else None
    except Exception:  # noqa: BLE001
        return None


def refuse_to_replace_saved_index(folder: Path) -> None:
    """Refuse to start an empty database beside a saved index that holds faces (gallery.db deleted or emptied):
    the index may be the last copy of those embeddings."""
    held = saved_face_count(folder)
    if held:
        raise UnusableFile(
            f"the gallery database in {folder} is missing or empty, but the saved index ({INDEX_FILE}) holds {held} "
            f"faces: restore gallery.db from a backup. Nothing was changed. (To start an empty gallery here on "
            f"purpose, move {INDEX_FILE} and {INDEX_META_FILE} away first.)")


def refuse_foreign_database(folder: Path, store: Store, head: int, meta: dict) -> None:
    """A saved index of this gallery (`meta`, its index.json, passed `facerec.vectors.index_integrity.check_meta`)
    must come from this database's past: not from a newer state (a database restored from a backup, or commits
    lost), nor from another journal. (Another gallery's index, or a damaged index.json, never gets here: it is
    rebuilt.)"""
    seq, recorded = int(meta["seq"]), meta.get("head")
    advice = (f"if that was on purpose, delete {INDEX_FILE} and {INDEX_META_FILE} in {folder} to rebuild the index "
              "from this database; otherwise put the right gallery.db back. Nothing was changed.")
    if seq > head:
        raise UnusableFile(f"the gallery database is older than its saved index (journal at {head}, index saved at "
                           f"{seq}): gallery.db was replaced, restored from a backup or lost commits; {advice}")
    if recorded and seq and store.journal.entry(seq) != (str(recorded[0]), int(recorded[1])):
        raise UnusableFile(f"the gallery database's journal differs from the one its saved index was made from "
                           f"(entry {seq}): gallery.db was replaced by another gallery's database; {advice}")


def refuse_non_files(folder: Path) -> None:
    """index.faiss / index.json must be files (or absent): a folder of that name would fail every save."""
    for name in (INDEX_FILE, INDEX_META_FILE):
        path = folder / name
        if path.exists() and not path.is_file():
            raise UnusableFile(f"{path} is not a file (a folder?): move it out of the way; the index is rebuilt "
                               "from the database")


def remove_stale_temp_files(folder: Path) -> None:
    """Delete the temp files of saves that a killed process never finished (`.index.faiss.<pid>.<thread>.tmp`:
    each a full copy of the embeddings, which would outlive every deletion); a live process's are left alone."""
    for path in folder.glob(f".{INDEX_FILE[:5]}*.tmp"):
        parts = path.name.split(".")
        if len(parts) < 4 or not parts[-3].isdigit() or _process_alive(int(parts[-3])):
            continue
        path.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or not a pid at all: leave the file
    return True


def reason(error: BaseException) -> str:
    """Why a saved index could not be used, in a few words."""
    if isinstance(error, FileNotFoundError):
        return f"{Path(error.filename or INDEX_META_FILE).name} is missing"
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:160]
