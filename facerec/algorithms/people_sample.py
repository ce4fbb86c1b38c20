"""Seeded samples of whole people from a gallery: what the health report and the gallery's own stranger tail
measure when a gallery is too large to score every face.

Why whole people: both measure how a person's faces relate to each other and to other people's; a sample that
kept some of a person's photos and dropped others would change who counts as that person's nearest positive.
Why seeded: the same gallery gives the same report and the same threshold, run after run. The order people are
drawn in is the database's (`FacesTable.people_in_drawn_order`), so only the people a sample can take are read.
"""

from __future__ import annotations

import numpy as np


def people_reaching(face_counts: np.ndarray, faces: int) -> int:
    """How many of these people, in this order, it takes for their photos to reach `faces` faces (all of them
    when together they have fewer): the person whose photos reach it is counted."""
    return int(np.searchsorted(np.cumsum(face_counts), faces)) + 1


def taken_whole(face_counts: np.ndarray, faces: int, reach: bool = True) -> int:
    """How many of these people, in the order given (a seeded draw: `FacesTable.people_in_drawn_order`), a sample
    of `faces` faces takes, each with all their photos.

    reach=True: the person whose photos reach `faces` is in, so the sample is never short of it (unless everyone
    together is); reach=False: that person is left out, so the sample never exceeds `faces` (a hard cap).
    """
    taken = min(people_reaching(face_counts, faces), len(face_counts))
    if not reach and int(face_counts[:taken].sum()) > faces:
        taken -= 1
    return taken
