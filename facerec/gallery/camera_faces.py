"""A camera that never stops (`facerec watch`, #67): its faces followed frame by frame as a video's are, each track
decided once, early enough for an event while the person is still there.

A track is searched once: when it holds `DECIDE_VIEWS` embedded views, or `DECIDE_SECONDS` after it started with
at least one, or when it ends before either (a face that passed quickly). One search per track keeps the calibrated
stranger rate a track's: searching again as the pool grows (the Live tab's answers) gives a stranger a new chance
each time. The decision is at the threshold for pooled evidence (`VideoSearch.rule`), as a video file's tracks are.
Ended tracks are given up as they end (`FaceFollower.forget_ended`), so a camera watched for months holds only the
faces on screen; nothing is kept as a sighting or a stranger here (the caller decides what an event keeps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from facerec.gallery.results import FaceMatch
from facerec.video.decode import Frame
from facerec.video.tracks import Track

DECIDE_VIEWS = 3  # views pooled before a track is searched
DECIDE_SECONDS = 1.0  # ... or this long after it started, with at least one view


@dataclass(frozen=True)
class Decision:
    """One track decided: its `match` (name or None, score, the stranger rate behind it)."""

    track: Track
    match: FaceMatch


class CameraFaces:
    """One camera's faces: `see(pixels, at)` per frame taken (RGB uint8; `at`: seconds since the camera started),
    answering the tracks decided on it and the tracks that ended."""

    def __init__(self, videos, fps: float) -> None:
        self._videos, self.fps = videos, float(fps)
        self.follower = videos.follower(self.fps, bounded=False)
        self._decided: set[int] = set()
        self._frame = -1

    def see(self, pixels: np.ndarray, at: float) -> tuple[list[Decision], list[Track]]:
        """(tracks decided on this frame, tracks ended since the last frame)."""
        self._frame = index = max(round(at * self.fps), self._frame + 1)
        self.follower.see(Frame(index, at, np.ascontiguousarray(pixels)))
        ended = self.follower.forget_ended()
        due = [t for t in self.follower.active.values() if t.id not in self._decided and t.pooled is not None
               and (t.views >= DECIDE_VIEWS or at - t.times[0] >= DECIDE_SECONDS)]
        due += [t for t in ended if t.id not in self._decided and t.pooled is not None]
        decisions = []
        if due:
            rule, _default = self._videos.rule()
            decisions = [Decision(t, m) for t, m in zip(due, self._videos.decide(due, rule, top_k=1))]
            self._decided.update(t.id for t in due)
        self._decided.difference_update(t.id for t in ended)  # bounded: only the tracks on screen
        return decisions, ended

    def same_face(self):
        """Whether two tracks' pools are one face (a strict verification: `VideoSearch.same_face`)."""
        return self._videos.same_face()
