"""The public-domain pack's embedder: dlib's ResNet (converted to ONNX) on dlib's chip of an aligned face.

Input, like facerec's own embedder: aligned uint8 RGB crops [N, 112, 112, 3] (`facerec.faces.align`), so that
every path that re-embeds stored crops (reindex, import, calibration) works for this pack too. From each crop,
dlib's 5-point shape predictor places its landmarks inside the fixed box CROP_FACE_BOX (where the face of an
aligned crop lies), dlib's `get_face_chip` cuts its 150x150 chip (padding 0.25) exactly as dlib's own
`compute_face_descriptor` does, and the network makes the raw 128-d descriptor; the mirrored chip's is added
(`flip_tta`) and the sum scaled to unit length (benchmarks/public_domain_embedding.py chose this on held-out
identities), then followed by 384 zeros: the gallery stores 512 numbers a face, and zeros change no dot product.
This is how `../shared/data/teacher/celeba112_dlib.npz` was made from the same crops.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from facerec.errors import FaceRecError
from facerec.faces.dlib_runtime import LazyLandmarks, import_dlib, require_files
from facerec.faces.model_identity import ModelIdentity
from facerec.faces.embedder_check import FAST, EmbedderCheck
from facerec.faces.onnx_session import LazySession
from facerec.cpu import describe_cpu

CROP_FACE_BOX = (18, 30, 94, 106)  # left, top, right, bottom of the face in a 112x112 aligned crop
CHIP_SIZE, CHIP_PADDING = 150, 0.25  # dlib's compute_face_descriptor defaults
DESCRIPTOR_SIZE, STORED_SIZE = 128, 512
LANDMARKS_SUFFIX = ".landmarks.dat"


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, np.float64)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


class DlibEmbedder(ModelIdentity):
    """dlib's network on dlib's chips of aligned crops; thread-safe, files loaded on first use.

    Args:
        model_path: the converted network (`<pack>.onnx`); dlib's 5-point predictor is its sibling
            `<pack>.landmarks.dat`.
        flip_tta: add the mirrored chip's descriptor (about 2x the network's compute).
        batch_size: chips per onnxruntime call. num_threads: onnxruntime intra-op threads (0: all cores).
    """

    def __init__(self, model_path: str | Path, flip_tta: bool = True, batch_size: int = 8,
                 num_threads: int = 0) -> None:
        self.model_path = Path(model_path)
        self.landmarks_path = self.model_path.with_suffix(LANDMARKS_SUFFIX)
        require_files(self.model_path, self.landmarks_path)
        self.flip_tta = flip_tta
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._session = LazySession(self.model_path, num_threads)
        self._landmarks = LazyLandmarks(self.landmarks_path)

    def _digest(self) -> str:
        """Of the network and the landmark predictor together: either changes every descriptor."""
        digest = hashlib.sha256()
        for path in (self.model_path, self.landmarks_path):
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        return digest.hexdigest()

    @property
    def self_check(self) -> EmbedderCheck:
        """fp32 throughout: onnxruntime's kernels on any x86-64 CPU differ from the exact graph by rounding only
        (the emulated AVX2 check measures it), so there is nothing to switch."""
        return EmbedderCheck(FAST, None, "fp32 network: no int8 kernels to check", describe_cpu().summary())

    def chips(self, faces: np.ndarray) -> np.ndarray:
        """dlib's 150x150 chips [N, 150, 150, 3] uint8 of aligned crops [N, 112, 112, 3]."""
        dlib = import_dlib()
        predictor = self._landmarks.get()
        box = dlib.rectangle(*CROP_FACE_BOX)
        return np.stack([np.asarray(dlib.get_face_chip(crop, predictor(crop, box), size=CHIP_SIZE,
                                                       padding=CHIP_PADDING))
                         for crop in np.ascontiguousarray(faces)])

    def descriptors(self, faces: np.ndarray, flip_tta: bool | None = None) -> np.ndarray:
        """Unit descriptors [N, 128] float32 of aligned crops [N, 112, 112, 3] (or one crop)."""
        faces = _checked(faces)
        if len(faces) == 0:
            return np.zeros((0, DESCRIPTOR_SIZE), np.float32)
        flip = self.flip_tta if flip_tta is None else flip_tta
        outputs = []
        for start in range(0, len(faces), self.batch_size):
            batch = self.chips(faces[start : start + self.batch_size]).transpose(0, 3, 1, 2).astype(np.float32)
            descriptor = self._run(batch)
            if flip:
                descriptor = descriptor + self._run(batch[:, :, :, ::-1])
            outputs.append(descriptor)
        return unit_rows(np.concatenate(outputs))

    def embed(self, faces: np.ndarray) -> np.ndarray:
        """Unit embeddings [N, 512] float32: the unit descriptor followed by zeros."""
        return padded(self.descriptors(faces))

    def embed_single_view(self, faces: np.ndarray) -> np.ndarray:
        """As `embed`, each chip seen once (the enrollment quality check compares views)."""
        return padded(self.descriptors(faces, flip_tta=False))

    def _run(self, batch: np.ndarray) -> np.ndarray:
        return self._session.get().run(None, {"images": np.ascontiguousarray(batch)})[0]


def padded(descriptors: np.ndarray) -> np.ndarray:
    """[N, 128] -> [N, 512]: the descriptor, then zeros."""
    stored = np.zeros((len(descriptors), STORED_SIZE), np.float32)
    stored[:, : descriptors.shape[1]] = descriptors
    return stored


def _checked(faces: np.ndarray) -> np.ndarray:
    faces = np.asarray(faces)
    if faces.ndim == 3:
        faces = faces[None]
    if faces.ndim != 4 or faces.shape[1:] != (112, 112, 3):
        raise FaceRecError(f"aligned faces must be [N, 112, 112, 3], got {faces.shape}")
    return faces.astype(np.uint8, copy=False)
