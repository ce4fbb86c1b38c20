"""The gallery's own stranger tail (`facerec.openset.population_tail`), measured from the store and kept until the
gallery has changed enough to move it.

Why a cache: identify and every enrollment's look-alike check ask for the threshold in force, and measuring the
tail is one pass over up to 4,000 faces (~1 s). A tail estimated from N people barely moves when a few more are
enrolled, so it is measured again only once the gallery's journal has moved by REMEASURE_SHARE of its faces (or by
REMEASURE_FACES entries, whichever is more) since it was measured: a bulk enrollment of thousands of people
measures it a few dozen times, not once per person. The journal, not the face count, because any change of the
faces moves it: people deleted and others enrolled in their place, and a reindex by another model (each face
re-embedded is journalled), also when another replica made it. This replica's own reindex invalidates it
outright.
"""

from __future__ import annotations

import threading

import numpy as np

from facerec.openset.population_tail import MIN_PEOPLE, SAMPLE_FACES, SAMPLE_SEED, PopulationTail, measure_population_tail
from facerec.gallery.people_sample import draw_whole_people

REMEASURE_SHARE = 0.10
REMEASURE_FACES = 10


class PopulationCache:
    """One gallery's measured tail, with the face count it was measured at."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._measured_at: tuple[int, int] | None = None  # (journal position, faces) when measured
        self._tail: PopulationTail | None = None

    def tail(self, store, faces: int, journal_position: int) -> PopulationTail | None:
        """The tail for a gallery of `faces` enrolled faces whose journal is at `journal_position` (None below
        MIN_PEOPLE people)."""
        if faces < MIN_PEOPLE:  # fewer faces than that cannot be that many people: no query needed
            return None
        with self._lock:
            if self._measured_at is None or abs(journal_position - self._measured_at[0]) > max(
                    REMEASURE_FACES, REMEASURE_SHARE * self._measured_at[1]):
                self._tail = measure_population_tail(*_faces_to_measure(store))
                self._measured_at = (journal_position, faces)
            return self._tail

    def invalidate(self) -> None:
        """Measure again on the next call (the embeddings were replaced: another model, a reindex)."""
        with self._lock:
            self._measured_at, self._tail = None, None


def _faces_to_measure(store) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings, identity ids) of every enrolled face, or of a seeded sample of whole people of at most
    SAMPLE_FACES faces."""
    identity_ids, face_counts = store.faces.counts_per_person()
    taken = draw_whole_people(face_counts, SAMPLE_FACES, SAMPLE_SEED, reach=False)
    _face_ids, face_identities, embeddings = store.faces.of_people(identity_ids[taken].tolist())
    return embeddings, face_identities
