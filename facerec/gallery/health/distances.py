"""Distances between unit vectors, from the similarities the gallery keeps: what Health's figures are read in.

d = sqrt(2 - 2 cos): 0 for identical faces, sqrt(2) ~ 1.41 for unrelated ones.
"""

from __future__ import annotations

import math

import numpy as np


def similarity_to_distance(similarity: float) -> float:
    return math.sqrt(max(0.0, 2.0 - 2.0 * similarity))


def nearest_other_person_distance(nearest_other_similarities: list[float]) -> float:
    """Median, over people, of the distance from a person's faces to the nearest face of anyone else (NaN with
    fewer than two people): how close the gallery's closest look-alikes are, leaving a person's own photos out."""
    if not nearest_other_similarities:
        return float("nan")
    return similarity_to_distance(float(np.median(nearest_other_similarities)))
