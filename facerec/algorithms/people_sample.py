"""Seeded samples of whole people from a gallery: what the health report and the gallery's own stranger tail
measure when a gallery is too large to score every face.

Why whole people: both measure how a person's faces relate to each other and to other people's; a sample that
kept some of a person's photos and dropped others would change who counts as that person's nearest positive.
Why seeded: the same gallery gives the same report and the same threshold, run after run.
"""

from __future__ import annotations

import numpy as np


def people_reaching(face_counts: np.ndarray, faces: int) -> int:
    """How many of these people, in this order, it takes for their photos to reach `faces` faces (all of them
    when together they have fewer): the person whose photos reach it is counted."""
    return int(np.searchsorted(np.cumsum(face_counts), faces)) + 1


def draw_whole_people(face_counts: np.ndarray, faces: int, seed: int, among: np.ndarray | None = None,
                      reach: bool = True) -> np.ndarray:
    """Positions into `face_counts` of people drawn in a seeded random order (from the positions `among`, or
    from everyone), each with all their photos, until `faces` faces.

    reach=True: the person whose photos reach `faces` is in, so the sample is never short of it (unless everyone
    together is); reach=False: that person is left out, so the sample never exceeds `faces` (a hard cap).
    """
    order = np.random.default_rng(seed).permutation(len(face_counts) if among is None else among)
    taken = people_reaching(face_counts[order], faces)
    if not reach and int(face_counts[order[:taken]].sum()) > faces:
        taken -= 1
    return order[:taken]
