"""One event per person per visit: a track decided turns into "arrived" only when that person is not already
there, and "left" follows once none of their tracks has been on screen for `leave_after` seconds.

A person is their name when the track was named. A track nobody enrolled matches is one unknown person: it joins
an unknown visit still open when its pool and that visit's are one face by a strict verification
(`CameraFaces.same_face`), so a stranger who turns away and back is one visit, not one per track; otherwise it opens
a visit of its own. A visit of an enrolled person stays open across their tracks (they turn, are hidden, step out
of the frame and back within `leave_after`), so a person standing in front of a camera is one arrival, whatever the
tracker does.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from facerec.cameras.clock import utc_now

LEAVE_AFTER_S = 10.0  # a person not seen for this long has left (the default; `facerec watch --leave-after`)


@dataclass
class Visit:
    id: int
    name: str | None
    arrived: float  # camera clock (seconds)
    last_seen: float
    tracks: set[int] = field(default_factory=set)  # tracks of this visit still on screen
    pool: np.ndarray | None = None  # an unknown visit's face (its first track's pool)


@dataclass(frozen=True)
class Event:
    """What a sink sends: `kind` "arrived" or "left", the camera, the visit, who (`name` None: unknown), the
    decision behind it (score, the threshold it passed or missed, the stranger rate behind that threshold), when
    (UTC, ISO 8601; an arrival also says when its face was first on a frame), how long the visit lasted (left), and
    the best face's JPEG only where the operator opted in."""

    kind: str
    camera: str
    visit: int
    name: str | None
    score: float | None
    score_threshold: float | None
    expected_fpir: float | None
    at: str
    seconds: float | None = None
    crop_jpeg: bytes | None = None
    first_seen: str | None = None  # an arrival: when the face it was decided on was first on a frame (UTC)
    stream_seconds: float | None = None  # ... and where that frame is in the stream (since its connection's first)

    def to_dict(self, with_face: bool = True) -> dict:
        """The event as sinks send it; `with_face` False leaves out the face (the page's recent events, the
        retained attributes on MQTT)."""
        import base64

        data = {"event": self.kind, "camera": self.camera, "visit": self.visit,
                "name": self.name if self.name is not None else "unknown", "known": self.name is not None,
                "score": None if self.score is None else round(self.score, 4),
                "score_threshold": None if self.score_threshold is None else round(self.score_threshold, 4),
                "expected_fpir": self.expected_fpir, "at": self.at}
        if self.first_seen is not None:
            data["first_seen"] = self.first_seen
        if self.stream_seconds is not None:
            data["stream_seconds"] = round(self.stream_seconds, 3)
        if self.seconds is not None:
            data["seconds"] = round(self.seconds, 1)
        if self.crop_jpeg is not None and with_face:
            data["face_jpeg_base64"] = base64.b64encode(self.crop_jpeg).decode("ascii")
        return data


class Visits:
    """The visits open on one camera. `decided` per track decision, `seen` per frame, `ended` per ended track,
    `left` once a frame: each answers the events it makes."""

    def __init__(self, camera: str, same_face: Callable[[np.ndarray, np.ndarray], float | None],
                 leave_after: float = LEAVE_AFTER_S) -> None:
        self.camera, self._same_face, self.leave_after = camera, same_face, leave_after
        self.open: dict[int, Visit] = {}
        self._of_track: dict[int, int] = {}
        self._numbers = itertools.count(1)

    def decided(self, track_id: int, match, pool: np.ndarray | None, at: float,
                crop_jpeg: bytes | None = None, first_seen: str | None = None,
                stream_seconds: float | None = None) -> Event | None:
        """The track's decision; an "arrived" event when it opens a visit."""
        visit = self._visit_for(match.name, pool)
        if visit is not None:
            visit.tracks.add(track_id)
            visit.last_seen = at
            self._of_track[track_id] = visit.id
            return None
        visit = Visit(next(self._numbers), match.name, at, at, {track_id}, None if match.name else pool)
        self.open[visit.id] = visit
        self._of_track[track_id] = visit.id
        rule = match.rule
        return Event("arrived", self.camera, visit.id, match.name, match.score, match.score_threshold,
                     None if rule is None else rule.to_dict().get("expected_fpir"), utc_now(), crop_jpeg=crop_jpeg,
                     first_seen=first_seen, stream_seconds=stream_seconds)

    def seen(self, track_ids, at: float) -> None:
        """The tracks on this frame: their visits are still going."""
        for track_id in track_ids:
            visit = self.open.get(self._of_track.get(track_id, -1))
            if visit is not None:
                visit.last_seen = at

    def ended(self, track_id: int) -> None:
        """The track left the screen: its visit goes on until `left` finds it unseen for `leave_after`."""
        visit = self.open.get(self._of_track.pop(track_id, -1))
        if visit is not None:
            visit.tracks.discard(track_id)

    def left(self, at: float) -> list[Event]:
        """"left" for each visit with no track on screen for `leave_after` seconds."""
        gone = [v for v in self.open.values() if not v.tracks and at - v.last_seen >= self.leave_after]
        for visit in gone:
            del self.open[visit.id]
        return [Event("left", self.camera, v.id, v.name, None, None, None, utc_now(),
                      seconds=v.last_seen - v.arrived) for v in gone]

    def _visit_for(self, name: str | None, pool: np.ndarray | None) -> Visit | None:
        if name is not None:
            return next((v for v in self.open.values() if v.name == name), None)
        if pool is None:
            return None
        scored = [(score, v) for v in self.open.values() if v.name is None and v.pool is not None
                  for score in [self._same_face(v.pool, pool)] if score is not None]
        return max(scored, key=lambda item: item[0])[1] if scored else None
