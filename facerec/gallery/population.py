"""The gallery's own stranger tail (`facerec.openset.population_tail`), measured from the store and kept until the
gallery has changed enough to move it; measured again beside the requests, never in their way.

Why a cache: identify and every enrollment's look-alike check ask for the threshold in force, and measuring the
tail is one pass over up to 4,000 faces (~1 s). A tail estimated from N people barely moves when a few more are
enrolled, so it is measured again only once the gallery's journal has moved by REMEASURE_SHARE of its faces (or by
REMEASURE_FACES entries, whichever is more) since it was measured: a bulk enrollment of thousands of people
measures it a few dozen times, not once per person. The journal, not the face count, because any change of the
faces moves it: people deleted and others enrolled in their place, and a reindex by another model (each face
re-embedded is journalled), also when another replica made it. This replica's own reindex invalidates it
outright.

Off the request path: once a tail has been measured, a request that finds it stale is answered with it (it
rests on a gallery at most REMEASURE_SHARE smaller) while one background thread measures the new one. Only the
first measurement of a process, when the gallery first reaches MIN_PEOPLE, is made while its request waits, so
no answer is given without the gallery's own tail once it has one.
"""

from __future__ import annotations

import threading

import numpy as np

from facerec.openset.cohort import CohortStatistics
from facerec.openset.population_tail import (
    MIN_PEOPLE, SAMPLE_FACES, SAMPLE_SEED, PopulationTail, measure_population_tail,
)
from facerec.algorithms.people_sample import taken_whole

REMEASURE_SHARE = 0.10
REMEASURE_FACES = 10


class PopulationCache:
    """One gallery's measured tail, with the journal position and face count it was measured at."""

    def __init__(self, ceiling: float = 1.0) -> None:
        self.ceiling = ceiling  # the scale's: 1 for cosines, inf for normalised scores
        self._lock = threading.Lock()
        self._measured_at: tuple[int, int] | None = None  # (journal position, faces) when measured
        self._tail: PopulationTail | None = None
        self._generation = 0  # moved by `invalidate`: a measurement begun before it is thrown away
        self._refreshing: threading.Thread | None = None

    def tail(self, store, faces: int, journal_position: int) -> PopulationTail | None:
        """The tail for a gallery of `faces` enrolled faces whose journal is at `journal_position` (None below
        MIN_PEOPLE people)."""
        if faces < MIN_PEOPLE:  # fewer faces than that cannot be that many people: no query needed
            return None
        with self._lock:
            if self._measured_at is None:  # the first measurement: the request waits for it, once
                self._tail = self._measure(store)
                self._measured_at = (journal_position, faces)
            elif self._stale(journal_position) and self._refreshing is None:
                self._refreshing = threading.Thread(target=self._refresh, args=(store, journal_position, faces),
                                                    name="facerec-population-tail", daemon=True)
                self._refreshing.start()
            return self._tail

    def invalidate(self) -> None:
        """Measure again on the next call (the embeddings were replaced: another model, a reindex)."""
        with self._lock:
            self._measured_at, self._tail = None, None
            self._generation += 1

    def _stale(self, journal_position: int) -> bool:
        moved = abs(journal_position - self._measured_at[0])
        return moved > max(REMEASURE_FACES, REMEASURE_SHARE * self._measured_at[1])

    def _refresh(self, store, journal_position: int, faces: int) -> None:
        generation = self._generation
        try:
            tail = self._measure(store)
        except Exception:  # the gallery was closed meanwhile, or the database is away: the next request retries
            tail = None
            generation = -1
        with self._lock:
            if generation == self._generation:
                self._tail, self._measured_at = tail, (journal_position, faces)
            self._refreshing = None


    def _measure(self, store) -> PopulationTail | None:
        """The tail of the scores the policy decides with, between faces of different people."""
        embeddings, identities, statistics = _faces_to_measure(store)
        return measure_population_tail(embeddings, identities, statistics=statistics, ceiling=self.ceiling)


def _faces_to_measure(store) -> tuple[np.ndarray, np.ndarray, CohortStatistics]:
    """(embeddings, identity ids, cohort statistics) of every enrolled face, or of a seeded sample of whole
    people of at most SAMPLE_FACES faces."""
    identity_ids, face_counts = store.faces.people_in_drawn_order(SAMPLE_FACES, SAMPLE_SEED)  # enough: >= 1 face each
    taken = taken_whole(face_counts, SAMPLE_FACES, reach=False)
    face_ids, face_identities, embeddings = store.faces.of_people(identity_ids[:taken].tolist())
    return embeddings, face_identities, CohortStatistics(*store.faces.cohort_statistics(face_ids.tolist()))
