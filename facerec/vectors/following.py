"""A local copy of the gallery's embeddings that follows the database: the part every local engine shares.

The database is the source of truth and its `journal` is commit-ordered (`facerec.storage.schema`), so a copy
that reflects journal position `seq` is brought up to date by replaying the rows after it: `sync`. Whatever
happened to a face id since (added, removed, re-embedded), the database says what it is now, and the copy is
made to agree; an engine that cannot apply a change in place (a graph node is forever) or has degraded asks for a
`rebuild`. Faces are counted only after changes or when asked (`verify_count`), never on every search, and a
count that disagrees with the database also rebuilds.

A rebuild fills a new engine without holding the lock, so searches go on meanwhile, swaps it in whole, then
replays whatever was committed while it was being built.

Saved beside the database (`facerec.vectors.saved_files`): `open` loads the saved copy if it is this gallery's,
for this model and kind, is the file its save wrote, can be replayed to the database's state and then holds
exactly the database's faces and vectors, every one compared (`facerec.vectors.index_integrity`); otherwise it
rebuilds from the database and says why in `notice`. The copy is saved every `SAVE_EVERY` of this process's
writes and on close.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from facerec.errors import UnusableFile
from facerec.provenance import file_sha256
from facerec.storage import Store
import facerec.vectors.index_integrity as integrity
import facerec.vectors.saved_files as files
from facerec.vectors.base import VectorIndex
from facerec.vectors.local import LocalVectors

# A gallery's index is saved after this many of its process's writes (and on close): a crash costs a journal
# replay of at most that many writes, not a rebuild.
SAVE_EVERY = 50


class JournalFollowingIndex(VectorIndex):
    def __init__(self, engine: LocalVectors) -> None:
        self.engine = engine  # swapped whole by a rebuild; read under `lock`
        self.kind, self.dimension = engine.kind, engine.dimension
        self.seq = 0  # journal sequence this index reflects
        self.lock = threading.RLock()  # held to search and to change the copy, never across a database read
        self._syncing = threading.Lock()  # one sync at a time reads the database
        self.notice: str | None = None  # one line for the user when `open` had to rebuild
        self.folder: Path | None = None  # where `open` found it and `flush` saves it
        self.model_id: str | None = None
        self._saved_as: tuple | None = None  # `_state()` when last saved or loaded: close() skips a clean save
        self._writes_since_save = 0

    def __len__(self) -> int:
        return len(self.engine)

    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        """Add faces not held yet (re-adding a held id is the caller's error: `sync` avoids it)."""
        with self.lock:
            self.engine.add(ids, embeddings)

    def remove(self, ids: np.ndarray) -> None:
        with self.lock:
            self.engine.remove(ids)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        with self.lock:
            k = max(1, min(k, len(self.engine)))
            similarities, ids = self.engine.search(queries, k)
        # Cosines of unit vectors: rounding aside, never above 1 (a stored vector that is not of unit length is
        # refused when the index is opened; this bound holds whatever slips through).
        return np.minimum(similarities, np.float32(1.0)), ids

    def reconstruct_all(self) -> tuple[np.ndarray, np.ndarray]:
        with self.lock:
            ids = self.engine.ids()
            if not len(ids):
                return ids, np.zeros((0, self.dimension), np.float32)
            return ids, np.stack([self.engine.vector(int(i)) for i in ids])

    def reconstruct_ids(self) -> np.ndarray:
        with self.lock:
            return self.engine.ids()

    def describe(self) -> dict:
        with self.lock:
            return {"engine": self.kind, **self.engine.describe()}

    # ----- following the database ---------------------------------------------------------------------------
    def sync(self, store: Store, verify_count: bool = False) -> None:
        """Apply every database change made since this index's sequence (by this or any other process).

        The database is read without the index lock (searches take it too, so they would queue behind the
        queries); one sync runs at a time, and the lock is held only to apply what was read."""
        with self._syncing:
            seq = self.seq
            changes = store.journal.since(seq)
            if not changes and not verify_count:
                return
            current = self._current(store, changes)
            with self.lock:
                needs_rebuild = self.seq != seq or self._apply(changes, current)
            needs_rebuild = needs_rebuild or self._count_disagrees(store)
        if needs_rebuild:
            self.rebuild(store)

    def rebuild(self, store: Store) -> None:
        """Rebuild from the database, the source of truth (see the module docstring)."""
        for _attempt in range(3):
            seq = store.journal.head()
            fresh = self.engine.built(*store.faces.embeddings())
            with self.lock:
                self.engine, self.seq = fresh, seq
                if not self._replay(store):
                    return
        with self.lock:  # writers kept re-embedding faces under us: rebuild once more, holding the lock
            self.engine, self.seq = self.engine.built(*store.faces.embeddings()), store.journal.head()

    def fill(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        """Replace the contents with these faces, built in one go, as `rebuild` does from the database. For bulk
        loads outside a gallery, such as benchmarks."""
        fresh = self.engine.built(ids, embeddings)
        with self.lock:
            self.engine = fresh

    def _replay(self, store: Store, verify_count: bool = False) -> bool:
        """Bring the copy to the journal head while holding the lock (a rebuild's last step, and `open`).
        Returns True when only a rebuild can."""
        changes = store.journal.since(self.seq)
        if not changes and not verify_count:
            return False
        return self._apply(changes, self._current(store, changes)) or self._count_disagrees(store)

    @staticmethod
    def _current(store: Store, changes: list) -> dict[int, np.ndarray]:
        """What the database holds now for every face the journal `changes` touched (absent: deleted)."""
        if not changes:
            return {}
        ids, embeddings = store.faces.embeddings(sorted({face_id for _seq, _op, face_id in changes}))
        return dict(zip(ids.tolist(), embeddings))

    def _apply(self, changes: list, current: dict[int, np.ndarray]) -> bool:
        """Make the copy agree with `current` for the faces `changes` touched; caller holds the lock. Returns True
        when only a rebuild can."""
        engine = self.engine
        if changes:
            touched = sorted({face_id for _seq, _op, face_id in changes})
            held = set(engine.ids().tolist())
            gone = [f for f in touched if f in held and f not in current]
            changed = [f for f in held.intersection(current)  # float16 kinds hold vectors rounded by <= 5e-4
                       if not np.allclose(engine.vector(f), current[f], rtol=0, atol=1e-3)]
            new = [f for f in current if f not in held]
            if engine.cannot_replay(changed, new):
                return True
            engine.remove(np.array(gone + changed, np.int64))
            readd = changed + new
            engine.add(np.array(readd, np.int64),
                       np.array([current[f] for f in readd], np.float32).reshape(-1, self.dimension))
            self.seq = max(self.seq, changes[-1][0])
        return engine.wants_rebuild()

    def _count_disagrees(self, store: Store) -> bool:
        """The copy holds another number of faces than the database. Counts are only comparable when nothing was
        committed since the replay (a later write would already be in the count but not yet in the index; the
        next sync applies it)."""
        return len(self.engine) != store.counts()[1] and store.journal.head() == self.seq

    # ----- saved beside the database ------------------------------------------------------------------------
    def _state(self) -> tuple:
        return self.seq, self.engine.stored_count(), len(self.engine), id(self.engine)

    def after_write(self, store: Store) -> None:
        """Take in this process's write now, and save every `SAVE_EVERY` writes."""
        self.sync(store)
        self._writes_since_save += 1
        if self._writes_since_save >= SAVE_EVERY:
            self.flush(store)

    def flush(self, store: Store) -> None:
        """Save to the folder `open` read it from (nothing for an index made without `open`)."""
        if self.folder is not None:
            self.save(self.folder, self.model_id, store)
            self._writes_since_save = 0

    def save(self, folder: Path, model_id: str, store: Store) -> None:
        """Write durably and atomically, so neither a crash nor a power cut leaves a half-written index behind.
        Skipped when nothing changed since the last save or load. The journal row at `seq` is recorded too, so
        `open` can tell a rewritten journal, with the gallery's id and a digest of index.json's fields
        (`facerec.vectors.index_integrity.meta_digest`: damage, not forgery, which `open` catches by comparing
        every vector with the database)."""
        folder.mkdir(parents=True, exist_ok=True)
        with self.lock:
            if self._saved_as == self._state() and (folder / files.INDEX_FILE).is_file() \
                    and (folder / files.INDEX_META_FILE).is_file():
                return
            files.refuse_non_files(folder)
            head = store.journal.entry(self.seq) if self.seq else None
            gallery_id = integrity.gallery_id(store)
            tmp, tmp_meta = files.temporary_names(folder)
            try:
                files.private_empty_file(tmp)
                engine_fields = self.engine.write(tmp)
                checksum = file_sha256(tmp)
                files.replace_durably(tmp, folder / files.INDEX_FILE)
                meta = {"seq": self.seq, "model_id": model_id, "kind": self.kind, "count": self.engine.stored_count(),
                        "sha256": checksum, "head": list(head) if head else None, "gallery_id": gallery_id,
                        **engine_fields}
                files.write_private_json(tmp_meta, {**meta, "meta_sha256": integrity.meta_digest(meta)})
                files.replace_durably(tmp_meta, folder / files.INDEX_META_FILE)
            finally:  # a failed save leaves no copy of the embeddings behind
                tmp.unlink(missing_ok=True)
                tmp_meta.unlink(missing_ok=True)
            files.fsync(folder)
            self._saved_as = self._state()

    @classmethod
    def open(cls, engine: LocalVectors, folder: Path, store: Store, model_id: str) -> JournalFollowingIndex:
        """`engine` (empty, of the kind and options wanted) filled from the copy saved in `folder` when it can be
        trusted and replayed to the database's state; otherwise from the database."""
        index = cls(engine)
        index.folder, index.model_id = folder, model_id
        files.refuse_non_files(folder)
        files.remove_stale_temp_files(folder)
        head = store.journal.head()
        if head == 0 and store.counts() == (0, 0):
            files.refuse_to_replace_saved_index(folder)
        try:
            meta = files.read_meta(folder)
            integrity.check_meta(meta, integrity.gallery_id(store), integrity.old_secret(store))
            # This gallery's, intact: a database behind its journal position was restored or lost commits (refused:
            # the index may hold the only copy of those faces).
            files.refuse_foreign_database(folder, store, head, meta)
            if meta.get("model_id") != model_id or meta.get("kind") not in engine.reads_kinds:
                raise ValueError("it was made for another model or index kind")
            integrity.check_checksum(folder / files.INDEX_FILE, meta.get("sha256"))
            loaded = engine.read(folder / files.INDEX_FILE, meta)
            if loaded.stored_count() != meta.get("count"):
                raise ValueError("it does not match its metadata")
            with index.lock:
                index.engine, index.seq = loaded, int(meta["seq"])
                index._saved_as = index._state()
            index.sync(store, verify_count=True)
            # Every face and vector, whatever index.json says (no lock: no one else holds this index yet).
            integrity.check_against_database(index.engine.ids(), index.engine.vectors, store)
            if "meta_sha256" not in meta:
                index._saved_as = None  # sealed the old way: saved anew on close
        except UnusableFile:
            raise
        except Exception as error:  # missing, damaged, unreadable, not the database's, stale: the database decides
            existed = (folder / files.INDEX_FILE).exists() or (folder / files.INDEX_META_FILE).exists()
            index.rebuild(store)
            if existed:
                index.notice = (f"the saved index in {folder} could not be used ({files.reason(error)}); rebuilt "
                                f"it from the database ({len(index)} faces)")
        integrity.forget_old_secret(store)  # nothing uses it now; a copy of the database should not carry it
        return index
