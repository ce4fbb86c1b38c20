"""Identify in a video: every face followed across frames (`facerec.video`), one answer per track.

Each track's pooled embedding (its views weighted by enrollment quality) is searched once, when the video has been
followed to its end, and decided at the threshold for pooled evidence: the threshold in force for this gallery
(`GalleryThresholds`) plus the calibrated shift of `facerec.openset.pooled`, so a stranger's track is named no more
often than the accepted stranger-match rate, as a stranger's photo is. One decision per track: a track is one
sighting (`facerec.gallery.sightings`: its pooled embedding and its best face, kept only at the default rate's
threshold for tracks, paced per person like a photo's faces), never one per frame.

A live camera (`LiveFaces`) follows the same way frame by frame and searches a track again whenever its pool has
doubled in views (1, 2, 4, 8 views): its answer can change while the face is in front of the camera, and is
provisional until the track ends; live answers are not kept as sightings. An unknown track goes to the strangers
memory (suggestions, when the operator opted in) as a photo's unknown face does: its pool and best face, the video
counted as one photo.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from facerec.gallery.core import Core
from facerec.gallery.results import FaceMatch
from facerec.gallery.search import Search
from facerec.gallery.strangers import StrangersMemory
from facerec.gallery.sightings import SightingsMemory
from facerec.openset.pooled import PooledCalibration
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.openset.cohort import normalised
from facerec.provenance import file_sha256
from facerec.video.annotate import write_annotated
from facerec.video.decode import CONTAINERS, Frame, VideoFile, VideoInfo, VideoLimits
from facerec.video.follow import RELINK_SECONDS, FaceFollower, FollowCounts, relinked
from facerec.video.tracks import Track, ViewQuality

RELINK_FAR = 1e-4  # per comparison: how often two strangers' tracks would be taken for one face
# A caller without the admin password (the page's anonymous upload): a photo's upload limit in bytes (15 MB), a
# minute, 1,800 frames, and decoding work of at most 1,800 frames of 1080p (a few kB can decode to far more: #63
# row 5). The interfaces pass it as `limits`; what they may say of videos: `CONTAINERS`.
ANONYMOUS_LIMITS = VideoLimits(max_seconds=60.0, max_bytes=15 << 20, max_frames=1_800, max_side=1280,
                               max_decoded_pixels=1_800 * 1920 * 1080)
__all__ = ["ANONYMOUS_LIMITS", "CONTAINERS", "VideoAnswer", "VideoInfo", "VideoLimits", "VideoSearch"]


@dataclass
class TrackMatch:
    """One track and its answer: `match` is the pooled embedding's decision (`FaceMatch`: name or None, score,
    candidates, its sighting), with the track's best view as its face."""

    track: Track
    match: FaceMatch
    fps: float

    @property
    def name(self) -> str | None:
        return self.match.name

    def to_dict(self) -> dict:
        track, match = self.track, self.match
        return {"track": track.id, "name": match.label, "known": match.name is not None,
                "score": None if match.score is None else round(match.score, 4),
                "similarity": None if match.similarity is None else round(match.similarity, 4),
                "first_frame": track.first_frame, "last_frame": track.last_frame,
                "first_time": round(track.first_frame / self.fps, 3), "last_time": round(track.last_frame / self.fps, 3),
                "frames_seen": len(track.frames), "views": track.views, "best_frame": track.best_frame,
                "best_quality": round(track.best_quality, 4), "box": [round(v) for v in match.face.box],
                "candidates": [{"name": c.name, "score": round(c.score, 4)} for c in match.candidates],
                **({} if match.sighting_id is None else {"sighting_id": match.sighting_id})}


