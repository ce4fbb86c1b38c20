"""How many people the gallery holds and how many photos each has: what the threshold policy counts.

Both change only when the journal moves (every face added or removed is journalled, with the person it makes or
ends), so they are read again only then. A read is a count and a GROUP BY over every face: at a million faces on
PostgreSQL that costs more than the search itself, and while any replica enrolls, the journal moves before nearly
every identify (`benchmarks/pgvector_million.py`). So from `BACKGROUND_FROM` faces a census is read again in a
background thread, at most every `REFRESH_SECONDS`, while the last one answers: a threshold from a census a few
seconds old differs from the exact one by the share of the gallery written since (millionths at a million faces
and dozens of enrollments a second). Below it every caller reads the current census, as before. The photo counts
come from the database as a histogram (a few rows), never a row per person: bringing a million rows into Python
held the interpreter for about a second, stalling every request of the replica (p99 of identify over a second
while another process enrolled, benchmarks/pgvector_million.py's first runs).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from facerec.openset.per_person import PhotoCounts
from facerec.storage import Store

BACKGROUND_FROM = 50_000
REFRESH_SECONDS = 10.0


@dataclass(frozen=True)
class Census:
    seq: int  # the journal position it was read at (or after)
    people: int
    photo_counts: PhotoCounts | None  # how many photos people have; None while every person has one


class GalleryCensus:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._census: Census | None = None
        self._lock = threading.Lock()
        self._refreshing: threading.Thread | None = None
        self._started = -REFRESH_SECONDS  # when the last background read began (time.monotonic)

    def at(self, seq: int, faces: int) -> Census:
        """The census at journal position `seq` (a gallery of `faces` faces): read now, or, from
        `BACKGROUND_FROM` faces, the last one while a fresh one is read in the background."""
        with self._lock:
            census = self._census
            if census is not None and census.seq == seq:
                return census
            if census is not None and faces >= BACKGROUND_FROM:
                idle = self._refreshing is None or not self._refreshing.is_alive()
                if idle and time.monotonic() - self._started >= REFRESH_SECONDS:
                    self._started = time.monotonic()
                    self._refreshing = threading.Thread(target=self._refresh, args=(seq,), name="facerec-census",
                                                        daemon=True)
                    self._refreshing.start()
                return census
        return self._read(seq)

    def _refresh(self, seq: int) -> None:
        try:
            self._read(seq)
        except Exception:  # the gallery was closed meanwhile, or the database is away: the next call reads again
            pass

    def _read(self, seq: int) -> Census:
        photos, people = self.store.faces.photo_count_histogram()
        counts = PhotoCounts(photos, people) if len(photos) and photos.max() > 1 else None
        fresh = Census(seq, self.store.counts()[0], counts)
        with self._lock:
            if self._census is None or fresh.seq >= self._census.seq:
                self._census = fresh
        return fresh
