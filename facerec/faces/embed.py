"""The face embedder: the shipped ONNX ResNet18 run by onnxruntime (no torch at runtime).

Input: aligned uint8 RGB crops [N, 112, 112, 3] from `facerec.faces.align`. Output: unit-length float32 [N, 512];
cosine similarity between two faces is their dot product, in [-1, 1].
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from facerec.faces.embedder_check import EXACT, CheckReference, EmbedderCheck, check
from facerec.errors import FaceRecError, InvalidArgument
from facerec.faces.model_identity import ModelIdentity
from facerec.faces.onnx_session import LazySession

UNIT_TOLERANCE = 1e-3  # how far from 1 the length of a stored float32 embedding may be (they are within ~1e-6)


class FaceEmbedder(ModelIdentity):
    """Loads the ONNX model on first use; thread-safe (onnxruntime sessions may be shared across threads).

    Args:
        model_path: the `.onnx` file.
        flip_tta: also embed the mirrored crop and average (test-time augmentation; ~2x the compute).
        batch_size: crops per onnxruntime call.
        num_threads: onnxruntime intra-op threads (0 = onnxruntime's default, all cores).
        exact: run the graph's own arithmetic (graph optimisations off) instead of the fused kernels, skipping the
            self-check (the model card's reference is made this way).

    On first use the embedder checks its fused kernels against the reference embeddings in the model card beside
    the file (`facerec.faces.embedder_check`) and runs the exact graph instead where they disagree on this CPU.
    """

    def __init__(self, model_path: str | Path, flip_tta: bool = True, batch_size: int = 8,
                 num_threads: int = 0, exact: bool = False) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise FaceRecError(f"model file not found: {self.model_path}")
        self.flip_tta = flip_tta
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._fast = LazySession(self.model_path, num_threads)
        self._exact = LazySession(self.model_path, num_threads, exact=True)
        self._check: EmbedderCheck | None = EmbedderCheck(EXACT, None, "asked for", "") if exact else None
        self._check_lock = threading.Lock()

    def embed(self, faces: np.ndarray) -> np.ndarray:
        """Embeddings [N, 512] float32, unit length, for aligned uint8 crops [N, 112, 112, 3] (or one [112,112,3])."""
        faces = np.asarray(faces)
        if faces.ndim == 3:
            faces = faces[None]
        if faces.ndim != 4 or faces.shape[1:] != (112, 112, 3):
            raise FaceRecError(f"aligned faces must be [N, 112, 112, 3], got {faces.shape}")
        if len(faces) == 0:
            return np.zeros((0, 512), np.float32)
        outputs = []
        for start in range(0, len(faces), self.batch_size):
            batch = faces[start : start + self.batch_size].transpose(0, 3, 1, 2).astype(np.float32)
            embedding = self._run(batch)
            if self.flip_tta:
                embedding = embedding + self._run(np.ascontiguousarray(batch[:, :, :, ::-1]))
            outputs.append(embedding)
        result = np.concatenate(outputs)
        return (result / np.linalg.norm(result, axis=1, keepdims=True)).astype(np.float32)

    def embed_single_view(self, faces: np.ndarray) -> np.ndarray:
        """Unit embeddings [N, 512] of aligned crops [N, 112, 112, 3] each seen once, without the mirrored view
        (`facerec.faces.quality` compares views that the flip average would blur together)."""
        batch = np.asarray(faces).transpose(0, 3, 1, 2).astype(np.float32)
        result = np.concatenate([self._run(batch[start : start + self.batch_size])
                                 for start in range(0, len(batch), self.batch_size)])
        return (result / np.linalg.norm(result, axis=1, keepdims=True)).astype(np.float32)

    @property
    def self_check(self) -> EmbedderCheck:
        """Which path embeds here (fused kernels or the exact graph) and why; runs the check on first call."""
        if self._check is None:
            with self._check_lock:
                if self._check is None:
                    self._check = check(lambda batch: self._fast.get().run(None, {"images": batch})[0],
                                        self._card_reference(), self.sha256)
        return self._check

    def _card_reference(self) -> CheckReference | None:
        try:
            return CheckReference.from_card(json.loads(self.model_path.with_suffix(".json").read_text()))
        except (OSError, ValueError):
            return None

    def _run(self, batch: np.ndarray) -> np.ndarray:
        session = self._exact if self.self_check.switched else self._fast
        return session.get().run(None, {"images": np.ascontiguousarray(batch)})[0]


def checked_embeddings(vectors: np.ndarray, dimension: int = 512, normalise: bool = False) -> np.ndarray:
    """Embeddings from outside the embedder (imports, bulk enrollment) as the index needs them: [N, dimension]
    float32, finite, of unit length within UNIT_TOLERANCE (kept as given, so an export imports byte for byte), or,
    with `normalise`, of any non-zero length (scaled to 1). Anything else is refused: a long vector would out-score
    every real face (similarity is a dot product), a NaN would poison every metric computed over the gallery."""
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[1] != dimension or not np.issubdtype(vectors.dtype, np.number):
        raise InvalidArgument(f"an embedding must be {dimension} numbers, not an array of shape {vectors.shape}")
    vectors = vectors.astype(np.float32)
    finite = np.all(np.isfinite(vectors), axis=1)
    if not finite.all():
        raise InvalidArgument(f"embedding {int(np.argmin(finite)) + 1} holds values that are not finite numbers")
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1)
    off = (norms == 0) if normalise else (np.abs(norms - 1.0) > UNIT_TOLERANCE)
    if off.any():
        row = int(np.argmax(off))
        raise InvalidArgument(f"embedding {row + 1} has length {norms[row]:.4g}, not 1 (embeddings are unit vectors)")
    if normalise and np.any(np.abs(norms - 1.0) > UNIT_TOLERANCE):
        return (vectors / norms[:, None]).astype(np.float32)
    return vectors
