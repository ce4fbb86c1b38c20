"""A photo library's unknown faces grouped into people in one pass (`facerec identify DIR/ --group`, #66).

The faces of a library run that nobody enrolled matches are grouped as suggested people are grouped
(`facerec.algorithms.grouping`: a face joins the group most of whose faces it matches at the card's cosine at
`GROUPING_FAR`, else it starts a group), without the suggestions' second test (a pair must also stand out from each
face's cohort of look-alikes): that test is for a memory of thousands of strangers passing a camera, where faces of
one age and origin crowd together; in a library it split people into pieces, so that most people not enrolled got no group of two photos
(`benchmarks/library_grouping.py` measures both on held-out people; docs/results.md). Faces are placed once: a second run over the same library passes the groups it found
before, and only the new faces are placed, so a group keeps its number. A group most of whose faces have one
enrolled person as their best match at the card's cosine at `NEAR_FAR` is that person's missed photos, not a new
person: it is marked as resembling them, as a suggestion is.

Beside the gallery, not in it: the library run keeps its faces in its own files (`facerec.cli.library`), and this
holds nothing between calls.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from facerec.algorithms.grouping import assign_groups, centrality
from facerec.gallery.suggestions import GROUPING_FAR, NEAR_FAR
from facerec.openset.threshold_policy import ScoreCalibration

HINT_FAR = 1e-2  # a group's closest enrolled person is named as a hint only when one of its faces is this close
NO_COHORT_TEST = float("-inf")  # every pair's cohort z-score passes: the cosine alone decides (see above)


@dataclass(frozen=True)
class LibraryGrouping:
    """`labels`: each face's group (the groups passed in keep their numbers; new ones are numbered on from the
    largest, in the order their first face came); `resembles`: group -> the enrolled person most of its faces are
    nearest to at NEAR_FAR; `typical`: each face's mean cosine to the rest of its group (most typical first to
    enroll from); `closest`: the enrolled person each group's faces are most often nearest to, with the best
    cosine (a hint for the admin: a group may be that person's missed photos, to add to them)."""

    labels: np.ndarray
    resembles: dict[int, str]
    typical: np.ndarray
    closest: dict[int, tuple[str, float]]  # group -> the enrolled person its faces are most often nearest to, and
    #                                        the best cosine of one to them, when at least HINT_FAR's (a hint: a group
    #                                        may be their missed photos)


class LibraryGroups:
    def __init__(self, calibration: ScoreCalibration) -> None:
        self._grouping_threshold = calibration.threshold_at_far(GROUPING_FAR)
        self._near_threshold = calibration.threshold_at_far(NEAR_FAR)
        self._hint_threshold = calibration.threshold_at_far(HINT_FAR)

    def group(self, embeddings: np.ndarray, labels: np.ndarray, nearest: list[tuple[str | None, float]]) -> LibraryGrouping:
        """Group the faces whose label is -1 among those already grouped. `embeddings` [N, D] unit vectors;
        `nearest`: each face's best enrolled candidate and its cosine (None: nobody enrolled)."""
        embeddings = np.asarray(embeddings, np.float32)
        labels = np.asarray(labels, np.int64)
        first_new = int(labels.max()) + 1 if len(labels) and labels.max() >= 0 else 0
        ids = np.arange(len(embeddings), dtype=np.int64) + first_new  # a new group is named after its first face
        placed = assign_groups(ids, embeddings, labels, self._grouping_threshold, min_z=NO_COHORT_TEST)
        grouped = labels.copy()
        for position, face_id in enumerate(ids):
            grouped[position] = placed.get(int(face_id), grouped[position])
        renumbered: dict[int, int] = {}
        for position, label in enumerate(grouped):
            if label >= first_new:
                grouped[position] = renumbered.setdefault(int(label), first_new + len(renumbered))
        typical = np.zeros(len(grouped))
        resembles, closest = {}, {}
        for group in np.unique(grouped):
            members = np.flatnonzero(grouped == group)
            typical[members] = centrality(embeddings[members])
            near = [nearest[m][0] for m in members if nearest[m][0] and nearest[m][1] >= self._near_threshold]
            if near:
                person, count = Counter(near).most_common(1)[0]
                if 2 * count >= len(members):
                    resembles[int(group)] = person
            names = Counter(nearest[m][0] for m in members if nearest[m][0])
            if names:
                person = names.most_common(1)[0][0]
                best = max(nearest[m][1] for m in members if nearest[m][0] == person)
                if best >= self._hint_threshold:  # else every group of a one-person gallery names that person
                    closest[int(group)] = (person, round(best, 4))
        return LibraryGrouping(grouped, resembles, typical, closest)
