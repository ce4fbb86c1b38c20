"""A face followed across frames (`Track`) and what makes one view of it better than another (`ViewQuality`).

A track keeps where its face was on every detected frame, and a quality-weighted pool of the views it embedded:
the unit embeddings summed with the enrollment quality score of each as its weight (`facerec.faces.quality`: the
calibrated chance that the view would be recognised), then scaled to unit length. Many views of one face are better
evidence than any one of them (IJB-C pools a video's frames into one template for this reason); weighting by
quality keeps a blurred or turned frame from diluting the sharp frontal ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from facerec.faces.detect import DetectedFace
from facerec.faces.quality.features import TEMPLATE_EYE_DISTANCE, effective_eye_distance, eye_distance, sharpness, \
    yaw_ratio
from facerec.faces.quality.score import QualityModel, size_feature


class ViewQuality:
    """The enrollment quality score of one view, without its costly features: stability needs five more
    embeddings per face, so a video holds both kinds at the typical photo's value (`QualityModel.typical`) and
    scores size, pose and sharpness as calibrated. Without a calibration beside the model: the usable eye distance over the
    template's times frontality, in [0, 1] (bigger and more frontal is better)."""

    def __init__(self, model: QualityModel | None) -> None:
        self.model = model

    def of(self, face: DetectedFace, crop: np.ndarray) -> float:
        """The score of a face (landmarks in the frame's pixels) and its aligned crop, in [0, 1]."""
        eyes = eye_distance(face.landmarks)
        if self.model is None:
            return float(effective_eye_distance(eyes) / TEMPLATE_EYE_DISTANCE * max(0.0, 1.0 - yaw_ratio(face.landmarks)))
        measured = {"size": size_feature(eyes), "yaw": yaw_ratio(face.landmarks), "sharpness": sharpness(crop)}
        # every other feature (the stabilities, whatever the calibration file names) at the typical photo's value
        row = np.array([measured.get(name, typical) for name, typical in zip(self.model.features, self.model.typical)],
                       np.float64)
        return float(self.model.predict(row)[0])


@dataclass
class Track:
    """One face followed across frames. `frames`, `times`, `boxes`: every detected frame it was on (boxes in the
    video's own pixels); `views`: how many of them were embedded into `pooled`; `best_*`: its best view by quality
    (the face a person is shown, and that a confirmation learns)."""

    id: int
    frames: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    boxes: list[tuple] = field(default_factory=list)
    views: int = 0
    weight: float = 0.0
    total: np.ndarray | None = None
    best_quality: float = -1.0
    best_face: DetectedFace | None = None
    best_crop: np.ndarray | None = None
    best_frame: int | None = None
    last_view_frame: int = -1
    searched_views: int = 0  # how many views the pool held when it was last searched (live: search again past it)

    def saw(self, frame: int, time: float, box: tuple) -> None:
        self.frames.append(frame)
        self.times.append(time)
        self.boxes.append(tuple(float(v) for v in box))

    def add_view(self, embedding: np.ndarray, quality: float, frame: int, face: DetectedFace,
                 crop: np.ndarray) -> None:
        """Pool one embedded view (a unit embedding) with its quality as its weight; keep it as the best view
        when it is. A weight is never 0, so a track's first view always counts."""
        weight = max(float(quality), 1e-3)
        self.total = embedding * weight if self.total is None else self.total + embedding * weight
        self.weight += weight
        self.views += 1
        self.last_view_frame = frame
        if quality > self.best_quality:
            self.best_quality, self.best_face, self.best_crop, self.best_frame = quality, face, crop, frame

    @property
    def pooled(self) -> np.ndarray | None:
        """The unit pooled embedding [D] float32, or None before the first view."""
        if self.total is None:
            return None
        norm = float(np.linalg.norm(self.total))
        return (self.total / norm).astype(np.float32) if norm > 0 else None

    def absorb(self, other: "Track") -> None:
        """Take over a track found to be this face again (it came back after a gap): its frames and its views."""
        for frame, time, box in zip(other.frames, other.times, other.boxes):
            self.saw(frame, time, box)
        order = np.argsort(self.frames, kind="stable")
        self.frames = [self.frames[i] for i in order]
        self.times = [self.times[i] for i in order]
        self.boxes = [self.boxes[i] for i in order]
        if other.total is not None:
            self.total = other.total if self.total is None else self.total + other.total
            self.weight += other.weight
            self.views += other.views
            self.last_view_frame = max(self.last_view_frame, other.last_view_frame)
        if other.best_quality > self.best_quality:
            self.best_quality, self.best_face = other.best_quality, other.best_face
            self.best_crop, self.best_frame = other.best_crop, other.best_frame

    @property
    def first_frame(self) -> int:
        return self.frames[0]

    @property
    def last_frame(self) -> int:
        return self.frames[-1]

    def box_at(self, frame: int) -> tuple | None:
        """The face's box on `frame`: as detected, or interpolated between two of the track's detections (what an
        annotated video draws on the frames not detected on); None outside the track."""
        import bisect

        i = bisect.bisect_left(self.frames, frame)
        if i < len(self.frames) and self.frames[i] == frame:
            return self.boxes[i]
        if i == 0 or i == len(self.frames):
            return None
        before, after = self.frames[i - 1], self.frames[i]
        share = (frame - before) / (after - before)
        return tuple(a + (b - a) * share for a, b in zip(self.boxes[i - 1], self.boxes[i]))
