"""FAISS search over the gallery's unit-length embeddings, keyed by the database's face ids.

- `flat` (default): `IndexIDMap2(IndexFlatIP)`, exact inner-product (= cosine) search. FAISS scans the database
  with one thread when there are fewer than 20 queries (one photo's faces), so for large galleries the scan is
  done as one BLAS matrix product over FAISS's own vector storage, which uses every core: same vectors, same
  exact scores, about twice as fast on two cores (`benchmarks/scale.py`).
- `flat16`: the same exhaustive search over vectors stored as float16: half the memory, similarities off by at
  most ~1e-3.
- `hnsw`: approximate, for large galleries: an HNSW graph over the gallery's principal subspace whose candidates
  are re-scored exactly (`facerec.vectors.hnsw`; recall measured in `benchmarks/scale.py`). A graph cannot delete, and
  rebuilding one of a million faces takes minutes, so a removed face becomes a tombstone: still in the graph
  (searches walk through it), never returned (a FAISS id selector filters it out), saved with the index. Once
  tombstones pass `TOMBSTONE_FRACTION` of the graph it is rebuilt from the database.

The index is a cache of the database. It is saved as `index.faiss` with `index.json` recording the journal
sequence (and the journal row there) and model it reflects; `FaceIndex.open` replays the journal after that point,
and rebuilds from the database when the file is missing, unreadable, for another model, or disagrees with the
face count, saying so in `notice` (a rebuild of a large gallery takes minutes). A rebuild fills the new index
without holding the lock, so searches go on meanwhile, then swaps it in and replays whatever was committed while
it was being built.

The one case the database does not win: when it is empty, older than the saved index or has another history
(gallery.db deleted, emptied, replaced or restored from a backup), the saved index may be the last copy of the
embeddings, so `open` refuses (`UnusableFile`) and touches nothing. Saves are durable: each file is written to a
temporary name, fsynced, renamed into place, and the folder fsynced; files are readable by their owner only.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from facerec.errors import UnusableFile
from facerec.provenance import file_sha256
from facerec.storage import Store
from facerec.vectors import index_integrity as integrity
from facerec.vectors.base import VectorIndex
from facerec.vectors.hnsw import PROJECTION_MIN_FACES, is_graph_index, new_graph_index, search_parameters

INDEX_FILE, INDEX_META_FILE = "index.faiss", "index.json"
INDEX_KINDS = ("flat", "flat16", "hnsw")
# Below this many vectors (4 MB) FAISS's own single-threaded scan takes well under a millisecond.
PARALLEL_SCAN_MIN = 2048
# From this many queries on FAISS itself multiplies in BLAS blocks, on every core and in bounded memory.
FAISS_BLAS_QUERIES = 20
TOMBSTONE_FRACTION = 0.1
# A gallery's index is saved after this many of its process's writes (and on close): a crash costs a journal
# replay of at most that many writes, not a rebuild.
SAVE_INDEX_EVERY = 50


class FaceIndex(VectorIndex):
    def __init__(self, kind: str = "flat", dimension: int = 512, hnsw_m: int = 32, ef_search: int = 256) -> None:
        if kind not in INDEX_KINDS:
            raise ValueError(f"index kind must be one of {', '.join(INDEX_KINDS)}")
        self.kind, self.dimension, self.hnsw_m, self.ef_search = kind, dimension, hnsw_m, ef_search
        self.seq = 0  # journal sequence this index reflects
        self.lock = threading.RLock()
        self._index = self._empty()
        self._tombstones: set[int] = set()  # HNSW only: removed face ids still in the graph
        self._selector = None  # FAISS selector excluding the tombstones (with the objects it points to)
        self._built_for = 0  # faces held when the index was last built from the database
        self._saved_as: tuple | None = None  # `_state()` when last saved or loaded: close() skips a clean save
        self.notice: str | None = None  # one line for the user when `open` had to rebuild
        self.folder: Path | None = None  # where `open` found it and `flush` saves it
        self.model_id: str | None = None
        self._writes_since_save = 0

    def _empty(self, training: np.ndarray | None = None):
        """A new empty FAISS index of this kind; `training` (the vectors it is about to hold) shapes the HNSW
        graph's projection (`facerec.vectors.hnsw`)."""
        import faiss

        if self.kind == "flat":
            return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dimension))
        if self.kind == "flat16":
            return faiss.IndexIDMap2(faiss.IndexScalarQuantizer(
                self.dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT))
        return new_graph_index(self.dimension, self.hnsw_m, training)

    def __len__(self) -> int:
        """Faces this index returns (tombstones excluded)."""
        return int(self._index.ntotal) - len(self._tombstones)

    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        """Add faces not held yet (re-adding a held or tombstoned id is the caller's error: `catch_up` avoids it)."""
        if len(ids):
            with self.lock:
                self._index.add_with_ids(np.ascontiguousarray(embeddings, dtype=np.float32),
                                         np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        """Drop these face ids: deleted in place (flat kinds) or tombstoned (HNSW; the journal replay rebuilds
        the graph once tombstones pass `TOMBSTONE_FRACTION` of it)."""
        if not len(ids):
            return
        with self.lock:
            if self.kind != "hnsw":
                self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))
            else:
                self._set_tombstones(self._tombstones | {int(i) for i in ids})

    def _set_tombstones(self, tombstones: set[int]) -> None:
        import faiss

        self._tombstones = tombstones
        if not tombstones:
            self._selector = None
            return
        batch = faiss.IDSelectorBatch(np.array(sorted(tombstones), dtype=np.int64))
        self._selector = (faiss.IDSelectorNot(batch), batch)  # keep `batch` alive: the Not points to it

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(similarities [Q, k'] float32, face ids [Q, k'] int64) with k' = min(k, faces held), at least 1;
        ids are -1 where the index is empty."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        with self.lock:
            k = max(1, min(k, len(self)))
            if self.kind == "flat" and len(self) >= PARALLEL_SCAN_MIN and len(queries) < FAISS_BLAS_QUERIES:
                similarities, ids = self._parallel_exact_search(queries, k)
            elif self.kind != "hnsw":
                similarities, ids = self._index.search(queries, k)
            else:
                excluded = self._selector[0] if self._selector is not None else None
                similarities, ids = self._index.search(queries, k, params=search_parameters(
                    self._index, self.ef_search, k, excluded))
        # Cosines of unit vectors: rounding aside, never above 1 (a stored vector that is not of unit length is
        # refused when the index is opened; this bound holds whatever slips through).
        return np.minimum(similarities, np.float32(1.0)), ids

    def _parallel_exact_search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k as a matrix product over views of FAISS's storage (no copy); caller holds the lock."""
        import faiss

        flat = faiss.downcast_index(self._index.index)
        count = int(flat.ntotal)
        vectors = faiss.rev_swig_ptr(flat.get_xb(), count * self.dimension).reshape(count, self.dimension)
        ids = faiss.rev_swig_ptr(self._index.id_map.data(), count)
        scores = queries @ vectors.T  # [Q, count]
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]  # k <= count, checked by `search`
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        rows = np.take_along_axis(top, order, axis=1)
        return np.take_along_axis(top_scores, order, axis=1).astype(np.float32), ids[rows].astype(np.int64)

    def reconstruct_all(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, embeddings) currently held (tombstones excluded)."""
        with self.lock:
            ids = self.reconstruct_ids()
            if not len(ids):
                return ids, np.zeros((0, self.dimension), np.float32)
            return ids, np.stack([self._index.reconstruct(int(i)) for i in ids])

    def reconstruct_ids(self) -> np.ndarray:
        """Face ids this index returns (tombstones excluded)."""
        with self.lock:
            ids = self._physical_ids()
            return ids[~np.isin(ids, list(self._tombstones))] if self._tombstones else ids

    def _physical_ids(self) -> np.ndarray:
        import faiss

        return faiss.vector_to_array(self._index.id_map).astype(np.int64)

    def rebuild(self, store: Store) -> None:
        """Rebuild from the database, the source of truth. The new index is filled without the lock (searches
        continue on the old one) and swapped in whole, so a reader never sees a half-filled index; changes
        committed meanwhile are then replayed from the journal."""
        for _attempt in range(3):
            seq = store.journal_head()
            ids, embeddings = store.embeddings()
            fresh = self._filled(ids, embeddings)
            with self.lock:
                self._swap_in(fresh, len(ids), seq)
                if not self._replay(store):
                    return
        with self.lock:  # writers kept re-embedding faces under us: rebuild once more, holding the lock
            ids, embeddings = store.embeddings()
            self._swap_in(self._filled(ids, embeddings), len(ids), store.journal_head())

    def fill(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        """Replace the contents with these faces, built in one go, as `rebuild` does from the database (an HNSW
        graph learns its projection from them). For bulk loads outside a gallery, such as benchmarks."""
        fresh = self._filled(ids, embeddings)
        with self.lock:
            self._swap_in(fresh, len(ids), self.seq)

    def _swap_in(self, fresh, built_for: int, seq: int) -> None:
        """Make a freshly built index (no tombstones) the current one; caller holds the lock."""
        self._index, self._built_for, self.seq = fresh, built_for, seq
        self._set_tombstones(set())

    def _filled(self, ids: np.ndarray, embeddings: np.ndarray):
        fresh = self._empty(training=embeddings)
        if len(ids):
            fresh.add_with_ids(np.ascontiguousarray(embeddings, dtype=np.float32),
                               np.ascontiguousarray(ids, dtype=np.int64))
        return fresh

    def sync(self, store: Store) -> None:
        self.catch_up(store)

    def catch_up(self, store: Store, verify_count: bool = False) -> None:
        """Apply every database change made since this index's sequence (by this or any other process)."""
        with self.lock:
            needs_rebuild = self._replay(store, verify_count)
        if needs_rebuild:
            self.rebuild(store)

    def _replay(self, store: Store, verify_count: bool = False) -> bool:
        """Bring the index to the journal head; caller holds the lock. Returns True when only a rebuild can
        (an HNSW face whose vector changed, tombstones past their limit, or counts that disagree). Faces are
        counted (a scan of the table) only after changes or when asked: not on every search."""
        changes = store.journal_since(self.seq)
        if not changes and not verify_count:
            return False
        if changes:
            # Whatever happened to a face id since (added, removed, re-embedded, or its id reused after a
            # delete), the database now says what it is: compare with what the index holds.
            touched = sorted({face_id for _seq, _op, face_id in changes})
            ids, embeddings = store.embeddings(touched)
            current = dict(zip(ids.tolist(), embeddings))
            held = set(self.reconstruct_ids().tolist())
            gone = [f for f in touched if f in held and f not in current]
            changed = [f for f in held.intersection(current)  # float16 kinds hold vectors rounded by <= 5e-4
                       if not np.allclose(self._index.reconstruct(f), current[f], rtol=0, atol=1e-3)]
            new = [f for f in current if f not in held]
            if self.kind == "hnsw" and (changed or self._tombstones.intersection(new)):
                return True  # a graph node cannot be replaced
            self.remove(np.array(gone + changed, np.int64))
            readd = changed + new
            vectors = np.array([current[f] for f in readd], np.float32).reshape(-1, self.dimension)
            self.add(np.array(readd, np.int64), vectors)
            self.seq = max(self.seq, changes[-1][0])
        if self.kind == "hnsw" and (len(self._tombstones) > TOMBSTONE_FRACTION * self._index.ntotal
                                    or self._graph_outgrown()):
            return True
        # Counts are only comparable when nothing was committed since the replay (a later write would already
        # be in the count but not yet in the index; the next catch-up applies it).
        faces = store.counts()[1]
        return len(self) != faces and store.journal_head() == self.seq

    def _graph_outgrown(self) -> bool:
        """An HNSW graph built while the gallery was too small to estimate its principal subspace (so over the
        full vectors) is rebuilt, once, when the gallery reaches that size."""
        return self._built_for < PROJECTION_MIN_FACES <= int(self._index.ntotal)

    def _state(self) -> tuple:
        return self.seq, int(self._index.ntotal), len(self._tombstones), self._built_for

    def after_write(self, store: Store) -> None:
        """Take in this process's write now, and save every `SAVE_INDEX_EVERY` writes."""
        self.catch_up(store)
        self._writes_since_save += 1
        if self._writes_since_save >= SAVE_INDEX_EVERY:
            self.flush(store)

    def flush(self, store: Store) -> None:
        """Save to the folder `open` read it from (nothing for an index made without `open`)."""
        if self.folder is not None:
            self.save(self.folder, self.model_id, store)
            self._writes_since_save = 0

    def save(self, folder: Path, model_id: str, store: Store | None = None) -> None:
        """Write durably and atomically (temp file, fsync, rename, fsync of the folder), so neither a crash nor a
        power cut leaves a half-written index behind. Skipped when nothing changed since the last save or load.
        With `store`, the journal row at `seq` is recorded too, so `open` can tell a rewritten journal."""
        import faiss

        folder.mkdir(parents=True, exist_ok=True)
        with self.lock:
            if self._saved_as == self._state() and (folder / INDEX_FILE).is_file() \
                    and (folder / INDEX_META_FILE).is_file():
                return
            _refuse_non_files(folder)
            head = store.journal_entry(self.seq) if store is not None and self.seq else None
            tmp = folder / f".{INDEX_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp_meta = folder / f".{INDEX_META_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                os.close(os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600))  # private before any byte
                faiss.write_index(self._index, str(tmp))
                checksum = file_sha256(tmp)
                _replace_durably(tmp, folder / INDEX_FILE)
                meta = {"seq": self.seq, "model_id": model_id, "kind": self.kind, "count": int(self._index.ntotal),
                        "sha256": checksum,
                        "ids_digest": _ids_digest(self._physical_ids()), "tombstones": sorted(self._tombstones),
                        "built_for": self._built_for, "head": list(head) if head else None}
                with open(os.open(tmp_meta, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600), "w") as handle:
                    handle.write(json.dumps(meta))
                _replace_durably(tmp_meta, folder / INDEX_META_FILE)
            finally:  # a failed save leaves no copy of the embeddings behind
                tmp.unlink(missing_ok=True)
                tmp_meta.unlink(missing_ok=True)
            _fsync(folder)
            self._saved_as = self._state()

    @classmethod
    def open(cls, folder: Path, store: Store, model_id: str, kind: str = "flat", **options) -> "FaceIndex":
        """Load the saved index if it is for this model and kind and can be replayed to the database's state;
        otherwise rebuild it from the database."""
        import faiss

        index = cls(kind, **options)
        index.folder, index.model_id = folder, model_id
        _refuse_non_files(folder)
        _remove_stale_temp_files(folder)
        head = store.journal_head()
        _refuse_foreign_database(folder, store, head)
        try:
            meta = json.loads((folder / INDEX_META_FILE).read_text())
            if meta.get("model_id") != model_id or meta.get("kind") != kind:
                raise ValueError("it was made for another model or index kind")
            integrity.check_checksum(folder / INDEX_FILE, meta.get("sha256"))
            loaded = faiss.read_index(str(folder / INDEX_FILE))
            if kind == "hnsw" and not is_graph_index(loaded):
                raise ValueError("it is an HNSW index in an older layout")
            if loaded.ntotal != meta.get("count"):
                raise ValueError("it does not match its metadata")
            integrity.check_unit_lengths(faiss.downcast_index(loaded.index), index.dimension)
            with index.lock:
                index._index, index.seq = loaded, int(meta["seq"])
                if _ids_digest(index._physical_ids()) != meta.get("ids_digest"):
                    raise ValueError("index.faiss and index.json come from different saves")
                index._set_tombstones({int(i) for i in meta.get("tombstones", [])})
                index._built_for = int(meta.get("built_for", loaded.ntotal))
                index._saved_as = index._state()
            index.catch_up(store, verify_count=True)
            integrity.check_against_database(index.reconstruct_ids(), index._index.reconstruct, store)
        except Exception as error:  # missing, unreadable, stale beyond repair: the database decides
            existed = (folder / INDEX_FILE).exists() or (folder / INDEX_META_FILE).exists()
            index.rebuild(store)
            if existed:
                reason = _reason(error)
                index.notice = (f"the saved index in {folder} could not be used ({reason}); rebuilt it from the "
                                f"database ({len(index)} faces)")
        return index


