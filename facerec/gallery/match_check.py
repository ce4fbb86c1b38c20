"""Whether a face is a given person's: the one test add-photo and learning a template share.

A face is taken as a person's exactly when identify would name it as them: among the people it matches at or
above the threshold in force (its "look-alikes"), they come first. So a photo is added, or a confirmed face
learned, only where the gallery's own answer already agrees, and a face that matches someone else better never
becomes a template of the wrong person.
"""

from __future__ import annotations

import numpy as np

from facerec.gallery.results import Candidate
from facerec.gallery.search import Search
from facerec.openset.threshold_policy import ThresholdInForce


def lookalikes(search: Search, embedding: np.ndarray, rule: ThresholdInForce,
               among: list[Candidate] | None = None) -> list[tuple[str, float]]:
    """Enrolled people this face matches at or above the threshold in force (`rule`), best first, with their
    normalised scores (searched for, or `among`): the same rule and the same score as identify, so a new person
    is refused as a look-alike exactly when identify would have given them someone else's name, and a photo added
    to a person is refused exactly when identify would not name them."""
    candidates = search.search(embedding[None], top_k=5)[0] if among is None else among
    return [(c.name, c.score) for c in candidates if c.score >= rule.threshold]


def is_best_match(found: list[tuple[str, float]], name: str) -> bool:
    """Whether `name` comes first among the look-alikes: identify would name the face as them."""
    return bool(found) and found[0][0] == name
