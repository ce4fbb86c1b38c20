"""Grouping the strangers memory off every request's thread and outside every write transaction.

Grouping compares each new kept face with every kept face (`facerec.algorithms.grouping`): seconds of CPU at 20,000
faces. It used to run inside the write transaction of the admin's list request, so that request took as long, and
every identify that wanted to keep an unknown face queued behind the same lock. Now a round of grouping:
1. reads the kept faces in one short read (no lock; a snapshot of at most `Settings.suggestions_memory` faces),
2. groups the new ones with no transaction open, on a thread of the lowest CPU priority (which then rests as long
   as the round took before another: an admin asking again and again while identifies keep faces costs at most
   half of one core),
3. writes the placements in one short write (`StrangersTable.place`: a face grouped or a group dismissed
   meanwhile is left alone), and
4. publishes what the caller's `build` made of it (the suggestions), with the memory's version it was made of.

Requests only read the last published grouping. A request that finds the memory (or the gallery: enrolling someone
can hide a suggestion) changed since then asks the background thread for a round and waits for it at most
FRESH_WAIT_S: a small memory is grouped in milliseconds and answered fresh, a large one is answered at once from
the last grouping, saying that a new one is under way. One round runs at a time in a process; the command line and
tests run one on their own thread (`refresh`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Callable, Generic, TypeVar

import numpy as np

from facerec.algorithms.grouping import GroupingStopped
from facerec.gallery.strangers import StrangersMemory
from facerec.storage import Store, utcnow
from facerec.storage.strangers import StrangerRows

FRESH_WAIT_S = 1.0  # how long a request waits for a round it asked for before answering with the last one
LOWEST_PRIORITY = 19  # the grouping thread's nice value: identifies and pages get the CPU first
MAX_REST_S = 60.0  # between two rounds the thread rests as long as the last one took, at most this long
log = logging.getLogger("facerec.gallery")

Result = TypeVar("Result")
Placer = Callable[[StrangerRows, Callable[[], bool]], dict[int, int]]  # (rows, stop) -> {face id: group id}


@dataclass(frozen=True)
class Published(Generic[Result]):
    """A grouping as requests read it: what was made of it, the version of the memory it was made of (faces kept,
    their largest id, the gallery's journal head), when, and how many faces it grouped."""

    result: Result
    version: tuple[int, int, int]
    made_at: datetime
    faces: int


class StrangersGrouping(Generic[Result]):
    """The one grouping of a gallery's strangers memory: `current` for requests, `refresh` for everyone else."""

    def __init__(self, store: Store, memory: StrangersMemory, model_id: str, place: Placer,
                 build: Callable[[StrangerRows, np.ndarray], Result]) -> None:
        self.store, self.memory, self.model_id = store, memory, model_id
        self.place, self.build = place, build
        self.published: Published[Result] | None = None
        self._round = threading.Lock()  # one round at a time in this process
        self._state = threading.Condition()  # guards the two counters below and the thread
        self._asked = self._answered = 0  # rounds asked of the background thread; the last one it finished
        self._wake, self._closed = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        self._closing = False

    def version(self) -> tuple[int, int, int]:
        """The memory's version now: three index reads, whatever the count."""
        with self.store.reading() as tables:
            count, largest = tables.strangers.version(self.model_id)
            return count, largest, tables.journal.head()

    def current(self, wait_s: float = FRESH_WAIT_S) -> tuple[Published[Result] | None, bool]:
        """The last published grouping (None before the first) and whether a newer one is under way. When the
        memory changed since it and no round is under way, one is asked of the background thread and awaited at
        most `wait_s`."""
        self.memory.settle()  # what identifies queued before this request counts as kept (`StrangersMemory`)
        published = self.published
        with self._state:
            under_way = self._answered < self._asked
        if under_way or (published is not None and published.version == self.version()):
            return published, under_way  # a round under way is not waited for: it may take minutes
        asked = self.ask()
        with self._state:
            finished = self._state.wait_for(lambda: self._answered >= asked or self._closing, timeout=wait_s)
        return self.published, not finished

    def ask(self) -> int:
        """Ask the background thread for a round (started on the first call); the number to wait for."""
        with self._state:
            if self._thread is None and not self._closing:
                self._thread = threading.Thread(target=self._run, name="facerec-grouping", daemon=True)
                self._thread.start()
            self._asked += 1
            self._wake.set()
            return self._asked

    def refresh(self) -> Published[Result]:
        """One round on the caller's thread (see the module), waiting for one under way first; what it published.
        Raises GroupingStopped when the gallery closes meanwhile."""
        with self._round:
            self.memory.settle()  # the faces identifies queued before this round are kept first
            with self.store.sightings_transaction() as tx:
                self.memory.forget_expired(tx)
            with self.store.reading() as tables:
                head = tables.journal.head()
                rows = tables.strangers.rows(self.model_id)
            placed = self.place(rows, lambda: self._closing)
            wanted = len(placed)
            if placed:
                with self.store.sightings_transaction() as tx:
                    placed = tx.strangers.place(self.model_id, placed)
            groups = np.array([placed.get(int(face), int(group)) for face, group in zip(rows.ids, rows.groups)],
                              np.int64)
            version = (len(rows), int(rows.ids.max()) if len(rows) else 0, head)
            if len(placed) < wanted:  # some faces changed hands meanwhile: the next request groups them again
                version = (-1, *version[1:])
            self.published = Published(self.build(rows, groups), version, utcnow(), len(rows))
            return self.published

    def revise(self, change: Callable[[Result], Result]) -> None:
        """Change the published result in place of a new round (a suggestion dismissed here leaves the list at
        once; the next round confirms it)."""
        published = self.published
        if published is not None:
            self.published = replace(published, result=change(published.result))

    def close(self) -> None:
        """Stop the background thread: a round under way stops at its next block of faces."""
        with self._state:
            self._closing = True
            self._closed.set()
            self._wake.set()
            self._state.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=10)

    def _run(self) -> None:
        _lower_own_priority()
        rested_until = 0.0  # rest after a round as long as it took: half of one core at most, however often asked
        while True:
            self._wake.wait()
            if self._closed.wait(max(0.0, rested_until - time.monotonic())):
                return
            self._wake.clear()
            with self._state:
                asked = self._asked
            started = time.monotonic()
            try:
                self.refresh()
            except GroupingStopped:
                return
            except Exception:  # noqa: BLE001 - the thread must outlive one failed round; requests keep the last
                if self._closing:
                    return
                log.exception("facerec: grouping the kept unknown faces failed; suggestions show the last grouping")
            rested_until = time.monotonic() + min(time.monotonic() - started, MAX_REST_S)
            with self._state:
                self._answered = max(self._answered, asked)
                self._state.notify_all()


def _lower_own_priority() -> None:
    """Give this thread (only: Linux sets a nice value per thread) the lowest CPU priority, so that grouping takes
    what identifies and pages leave. Elsewhere, or where refused, it keeps the process's priority."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST_PRIORITY)
    except (AttributeError, OSError):
        pass
