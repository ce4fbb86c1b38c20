"""How many people the gallery holds and how many photos each has: what the threshold policy counts.

Both change only when the journal moves (every face added or removed is journalled, with the person it makes or
ends), so they are read again only then. A read is a count and a GROUP BY over every face: at a million faces on
PostgreSQL that costs more than the search itself, and while any replica enrolls, the journal moves before nearly
every identify (`benchmarks/pgvector_million.py`). So from `BACKGROUND_FROM` faces a census is read again in a
background thread while the last one answers: a threshold from a census a few writes old differs from the exact
one by the share of the gallery those writes are (millionths at a million faces). Below it every caller reads the
current census, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from facerec.storage import Store

BACKGROUND_FROM = 50_000


@dataclass(frozen=True)
class Census:
    seq: int  # the journal position it was read at (or after)
    people: int
    photo_counts: np.ndarray  # photos of each person with any


class GalleryCensus:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._census: Census | None = None
        self._lock = threading.Lock()
        self._refreshing: threading.Thread | None = None

    def at(self, seq: int, faces: int) -> Census:
        """The census at journal position `seq` (a gallery of `faces` faces): read now, or, from
        `BACKGROUND_FROM` faces, the last one while a fresh one is read in the background."""
        with self._lock:
            census = self._census
            if census is not None and census.seq == seq:
                return census
            if census is not None and faces >= BACKGROUND_FROM:
                if self._refreshing is None or not self._refreshing.is_alive():
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
        _ids, counts = self.store.faces.counts_per_person()
        fresh = Census(seq, self.store.counts()[0], counts)
        with self._lock:
            if self._census is None or fresh.seq >= self._census.seq:
                self._census = fresh
        return fresh
