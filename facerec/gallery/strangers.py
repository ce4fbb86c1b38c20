"""The strangers memory: faces identify found no enrolled person for, kept (only if the operator opted in) so that
someone seen again and again can be suggested for enrollment (`facerec.gallery.suggestions`).

These are biometric data of people who never agreed to be in the gallery, so everything here leans to keeping
less:
- Off by default. On only with `Settings.suggestions` (FACEREC_SUGGESTIONS=on), never in privacy mode. A gallery
  opened with it set off (FACEREC_SUGGESTIONS=off), or in privacy mode, forgets every stranger kept before, at
  once; opened with it unset (a command run in another shell, say) it keeps none and forgets only expired ones,
  so an everyday command does not wipe what the running app was asked to keep.
- Bounded in time and count: a face is forgotten `Settings.suggestions_days` days after it was seen (default 30)
  and the memory holds at most `Settings.suggestions_memory` faces (default 10,000, at most MAX_MEMORY; the oldest
  go first).
- Only what a suggestion needs: the aligned 112x112 face (never the photo), where it was in its photo, the photo's
  sha256 (to tell two photos from one sent twice) and its embedding.
- Only faces unknown at the default rate's threshold (a caller's pin or rate never decides what is kept), at least
  MIN_FACE_WIDTH pixels wide (smaller faces group badly), and the same face of the same photo once.
Reading them (suggestions) needs the admin password or an admin key; keeping them is best effort, like sightings:
a write that fails is logged and the answer goes out regardless.

Keeping runs off the request (#51 item 9): identify only picks the faces to keep and queues them; one background
thread per gallery writes them (JPEG crop, duplicate check, write transaction), so an identification with
suggestions on answers as fast as one with them off. Nobody waits for that write but a reader of this memory:
`settle` waits until every face queued before it is kept, and the suggestions, `count`, `clear` and `close` call
it, so whoever reads the suggestions after an identify has answered sees its faces. At most QUEUED_PHOTOS photos
wait; beyond that, a photo's faces are not kept (logged), as when a write fails.
"""

from __future__ import annotations

import logging
import queue
import threading
from datetime import timedelta

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import StorageFull
from facerec.faces.detect import MAX_FACES
from facerec.gallery.results import FaceMatch
from facerec.gallery.sightings import SAME_PHOTO_COSINE, kept_face
from facerec.storage import utcnow
from facerec.storage.failures import DatabaseFailure
from facerec.words.phrasing import one_line

MIN_FACE_WIDTH = 40.0
QUEUED_PHOTOS = 256  # photos whose unknown faces wait to be kept (~40 kB a face): bounded memory under a burst
MAX_MEMORY = 20_000  # grouping compares every kept face with every other: ~10 s at this many on two cores
log = logging.getLogger("facerec.gallery")