def saved_face_count(folder: Path) -> int | None:
    """Faces held by the index saved in `folder` (None when there is none, or it cannot be read at all)."""
    import faiss

    try:
        return int(json.loads((folder / INDEX_META_FILE).read_text())["count"])
    except Exception:  # noqa: BLE001 - no usable metadata: ask the index file itself
        pass
    try:
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


def _refuse_foreign_database(folder: Path, store: Store, head: int) -> None:
    """The saved index must come from this database's past: not from a newer state (a database restored from a
    backup, or commits lost), nor from another journal (another gallery's database put in its place)."""
    if head == 0 and store.counts() == (0, 0):
        refuse_to_replace_saved_index(folder)
    try:
        meta = json.loads((folder / INDEX_META_FILE).read_text())
        seq, recorded = int(meta["seq"]), meta.get("head")
    except Exception:  # noqa: BLE001 - no readable metadata: nothing to compare with (the index is rebuilt)
        return
    advice = (f"if that was on purpose, delete {INDEX_FILE} and {INDEX_META_FILE} in {folder} to rebuild the index "
              "from this database; otherwise put the right gallery.db back. Nothing was changed.")
    if seq > head:
        raise UnusableFile(f"the gallery database is older than its saved index (journal at {head}, index saved at "
                           f"{seq}): gallery.db was replaced, restored from a backup or lost commits; {advice}")
    if recorded and seq and store.journal_entry(seq) != (str(recorded[0]), int(recorded[1])):
        raise UnusableFile(f"the gallery database's journal differs from the one its saved index was made from "
                           f"(entry {seq}): gallery.db was replaced by another gallery's database; {advice}")


def _refuse_non_files(folder: Path) -> None:
    """index.faiss / index.json must be files (or absent): a folder of that name would fail every save."""
    for name in (INDEX_FILE, INDEX_META_FILE):
        path = folder / name
        if path.exists() and not path.is_file():
            raise UnusableFile(f"{path} is not a file (a folder?): move it out of the way; the index is rebuilt "
                               "from the database")


def _remove_stale_temp_files(folder: Path) -> None:
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


def _replace_durably(tmp: Path, final: Path) -> None:
    _fsync(tmp)
    os.replace(tmp, final)


def _fsync(path: Path) -> None:
    """Flush a file's (or a folder's: its entries, after a rename) contents to the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _reason(error: BaseException) -> str:
    if isinstance(error, FileNotFoundError):
        return f"{Path(error.filename or INDEX_META_FILE).name} is missing"
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:160]


def _ids_digest(ids: np.ndarray) -> str:
    """Fingerprint of the face ids an index holds: ties `index.json` to the `index.faiss` it was saved with."""
    import hashlib

    return hashlib.sha256(np.sort(np.asarray(ids, dtype=np.int64)).tobytes()).hexdigest()
