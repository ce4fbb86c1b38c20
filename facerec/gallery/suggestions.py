"""Suggested people: unknown faces seen again and again, grouped, offered for enrollment ("seen 5 times, not
enrolled: name them?").

The strangers memory (`facerec.gallery.strangers`, opt-in) keeps the faces; here they are grouped
(`facerec.algorithms.grouping`: enough of a group's faces must match at a strict pairwise threshold, the model card's
cosine at GROUPING_FAR, and stand out from each face's cohort of look-alikes, so two strangers are rarely merged),
and a group of at least MIN_FACES faces
from at least MIN_PHOTOS photos becomes a suggestion. A group most of whose faces have one enrolled person as
their best match at the card's cosine at NEAR_FAR is that person's missed photos, not a new person: it is never
suggested (no suggestion shows an enrolled person's face; the benchmark `benchmarks/suggestions.py` counts them).

Naming a suggestion enrolls the person from its most typical faces (one per photo, at most NAMED_FACES; the first
is the enrollment, the others added photos; low-quality faces last) and forgets the group; dismissing it forgets
the group. Both, like listing, are for the admin password or an admin key only.

Grouping runs on a background thread, outside every write transaction (`facerec.gallery.strangers_grouping`); a
list reads the last grouping published, one page at a time (at most MAX_PAGE suggestions, each naming at most
SHOWN_FACES of its faces), and says when a newer one is under way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import InvalidArgument, NameTaken, UnknownSuggestion
from facerec.faces.detect import DetectedFace
from facerec.formats.archive import decode_crop
from facerec.algorithms.grouping import assign_groups, centrality
from facerec.gallery.people import refuse_taken_name
from facerec.gallery.strangers import StrangersMemory
from facerec.gallery.strangers_grouping import FRESH_WAIT_S, Published, StrangersGrouping
from facerec.names import clean_name
from facerec.openset.threshold_policy import ScoreCalibration
from facerec.storage import as_utc
from facerec.storage.failures import ConflictingWrite
from facerec.storage.schema import Stranger
from facerec.storage.strangers import StrangerRows

MIN_FACES, MIN_PHOTOS = 3, 2
GROUPING_FAR = 1e-4  # per pair of faces: the rate at which two strangers' faces match
NEAR_FAR = 3e-3  # a group whose faces mostly match one enrolled person this closely is that person
NAMED_FACES = 5
SHOWN_FACES = 30  # faces a listed suggestion names (the most typical): a group of thousands lists as many as one of 30
PAGE, MAX_PAGE = 20, 100  # suggestions a list answers by default, and at most


@dataclass
class Suggestion:
    """A group of unknown faces that looks like one person: its id (the group's), faces and photos, best first."""

    id: int
    faces: int
    photos: int
    first_seen: datetime
    last_seen: datetime
    face_ids: list[int]  # the most typical first, at most SHOWN_FACES
    resembles: str | None = None  # the enrolled person most of its faces match at NEAR_FAR (then not suggested)

    def to_dict(self) -> dict:
        return {"id": self.id, "faces": self.faces, "photos": self.photos,
                "first_seen": self.first_seen.isoformat(), "last_seen": self.last_seen.isoformat(),
                "face_ids": self.face_ids}


@dataclass
class NamedSuggestion:
    """A suggestion named: the person enrolled from it, and the faces used."""

    identity_id: int
    name: str
    face_ids: list[int]
    forgotten: int  # faces of the group that were not used, forgotten with it

    def to_dict(self) -> dict:
        return {"identity_id": self.identity_id, "name": self.name, "face_ids": self.face_ids,
                "photos": len(self.face_ids), "forgotten": self.forgotten}


@dataclass
class SuggestionsPage:
    """One page of the suggestions (`limit` from position `offset`, the most often seen first), how many there are
    in all, when the grouping they come from was made (None: never yet) and whether a newer one is under way."""

    suggestions: list[Suggestion]
    total: int
    offset: int
    limit: int
    grouped_at: datetime | None
    refreshing: bool

    def to_dict(self) -> dict:
        return {"suggestions": [s.to_dict() for s in self.suggestions], "total": self.total, "offset": self.offset,
                "limit": self.limit, "grouped_at": None if self.grouped_at is None else self.grouped_at.isoformat(),
                "refreshing": self.refreshing}


class Suggestions:
    def __init__(self, core: Core, *, memory: StrangersMemory, calibration: ScoreCalibration) -> None:
        self._store, self._index, self._thresholds, self._memory = core.store, core.index, core.thresholds, memory
        self._quality, self._model_id = core.quality, core.model_id
        self._grouping_threshold = calibration.threshold_at_far(GROUPING_FAR)
        self._near_threshold = calibration.threshold_at_far(NEAR_FAR)
        self._grouping = StrangersGrouping(core.store, memory, core.model_id, self._place, self._suggestions_of)

    def list(self, offset: int = 0, limit: int = PAGE, wait_s: float = FRESH_WAIT_S,
             group_first: bool = False) -> SuggestionsPage:
        """One page of the suggested people, the most often seen first, from the last grouping published (empty
        while the memory is off). When faces were kept or forgotten since, a new grouping is asked of the
        background thread and awaited at most `wait_s` (see `facerec.gallery.strangers_grouping`).
        `group_first`: group the faces kept since the last grouping first, on the caller's thread (`refresh`), for
        the command line and scripts, which have no request to keep answering; never a request's."""
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise InvalidArgument(f"offset must be at least 0 and limit from 1 to {MAX_PAGE}")
        if not self._memory.enabled:
            return SuggestionsPage([], 0, offset, limit, None, False)
        if group_first:
            self.refresh()
        published, refreshing = self._grouping.current(wait_s)
        shown = _shown(published)
        return SuggestionsPage(shown[offset:offset + limit], len(shown), offset, limit,
                               None if published is None else published.made_at, refreshing)

    def get(self, suggestion_id: int) -> Suggestion:
        """A suggestion of the last grouping published (UnknownSuggestion when it has none of this id)."""
        published, refreshing = self._grouping.current() if self._memory.enabled else (None, False)
        for suggestion in _shown(published):
            if suggestion.id == int(suggestion_id):
                return suggestion
        later = "; the kept faces are being grouped, try again in a moment" if refreshing else ""
        raise UnknownSuggestion(f"no suggestion {int(suggestion_id)} (it was named, dismissed or forgotten, or its "
                                f"faces are no longer {MIN_FACES} from {MIN_PHOTOS} photos){later}")

    def refresh(self) -> list[Suggestion]:
        """Group the faces kept since the last grouping now, on the caller's thread (the command line, tests,
        benchmarks; never a request's), and publish it; every group that qualifies, those that look like an
        enrolled person included (marked `resembles`; never listed)."""
        return self._grouping.refresh().result

    def close(self) -> None:
        self._grouping.close()

    def crops(self, face_ids: list[int]) -> dict[int, bytes]:
        """The aligned faces (JPEG) of kept strangers, for a suggestion's pictures."""
        with self._store.reading() as tables:
            return tables.strangers.crops([int(f) for f in face_ids])

    def name(self, suggestion_id: int, name: str, note: str | None = None) -> NamedSuggestion:
        """Enroll the suggestion as `name` from its best faces (see the module), then forget its faces. Refused
        (NameTaken, InvalidArgument) like an enrollment when the name is taken or unusable."""
        name = clean_name(name)
        suggestion = self.get(suggestion_id)
        store = self._store
        with store.reading() as tables:
            refuse_taken_name(tables, name)
            members = {m.id: m for m in tables.strangers.of_group(self._model_id, suggestion.id)}
            chosen = self._enrollment_faces([members[f] for f in suggestion.face_ids if f in members])
            if not chosen:  # dismissed or forgotten since the grouping shown (by another process)
                raise UnknownSuggestion(f"no suggestion {suggestion.id} is kept any more")
            rows = [_face_row(face, self._model_id, "enrolled" if i == 0 else "added") for i, face in enumerate(chosen)]
        try:
            with store.transaction() as tx:
                refuse_taken_name(tx, name)
                identity_id, first = tx.people.add(name, note, rows[0])
                person = tx.people.by_id(identity_id)
                face_ids = [first] + [tx.people.add_face(person, row) for row in rows[1:]]
        except ConflictingWrite:
            raise NameTaken(f"'{name}' is already enrolled; pick another name", name) from None
        self._index.after_write(store)
        try:
            forgotten = self.dismiss(suggestion.id) - len(face_ids)
        except UnknownSuggestion:  # dismissed by someone else meanwhile: the person is enrolled all the same
            forgotten = 0
        return NamedSuggestion(identity_id, name, face_ids, max(forgotten, 0))

    def dismiss(self, suggestion_id: int) -> int:
        """Forget every face of the group; how many went (UnknownSuggestion when there is no such group)."""
        with self._store.sightings_transaction() as tx:
            removed = tx.strangers.remove_group(self._model_id, int(suggestion_id))
        if not removed:
            raise UnknownSuggestion(f"no suggestion {int(suggestion_id)} is kept")
        self._grouping.revise(lambda found: [s for s in found if s.id != int(suggestion_id)])
        return removed

    def _place(self, rows: StrangerRows, stop: Callable[[], bool]) -> dict[int, int]:
        """Groups for the kept faces not grouped yet (`facerec.algorithms.grouping`), outside any transaction."""
        return assign_groups(rows.ids, rows.embeddings, rows.groups, self._grouping_threshold, stop=stop)

    def _suggestions_of(self, rows: StrangerRows, groups: np.ndarray) -> list[Suggestion]:
        """Every group of enough faces from enough photos, the most often seen first, those that look like an
        enrolled person marked."""
        members: dict[int, list[int]] = {}
        for position, group in enumerate(groups):
            if group >= 0:
                members.setdefault(int(group), []).append(position)
        found = [s for s in (_suggestion(rows, group, positions) for group, positions in members.items()) if s]
        self._mark_resembling(found, rows, members)
        return sorted(found, key=lambda s: (-s.faces, -s.last_seen.timestamp()))

    def _mark_resembling(self, found: list[Suggestion], rows: StrangerRows, members: dict[int, list[int]]) -> None:
        """Mark each suggestion most of whose faces have one enrolled person as their best match at or above the
        near threshold (see the module)."""
        if not found:
            return
        self._thresholds.in_force()  # brings the index up to date
        positions = [members[suggestion.id] for suggestion in found]
        similarities, face_ids = self._index.search(rows.embeddings[np.concatenate(positions)], 1)  # one search
        labels = self._store.faces.labels([int(f) for f in face_ids[:, 0] if f >= 0])
        near = [labels[int(f)][1] if f >= 0 and int(f) in labels and s >= self._near_threshold else None
                for s, f in zip(similarities[:, 0], face_ids[:, 0])]
        start = 0
        for suggestion, theirs in zip(found, positions):
            named = [person for person in near[start:start + len(theirs)] if person is not None]
            start += len(theirs)
            if not named:
                continue
            person, count = Counter(named).most_common(1)[0]
            if 2 * count >= suggestion.faces:
                suggestion.resembles = person

    def _enrollment_faces(self, members: list[Stranger]) -> list[Stranger]:
        """At most NAMED_FACES faces, one per photo, the most typical first (`members` come in that order), those
        the enrollment quality check finds poor after the others."""
        one_per_photo, photos = [], set()
        members = members[:4 * NAMED_FACES]  # the quality check embeds each face again: a bounded few
        for member in members:
            if member.photo_sha256 not in photos:
                photos.add(member.photo_sha256)
                one_per_photo.append(member)

        def poor(member: Stranger) -> bool:  # None without a calibration next to the model: none is poor
            quality = self._quality.assess(DetectedFace.kept(member.box, member.landmarks),
                                          decode_crop(member.crop_jpeg))
            return quality is not None and quality.low

        return sorted(one_per_photo, key=poor)[:NAMED_FACES]  # a stable sort: the most typical first in each


def _suggestion(rows: StrangerRows, group: int, positions: list[int]) -> Suggestion | None:
    """The group as a suggestion, when it has enough faces from enough photos."""
    photos = {rows.photos[p] for p in positions}
    if len(positions) < MIN_FACES or len(photos) < MIN_PHOTOS:
        return None
    order = np.argsort(-centrality(rows.embeddings[positions]), kind="stable")
    seen = [as_utc(rows.seen_at[p]) for p in positions]
    return Suggestion(group, len(positions), len(photos), min(seen), max(seen),
                      [int(rows.ids[positions[i]]) for i in order[:SHOWN_FACES]])


def _shown(published: Published[list[Suggestion]] | None) -> list[Suggestion]:
    """The suggestions a list shows: those of the last grouping that look like no enrolled person."""
    return [] if published is None else [s for s in published.result if s.resembles is None]


def _face_row(member: Stranger, model_id: str, origin: str) -> dict:
    return {"embedding": np.frombuffer(member.embedding, np.float32).copy(), "model_id": model_id,
            "photo_sha256": member.photo_sha256, "box": list(member.box), "landmarks": list(member.landmarks),
            "crop_jpeg": member.crop_jpeg, "origin": origin}