@dataclass
class VideoAnswer:
    """What identify found in one video: its tracks (first seen first), the rule tracks were decided at (the
    threshold for pooled evidence), what was done and skipped (`counts`), the video as the container describes it,
    the sampling (`every`: detected on every k-th frame) and the seconds it took (decode to answer)."""

    tracks: list[TrackMatch]
    rule: ThresholdInForce
    shift: float
    counts: FollowCounts
    info: VideoInfo
    every: int
    seconds: float
    warning: str | None = None

    def to_dict(self) -> dict:
        info = self.info
        return {"tracks": [t.to_dict() for t in self.tracks], "score_threshold": round(self.rule.threshold, 4),
                "pooled_shift": round(self.shift, 4), "threshold_policy": self.rule.to_dict(),
                "video": {"frames": self.counts.frames, "fps": round(info.fps, 3), "width": info.width,
                          "height": info.height, "seconds": round(self.counts.frames / info.fps, 3)},
                "detected_every": self.every, "counts": self.counts.to_dict(),
                "seconds_taken": round(self.seconds, 3), "warning": self.warning}


class VideoSearch:
    """Videos over one gallery: the photo pipeline (detect, align, embed), the quality check (its calibration
    weighs views), identify's search, the threshold in force, the sightings memory, the pooled calibration."""

    def __init__(self, core: Core, *, searching: Search, memory: SightingsMemory, strangers: StrangersMemory) -> None:
        settings, pipeline = core.settings, core.pipeline
        self._pipeline, self._searching, self._thresholds, self._memory = pipeline, searching, core.thresholds, memory
        self._quality, self._scorer, self._limits = core.quality, core.scorer, VideoLimits.of(settings)
        # the calibrated shift for pooled evidence, beside the model
        self._calibration = PooledCalibration.load(settings.video_calibration_path, pipeline.embedder.sha256)
        self._every = max(1, int(settings.video_detect_every))
        self._strangers = strangers

    def follower(self, fps: float, scale: float = 1.0, bounded: bool = True) -> FaceFollower:
        """A video's faces followed (at most `MAX_TRACKS` tracks unless not `bounded`: a camera's)."""
        views = ViewQuality(self._quality.model if self._quality.available else None)
        return FaceFollower(self._pipeline.detector.detect, self._pipeline.embedder.embed, views, fps, scale,
                            bounded)

    def rule(self, fpir: float | None = None, threshold: float | None = None,
             not_below_default: bool = False) -> tuple[ThresholdInForce, ThresholdInForce]:
        """(the rule tracks are decided at, the default rate's rule for tracks: what sightings are kept at); a
        caller without the password never loosens the default (`not_below_default`). A pinned `threshold` is
        taken as given, for tracks as for photos."""
        default = self._pooled(self._thresholds.in_force(with_people=True))
        if fpir is None and threshold is None:
            return default, default
        asked = self._thresholds.synced(fpir, threshold, with_people=True)
        asked = asked if asked.pinned else self._pooled(asked)
        if not_below_default and asked.threshold < default.threshold:
            asked = default
        return asked, default

    def _pooled(self, rule: ThresholdInForce) -> ThresholdInForce:
        return replace(rule, threshold=rule.threshold + self._calibration.shift) if not rule.pinned else rule

    def identify(self, path: str | Path, top_k: int = 3, fpir: float | None = None, threshold: float | None = None,
                 remember: bool = True, not_below_default: bool = False, limits: VideoLimits | None = None,
                 progress: Callable[[int, int], None] | None = None, label: str | None = None) -> VideoAnswer:
        """Follow every face of the video at `path` and decide each track once. `limits`: tighter bounds for this
        call (an anonymous caller); `progress(frames done, frames in all or 0)` after each frame."""
        started = time.perf_counter()
        bounds = self._limits if limits is None else self._limits.tighter(limits)
        with VideoFile(path, bounds, label) as video:
            follower = self.follower(video.info.fps, video.info.scale)
            for frame in video.frames(self._every):
                follower.see(frame)
                if progress is not None:
                    progress(frame.index + 1, video.info.frames)
            info = video.info
        tracks, follower.counts.relinked = relinked([t for t in follower.tracks() if t.pooled is not None],
                                                    self.same_face(), RELINK_SECONDS * info.fps)
        rule, default = self.rule(fpir, threshold, not_below_default)
        matches = self.decide(tracks, rule, top_k)
        if remember and matches:
            pooled, crops = np.stack([t.pooled for t in tracks]), [t.best_crop for t in tracks]
            self._memory.record(matches, pooled, default.threshold, crops)
            strangers = self._strangers
            if strangers.enabled:  # an unknown track is one unknown face of one "photo": the video, by its bytes
                strangers.keep(file_sha256(path), matches, pooled, default.threshold, crops)
        return VideoAnswer([TrackMatch(t, m, info.fps) for t, m in zip(tracks, matches)], rule,
                           self._calibration.shift, follower.counts, info, self._every, time.perf_counter() - started,
                           self._calibration.warning)

    def probe(self, path: str | Path, label: str | None = None) -> VideoInfo:
        """What the container says of the video at `path` (frames, size, codec, container), within the settings'
        bounds: the page's preview note reads it. Raises `InvalidVideo`, `VideoTooLarge`."""
        with VideoFile(path, self._limits, label) as video:
            return video.info

    def annotate(self, path: str | Path, answer: "VideoAnswer", labels: list[str], out: str | Path,
                 limits: VideoLimits | None = None, progress: Callable[[int, int], None] | None = None) -> Path:
        """The video at `path` drawn back with `answer`'s tracks (each with its label in `labels`, green when
        named), written to `out` (VP9 WebM), within the same bounds `identify` had (`limits`: tighter ones)."""
        bounds = self._limits if limits is None else self._limits.tighter(limits)
        drawn = [(t.track, label, t.match.name is not None) for t, label in zip(answer.tracks, labels)]
        return write_annotated(path, out, drawn, bounds, progress)

    def same_face(self) -> Callable[[np.ndarray, np.ndarray], float | None]:
        """Whether two tracks' pools are one face: their normalised score at or above the threshold for one
        comparison at `RELINK_FAR` plus the pooled shift (a stranger's track joined to an enrolled person's would be
        named, so the bar is a hundred times stricter than identify's default rate)."""
        bar = self._thresholds.for_verification(fpir=RELINK_FAR).threshold + self._calibration.shift
        scorer = self._scorer
        known: dict[bytes, object] = {}  # a pool's cohort statistics, computed once per pool, not per comparison

        def statistics(pool: np.ndarray):
            key = pool.tobytes()
            if key not in known:
                known[key] = scorer.statistics(pool[None])
            return known[key]

        def score(a: np.ndarray, b: np.ndarray) -> float | None:
            value = float(normalised(float(a @ b), statistics(a), statistics(b))[0])
            return value if value >= bar else None
        return score

    def decide(self, tracks: list[Track], rule: ThresholdInForce, top_k: int = 3) -> list[FaceMatch]:
        """Each track's pooled embedding searched once and decided at `rule` (its face: the track's best view)."""
        if not tracks:
            return []
        return self._searching.decide([t.best_face for t in tracks], np.stack([t.pooled for t in tracks]), rule, top_k)

    def live(self, fps: float = 10.0) -> "LiveFaces":
        return LiveFaces(self, fps)


