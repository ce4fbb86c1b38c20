"""Frames in, tracks out: detect every k-th frame, follow each face, embed it when its track starts and when a
better view arrives, pool the views.

The budget (a video should be followed faster than it plays, on two cores): detection runs on every `every`-th
frame only, and a face is embedded only (1) when its track starts, (2) when a view scores higher than the track's
best by `BETTER_BY` on the enrollment quality score (`facerec.video.tracks.ViewQuality`), (3) at most once a
`REFRESH_SECONDS` for a view at least as good as its best (more independent views pool better), (4) when two
faces' boxes overlap and only their looks can tell them apart (`facerec.video.tracker`), (5) when a track missed on
the previous detected frame is found again. At most `MAX_VIEWS` views are pooled while a face is followed without
a gap; a track re-linked after one (below) pools the views of each stretch. Once a `REFRESH_SECONDS` a track's face
is embedded even when the view is not pooled: a check that it is still the same face (another person can step into
the very place of the last, which boxes cannot tell); a view farther than `SAME_FACE_COSINE` from the track's pool
ends the track and starts another. A track found again (5) is continued only by a face its pool confirms (at least
`SAME_FACE_COSINE`), embedded before anything of it joins the track: a face that left is often replaced in its very
place a moment later (someone stepping up to a door, a desk), and boxes alone would give the newcomer the track
until the next check. What was skipped is counted in the answer (`FollowCounts`), never hidden.

A track not seen for `MAX_GAP_SECONDS` ends, and every track ends at a cut. At the end, a track that starts within
`RELINK_SECONDS` of another's end and whose pool is strong evidence of the same face (`relinked`; the caller says
what is strong: `facerec.gallery.video` asks for a verification at a strict false-accept rate) continues it: a
face that left the frame, was hidden, or was cut away from and came back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from facerec.faces.align import align_face
from facerec.faces.detect import DetectedFace, rescaled
from facerec.video.decode import Frame
from facerec.video.tracker import (MAX_GAP_SECONDS, MIN_OVERLAP, Motion, by_appearance, colour_histogram, is_cut,
                                   matches, overlap)
from facerec.video.tracks import Track, ViewQuality

BETTER_BY = 0.05  # on the quality score in [0, 1]: a view this much better than the track's best is embedded
REFRESH_SECONDS = 1.0
MAX_VIEWS = 12  # views pooled while a face is followed without a gap (a re-linked track: per stretch)
RELINK_SECONDS = 3.0
SAME_FACE_COSINE = 0.3  # an ambiguous detection continues the track it is at least this close to
# Tracks one video may start: past it, a face that would start another is not followed (counted: `untracked`), so
# a video of ever-changing crowds costs what its frames cost, not what its tracks' comparisons would (SECURITY.md).
MAX_TRACKS = 1_000


@dataclass
class FollowCounts:
    """What was done and skipped: frames decoded, frames detected on (every k-th), faces detected, views
    embedded, faces aligned, tracks re-linked after a gap, faces not followed (past `MAX_TRACKS`)."""

    frames: int = 0
    detected_frames: int = 0
    faces: int = 0
    embedded: int = 0
    aligned: int = 0
    relinked: int = 0
    untracked: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


class FaceFollower:
    """Follows the faces of one video. `see(frame)` per frame (frames without pixels are only counted); `tracks()`
    at the end. `detector(pixels) -> faces` and `embed(crops) -> unit embeddings` are the photo pipeline's;
    `scale`: of the frames' pixels against the video's own size (boxes are reported in the video's own pixels)."""

    def __init__(self, detector, embed, quality: ViewQuality, fps: float, scale: float = 1.0,
                 bounded: bool = True) -> None:
        self.detector, self.embed, self.quality, self.fps, self.scale = detector, embed, quality, fps, scale
        self.bounded = bounded  # False: a camera, which takes its ended tracks as they end (`forget_ended`)
        self.counts = FollowCounts()
        self.active: dict[int, Track] = {}
        self.motions: dict[int, Motion] = {}
        self.ended: list[Track] = []
        self._next_id = 1
        self._histogram: np.ndarray | None = None
        self._previous: int | None = None  # the last frame detected on

    def see(self, frame: Frame) -> list[Track]:
        """Take one frame; returns the tracks that gained a view on it (a live caller searches those again)."""
        self.counts.frames += 1
        if frame.pixels is None:
            return []
        self.counts.detected_frames += 1
        faces = list(self.detector(frame.pixels))
        self.counts.faces += len(faces)
        histogram = colour_histogram(frame.pixels)
        self._end_lost(frame.index, cut=is_cut(self._histogram, histogram))
        self._histogram = histogram
        boxes = [face.box for face in faces]
        assigned, ambiguous = matches(self.motions, boxes, frame.index)
        lost = [d for d, t in assigned.items() if self._previous is not None and self.motions[t].frame < self._previous]
        if lost:  # found again after a frame without it (5): its face decides, as where boxes are ambiguous
            ambiguous = sorted(set(ambiguous) | set(lost))
            assigned = {d: t for d, t in assigned.items() if d not in lost}
        self._previous = frame.index
        crops: dict[int, np.ndarray] = {}
        if ambiguous:
            embedded = self._embedded(frame, faces, ambiguous, crops)
            candidates = [{t for t, m in self.motions.items() if overlap(m.predicted(frame.index), boxes[d])
                           >= MIN_OVERLAP} for d in ambiguous]
            pooled = {t: self.active[t].pooled for t in set().union(*candidates) if self.active[t].pooled is not None}
            taken = set(assigned.values())
            for detection, track_id in zip(ambiguous, by_appearance(embedded, candidates, pooled, SAME_FACE_COSINE)):
                if track_id is not None and track_id not in taken:
                    assigned[detection] = track_id
                    taken.add(track_id)
        gained: list[Track] = []
        wanted: list[tuple[int, Track, float | None]] = []  # (detection, track, quality) to embed now
        for detection, face in enumerate(faces):
            track = self.active.get(assigned[detection]) if detection in assigned else None
            if track is None:
                track = self._start()
                if track is None:
                    self.counts.untracked += 1
                    continue
            track.saw(frame.index, frame.time, self._own(face).box)
            motion = self.motions.get(track.id)
            if motion is None:
                self.motions[track.id] = Motion(np.asarray(face.box, np.float64), frame.index)
            else:
                motion.moved_to(face.box, frame.index)
            quality = self._worth_a_view(track, face, frame, detection, crops)
            if quality is not None or frame.index - track.last_view_frame >= REFRESH_SECONDS * self.fps:
                wanted.append((detection, track, quality))  # a view to pool, or (None) a check of who it is
        if wanted:
            embeddings = self._embedded(frame, faces, [d for d, _t, _q in wanted], crops)
            for (detection, track, quality), embedding in zip(wanted, embeddings):
                if track.pooled is not None and float(embedding @ track.pooled) < SAME_FACE_COSINE:
                    track = self._split(track, frame.index, faces[detection])  # another face took its place
                    if track is None:
                        continue
                elif quality is None:  # a check of who it is, not a view better than the pool's
                    track.last_view_frame = frame.index
                    continue
                track.add_view(embedding, quality or 0.0, frame.index, self._own(faces[detection]), crops[detection])
                gained.append(track)
        return gained

    def _split(self, track: Track, frame: int, face: DetectedFace) -> Track | None:
        """End `track` before this frame, whose face is not its own, and start another with it (None: past
        `MAX_TRACKS`, the face is not followed)."""
        track.frames.pop()
        time, box = track.times.pop(), track.boxes.pop()
        self.motions.pop(track.id, None)
        self.ended.append(self.active.pop(track.id))
        new = self._start()
        if new is None:
            self.counts.untracked += 1
            return None
        new.saw(frame, time, box)  # the frame's own time (a camera's frames: its clock), not index / fps
        self.motions[new.id] = Motion(np.asarray(face.box, np.float64), frame)
        return new

    def forget_ended(self) -> list[Track]:
        """The tracks that ended since the last call, given up: a camera that never stops holds only the faces
        on screen."""
        ended, self.ended = self.ended, []
        return ended

    def tracks(self) -> list[Track]:
        """Every track, in the order they started; ends the ones still open."""
        self.ended.extend(self.active.values())
        self.active, self.motions = {}, {}
        return sorted(self.ended, key=lambda t: t.first_frame)

    # ----- the parts of `see` -----------------------------------------------------------------------------------
    def _start(self) -> Track | None:
        if self.bounded and self._next_id > MAX_TRACKS:
            return None
        track = Track(self._next_id)
        self._next_id += 1
        self.active[track.id] = track
        return track

    def _end_lost(self, frame: int, cut: bool) -> None:
        """End the tracks not seen for too long, or every track at a cut (`facerec.video.tracker.is_cut`)."""
        gap = MAX_GAP_SECONDS * self.fps
        for track_id in [t for t, m in self.motions.items() if cut or frame - m.frame > gap]:
            self.ended.append(self.active.pop(track_id))
            del self.motions[track_id]

    def _own(self, face: DetectedFace) -> DetectedFace:
        """A face found on the (possibly shrunk) frame in the video's own pixels."""
        return face if self.scale == 1.0 else rescaled(face, 1.0 / self.scale)

    def _crop(self, frame: Frame, face: DetectedFace, detection: int, crops: dict[int, np.ndarray]) -> np.ndarray:
        if detection not in crops:
            crops[detection] = align_face(frame.pixels, face.landmarks)
            self.counts.aligned += 1
        return crops[detection]

    def _embedded(self, frame: Frame, faces: list[DetectedFace], detections: list[int],
                  crops: dict[int, np.ndarray]) -> np.ndarray:
        batch = np.stack([self._crop(frame, faces[d], d, crops) for d in detections])
        self.counts.embedded += len(detections)
        return self.embed(batch)

    def _worth_a_view(self, track: Track, face: DetectedFace, frame: Frame, detection: int,
                      crops: dict[int, np.ndarray]) -> float | None:
        """The view's quality when it should be embedded into the track's pool, else None."""
        if track.views >= MAX_VIEWS:
            return None
        if track.views == 0:
            return self.quality.of(face, self._crop(frame, face, detection, crops))
        refresh = frame.index - track.last_view_frame >= REFRESH_SECONDS * self.fps
        quality = self.quality.of(face, self._crop(frame, face, detection, crops))
        if quality >= track.best_quality + BETTER_BY or (refresh and quality >= track.best_quality - BETTER_BY):
            return quality
        return None


def relinked(tracks: list[Track], same_face: Callable[[np.ndarray, np.ndarray], float | None],
             window_frames: float) -> tuple[list[Track], int]:
    """The tracks with each one that continues an earlier one (its face came back after a cut, an occlusion or a
    turn: it starts at most `window_frames` after the earlier one ended) merged into it; `same_face(pooled a,
    pooled b)` is their score when it is strong enough to be one face, else None. Judged on the final pools, the
    best evidence either has; each track joins the earlier one it scores highest with. Returns (tracks, merges)."""
    kept: list[Track] = []
    merges = 0
    for track in sorted(tracks, key=lambda t: t.first_frame):
        best: tuple[float, Track] | None = None
        for earlier in kept:
            gap = track.first_frame - earlier.last_frame
            if 0 < gap <= window_frames and earlier.pooled is not None and track.pooled is not None:
                score = same_face(earlier.pooled, track.pooled)
                if score is not None and (best is None or score > best[0]):
                    best = (score, earlier)
        if best is None:
            kept.append(track)
        else:
            best[1].absorb(track)
            merges += 1
    return kept, merges