class StrangersMemory:
    def __init__(self, core: Core) -> None:
        settings = core.settings
        self._store, self._model_id = core.store, core.model_id
        self._wanted, self._store_crops = settings.suggestions, settings.store_crops
        self._days = settings.suggestions_days
        self._capacity = min(int(settings.suggestions_memory), MAX_MEMORY)
        self._queue: queue.Queue = queue.Queue(QUEUED_PHOTOS)
        self._worker: threading.Thread | None = None
        self._written = threading.Condition()  # guards the worker and the two counts below
        self._queued = self._done = 0  # photos queued and written (or failed) since the gallery opened

    @property
    def enabled(self) -> bool:
        return bool(self._wanted) and self._store_crops and self._days > 0 and self._capacity > 0

    def why_disabled(self) -> str:
        if not self._wanted:
            return "unknown faces are not kept; start facerec with FACEREC_SUGGESTIONS=on to keep them"
        if not self._store_crops:
            return "privacy mode keeps no faces of people who are not enrolled (FACEREC_STORE_CROPS=0)"
        return "the strangers memory has no room (FACEREC_SUGGESTIONS_DAYS or FACEREC_SUGGESTIONS_MEMORY is 0)"

    def keep(self, photo_sha256: str, matches: list[FaceMatch], embeddings: np.ndarray, trusted_threshold: float,
             crops) -> int:
        """Queue each face of an identification that is unknown at `trusted_threshold` (see the module) to be
        kept by the background thread, and return at once: how many were queued (0 when the queue is full)."""
        if not self.enabled:
            return 0
        unknown = [(match.face, np.array(embedding, np.float32), crop)
                   for match, embedding, crop in zip(matches, embeddings, crops)
                   if crop is not None and match.face.width >= MIN_FACE_WIDTH
                   and not (match.score is not None and match.score >= trusted_threshold)]
        # A photo answers at most MAX_FACES faces; a video's unknown tracks are held to the same, the largest faces.
        unknown = sorted(unknown, key=lambda kept: -kept[0].width)[:MAX_FACES]
        if not unknown:
            return 0
        with self._written:
            self._start_worker()
            try:
                self._queue.put_nowait((photo_sha256, unknown))
            except queue.Full:
                log.warning("facerec: unknown faces were answered but not kept for suggestions (%d photos are "
                            "waiting to be kept)", QUEUED_PHOTOS)
                return 0
            self._queued += 1
        return len(unknown)

    def settle(self) -> None:
        """Wait until every face queued before this call is kept (or its write has failed); faces queued while
        it waits are not waited for."""
        with self._written:
            wanted = self._queued
            self._written.wait_for(lambda: self._done >= wanted)

    def close(self) -> None:
        """Keep what is queued, then stop the background thread (before the gallery's database is released)."""
        with self._written:
            worker, self._worker = self._worker, None
        if worker is not None:
            self._queue.put(None)
            worker.join()

    def _start_worker(self) -> None:
        """Start the background thread on the first face to keep (the caller holds `_written`)."""
        if self._worker is None:
            self._worker = threading.Thread(target=self._keep_queued, name="facerec-strangers", daemon=True)
            self._worker.start()

    def _keep_queued(self) -> None:
        """The background thread: keep each queued photo's faces, in the order identify answered them."""
        while (item := self._queue.get()) is not None:
            try:
                self._write(*item)
            except Exception:  # noqa: BLE001 - a bug here must not stop the thread that every later keep needs
                log.exception("facerec: unknown faces were answered but not kept for suggestions")
            finally:
                with self._written:
                    self._done += 1
                    self._written.notify_all()

    def _write(self, photo_sha256: str, unknown: list) -> int:
        """Keep the faces of one photo (`unknown`: (face, embedding, crop)), once per photo; how many were kept."""
        store, kept = self._store, 0
        try:
            with store.sightings_transaction() as tx:
                self.forget_expired(tx)
                before = tx.strangers.of_photo(self._model_id, photo_sha256)
                for face, embedding, crop in unknown:
                    if len(before) and float(np.max(before @ embedding)) >= SAME_PHOTO_COSINE:
                        continue  # this photo was sent before: its faces are kept once
                    tx.strangers.add(embedding, self._model_id, photo_sha256, kept_face(face, crop),
                                     self._capacity)
                    kept += 1
        except (StorageFull, DatabaseFailure) as error:  # best effort: the answer matters more than its memory
            log.warning("facerec: unknown faces were answered but not kept for suggestions (%s)",
                        one_line(error, 200))
            return 0
        return kept

    def forget_expired(self, tx) -> int:
        """Forget the faces older than the retention, in the caller's write transaction; how many went."""
        return tx.strangers.remove_older_than(utcnow() - timedelta(days=max(self._days, 0)))

    def forget_when_disabled(self) -> int:
        """With the option set off (or privacy mode, or no room), every stranger kept before goes too; how many.
        On or unset, the faces past their retention go."""
        self.settle()
        if not self._store.strangers.count():
            return 0
        everything = not self._store_crops or (self._wanted is not None and not self.enabled)
        with self._store.sightings_transaction() as tx:
            return tx.strangers.clear() if everything else self.forget_expired(tx)

    def clear(self) -> int:
        """Forget every kept stranger (the operator asked); how many went."""
        self.settle()
        with self._store.sightings_transaction() as tx:
            return tx.strangers.clear()

    def count(self) -> int:
        """How many faces are kept, those queued before this call included."""
        self.settle()
        return self._store.strangers.count()
