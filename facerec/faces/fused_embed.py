"""The fused pack's embedder: facerec's network and dlib's on every face, joined into one unit vector.

Both networks embed the same aligned crop (facerec's directly, dlib's through its own chip,
`facerec.faces.dlib_embed`); the join (`facerec.packs.join`, the pack's own ONNX file) keeps facerec's 384
principal directions and weights the two so that a dot product of joined faces is (1 - w) cos_facerec + w cos_dlib.
The two networks make different mistakes, so the joined score separates people better than either alone
(benchmarks/fused_embedding.py); it costs both networks' time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from facerec.errors import FaceRecError
from facerec.faces.dlib_embed import DlibEmbedder
from facerec.faces.embed import FaceEmbedder
from facerec.faces.model_identity import ModelIdentity
from facerec.faces.embedder_check import EmbedderCheck
from facerec.faces.onnx_session import LazySession
from facerec.packs.catalog import DEFAULT_PACK, PUBLIC_DOMAIN_PACK
from facerec.packs.join import DLIB_INPUT, FACEREC_INPUT


class FusedEmbedder(ModelIdentity):
    """facerec's embedder and dlib's, joined. `model_path` is the join (`<pack>.onnx`); the two networks are the
    other packs' files in the same folder (`facerec-r18-arcface.onnx`, `dlib-public-domain.onnx` and its
    landmarks), so the fused pack adds one small file, not two networks."""

    def __init__(self, model_path: str | Path, flip_tta: bool = True, batch_size: int = 8,
                 num_threads: int = 0) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise FaceRecError(f"model file not found: {self.model_path}")
        folder = self.model_path.parent
        self.facerec = FaceEmbedder(folder / f"{DEFAULT_PACK}.onnx", flip_tta=flip_tta, batch_size=batch_size,
                                    num_threads=num_threads)
        self.dlib = DlibEmbedder(folder / f"{PUBLIC_DOMAIN_PACK}.onnx", flip_tta=flip_tta, batch_size=batch_size,
                                 num_threads=num_threads)
        self.flip_tta = flip_tta
        self._join = LazySession(self.model_path, num_threads)

    def _digest(self) -> str:
        """Of the join and both networks: any of them changes every joined embedding."""
        digest = hashlib.sha256(hashlib.sha256(self.model_path.read_bytes()).digest())
        digest.update(bytes.fromhex(self.facerec.sha256))
        digest.update(bytes.fromhex(self.dlib.sha256))
        return digest.hexdigest()

    @property
    def self_check(self) -> EmbedderCheck:
        """facerec's int8 network is the part whose kernels differ between CPUs: its own check decides."""
        return self.facerec.self_check

    def embed(self, faces: np.ndarray) -> np.ndarray:
        """Unit embeddings [N, 512] float32 of aligned crops [N, 112, 112, 3] (or one crop)."""
        return self._joined(self.facerec.embed(faces), self.dlib.descriptors(faces))

    def embed_single_view(self, faces: np.ndarray) -> np.ndarray:
        return self._joined(self.facerec.embed_single_view(faces), self.dlib.descriptors(faces, flip_tta=False))

    def _joined(self, ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        if len(ours) == 0:
            return np.zeros((0, 512), np.float32)
        joined = self._join.get().run(None, {FACEREC_INPUT: np.ascontiguousarray(ours, np.float32),
                                             DLIB_INPUT: np.ascontiguousarray(theirs, np.float32)})[0]
        return (joined / np.linalg.norm(joined, axis=1, keepdims=True)).astype(np.float32)