class LiveFaces:
    """One camera's faces as they come: `see(pixels)` per frame received (RGB uint8), answering the tracks on it.
    Frames arrive when they are taken; one that arrives while the previous is still being followed is dropped by
    the caller (`facerec.ui.live_tab`), never queued."""

    def __init__(self, videos: VideoSearch, fps: float) -> None:
        self.videos, self.fps = videos, fps
        self.follower = videos.follower(fps)
        self.answers: dict[int, FaceMatch] = {}
        self.frame = 0
        self.started = time.monotonic()

    def see(self, pixels: np.ndarray) -> list[tuple[tuple, FaceMatch | None, int]]:
        """(box, the track's latest answer or None before its first view, track id) per face on this frame."""
        index = round((time.monotonic() - self.started) * self.fps)
        self.frame = index = max(index, self.frame + 1)
        self.follower.see(Frame(index, index / self.fps, np.ascontiguousarray(pixels)))
        due = [t for t in self.follower.active.values()
               if t.pooled is not None and t.views >= 2 * t.searched_views and t.views != t.searched_views]
        if due:
            rule, _default = self.videos.rule()
            for track, match in zip(due, self.videos.decide(due, rule)):
                track.searched_views = track.views
                self.answers[track.id] = match
        return [(t.boxes[-1], self.answers.get(t.id), t.id) for t in self.follower.active.values()
                if t.frames and t.frames[-1] == index]
