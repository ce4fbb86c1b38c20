""""Not this person": a face an admin said is not X is kept as X's negative example, and a later face that looks
more like that negative than like X's own faces is not named X.

Why: a stranger who resembles X is named X again and again (the look-alikes peers' users ask about most); saying
once that the face is not X should stop it. Safeguards: only an admin says it (the password or an admin key); X's
own faces keep X: a face is kept from X only when it scores at least as high against one of X's negatives as
against X's best face (the candidate's own score), so X's own photos, which match X's faces best, stay named X
(benchmarks/claims.py measures both sides); at most MAX_NEGATIVES per person, the oldest going first; each can be
removed (undone); they go with the person when deleted, and with the gallery in an export.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import UnknownIdentity
from facerec.gallery.people import find_identity

MAX_NEGATIVES = 20


@dataclass
class Negative:
    id: int
    identity_id: int
    name: str
    said_by: str
    sighting_id: int | None
    created_at: datetime

    def to_dict(self) -> dict:
        return {"id": self.id, "identity_id": self.identity_id, "name": self.name, "said_by": self.said_by,
                "sighting_id": self.sighting_id, "created_at": self.created_at.isoformat()}


class Negatives:
    def __init__(self, core: Core) -> None:
        self._store, self._scorer, self._model_id = core.store, core.scorer, core.model_id
        self._store_crops = core.settings.store_crops

    def say_not(self, identity: str | int, embedding: np.ndarray, by: str, crop_jpeg: bytes | None = None,
                sighting_id: int | None = None) -> Negative:
        """Keep `embedding` (a unit face embedding of this gallery's model) as not `identity`."""
        embedding = np.asarray(embedding, np.float32).reshape(-1)
        statistics = self._scorer.statistics(embedding[None])
        with self._store.transaction() as tx:
            person = find_identity(tx, identity)
            negative_id = tx.negatives.add({
"identity_id": person.id, "embedding": embedding, "model_id": self._model_id,
"cohort_mean": float(statistics.mean[0]), "cohort_sd": float(statistics.sd[0]),
"crop_jpeg": crop_jpeg if self._store_crops else None, "sighting_id": sighting_id,
"said_by": by[:64]}, MAX_NEGATIVES)
            return Negative(negative_id, person.id, person.name, by[:64], sighting_id, datetime.now())

    def of(self, identity: str | int) -> list[Negative]:
        with self._store.reading() as tables:
            person = find_identity(tables, identity)
            name, identity_id = person.name, person.id
        return [Negative(row.id, row.identity_id, name, row.said_by, row.sighting_id, row.created_at)
                for row in self._store.negatives.listed(identity_id)]

    def remove(self, negative_id: int) -> int:
        """Undo one "not this person"; returns the person's id."""
        with self._store.transaction() as tx:
            row = tx.negatives.remove(negative_id)
            if row is None:
                raise UnknownIdentity(f"no negative example has the id {int(negative_id)}")
            return int(row.identity_id)
