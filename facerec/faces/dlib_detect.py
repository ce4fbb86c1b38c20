"""The public-domain pack's detector: dlib's MMOD CNN finds faces (converted to ONNX with its pyramid and decoding,
`facerec.packs.dlib_mmod`: the same boxes as dlib's own runtime, in about a tenth of its time), dlib's 5-point
predictor places landmarks.

dlib's five points (two corners of each eye, the base of the nose) are not RetinaFace's (eye centres, nose tip,
mouth corners), and the rest of facerec (alignment, quality, drawing, video) speaks RetinaFace's. So each face's
dlib points are mapped by a similarity transform onto where those points lie in facerec's 112x112 aligned crop
(DLIB_POINTS_IN_CROP: their mean over 2,000 training crops, `scripts/dlib_landmark_template.py`), and the five
points facerec aligns by are that transform's inverse applied to its template: aligning them reproduces exactly the
crop dlib's points call for. The face box is MMOD's.

MMOD's cost grows with the pixels (docs/results.md gives it a photo), so photos are searched at most MAX_SIDE
pixels on their long side; faces smaller than MMOD's smallest (about 40 pixels) at that scale are not found.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from facerec.faces.align import ARCFACE_TEMPLATE, similarity_transform
from facerec.faces.detect import MAX_FACES, DetectedFace, FoundFaces
from facerec.faces.dlib_embed import LANDMARKS_SUFFIX
from facerec.faces.dlib_runtime import LazyLandmarks, import_dlib, require_files
from facerec.faces.image import shrunk
from facerec.faces.onnx_session import LazySession
from facerec.packs.dlib_mmod import Settings as DecodingSettings
from facerec.packs.dlib_mmod import detections, tiled_tensor

DETECTOR_SUFFIX = ".detector.onnx"
MAX_SIDE = 800
# (x, y) of dlib's five points (right-hand eye's outer and inner corner, left-hand eye's outer and inner corner,
# base of the nose, as seen in the image) in facerec's 112x112 aligned crop.
DLIB_POINTS_IN_CROP = np.array([[80.484, 51.666], [65.848, 52.786], [29.157, 52.519], [43.714, 53.148],
                                [54.980, 80.753]])


def arcface_points(dlib_points: np.ndarray) -> np.ndarray:
    """RetinaFace-style landmarks [5, 2] (eyes, nose, mouth corners) implied by dlib's five points [5, 2]."""
    forward = np.vstack([similarity_transform(dlib_points, DLIB_POINTS_IN_CROP), [0.0, 0.0, 1.0]])
    inverse = np.linalg.inv(forward)[:2]
    return (np.hstack([ARCFACE_TEMPLATE, np.ones((5, 1))]) @ inverse.T).astype(np.float32)


def score_of(confidence: float) -> float:
    """MMOD's confidence (a margin: above 0 is a face) as a score in [0, 1], 0.5 at dlib's own threshold."""
    return 1.0 / (1.0 + math.exp(-confidence))


class DlibDetector:
    """dlib's MMOD detector (in onnxruntime) and 5-point landmarks (dlib's); thread-safe.

    Args:
        model_path: the pack's network file; the detector and predictor are its siblings `<pack>.detector.onnx`,
            `<pack>.landmarks.dat`.
        min_face_size, max_faces: as `facerec.faces.detect.FaceDetector`'s.
        max_side: photos are searched at most this long (MAX_SIDE by default; MMOD's cost grows with pixels).
    """

    def __init__(self, model_path: str | Path, min_face_size: float = 20.0, max_side: int = MAX_SIDE,
                 max_faces: int = MAX_FACES, num_threads: int = 0) -> None:
        self.detector_path = Path(model_path).with_suffix(DETECTOR_SUFFIX)
        self.landmarks_path = Path(model_path).with_suffix(LANDMARKS_SUFFIX)
        require_files(self.detector_path, self.landmarks_path)
        self.min_face_size = min_face_size
        self.max_side = max_side
        self.max_faces = max_faces
        self._session = LazySession(self.detector_path, num_threads)
        self._decoding: DecodingSettings | None = None  # read once from the ONNX file's metadata
        self._landmarks = LazyLandmarks(self.landmarks_path)

    def detect(self, image: np.ndarray) -> FoundFaces:
        """Faces of an RGB uint8 [H, W, 3] image, the `max_faces` largest, left to right."""
        dlib = import_dlib()
        height, width = image.shape[:2]
        if height < 16 or width < 16:
            return FoundFaces([])
        scale = min(1.0, self.max_side / max(height, width))
        small = np.ascontiguousarray(shrunk(image, round(max(height, width) * scale))[0] if scale < 1.0 else image)
        session = self._session.get()
        if self._decoding is None:  # the same for every photo: parsed once (a benign race between threads)
            self._decoding = DecodingSettings.of(session.get_modelmeta().custom_metadata_map)
        settings = self._decoding
        pyramid, levels = tiled_tensor(small, settings)
        found = detections(session.run(None, {"pyramid": pyramid})[0], levels, settings)
        predictor = self._landmarks.get()
        faces = []
        for (left, top, right, bottom), confidence in found:
            box = tuple(v / scale for v in (left, top, right + 1, bottom + 1))
            if min(box[2] - box[0], box[3] - box[1]) < self.min_face_size:
                continue
            shape = predictor(image, dlib.rectangle(*(round(v) for v in box)))
            points = np.array([[shape.part(i).x, shape.part(i).y] for i in range(5)], np.float64)
            faces.append(DetectedFace(box, score_of(confidence), arcface_points(points)))
        kept = sorted(faces, key=lambda f: -f.area)[: self.max_faces]
        return FoundFaces(sorted(kept, key=lambda f: (f.box[0], f.box[1])), found=len(faces))

