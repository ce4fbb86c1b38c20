"""A pack's detector and embedder, built from its recipe (`facerec.packs.catalog`) for the model file in use."""

from __future__ import annotations

from pathlib import Path

from facerec.faces.detect import FaceDetector
from facerec.faces.dlib_detect import MAX_SIDE, DlibDetector
from facerec.faces.dlib_embed import DlibEmbedder
from facerec.faces.embed import FaceEmbedder
from facerec.faces.fused_embed import FusedEmbedder
from facerec.packs.catalog import DLIB, DLIB_MMOD, FUSED, pack_of
from facerec.settings import Settings

Embedder = FaceEmbedder | DlibEmbedder | FusedEmbedder
Detector = FaceDetector | DlibDetector


def embedder_for(model_path: str | Path, flip_tta: bool = True, num_threads: int = 0) -> Embedder:
    """The embedder of the pack whose own file is `model_path` (facerec's ArcFace kind for any other file)."""
    kind = pack_of(model_path).embedder
    if kind == DLIB:
        return DlibEmbedder(model_path, flip_tta=flip_tta, num_threads=num_threads)
    if kind == FUSED:
        return FusedEmbedder(model_path, flip_tta=flip_tta, num_threads=num_threads)
    return FaceEmbedder(model_path, flip_tta=flip_tta, num_threads=num_threads)


def detector_for(settings: Settings) -> Detector:
    """The detector of the settings' pack, with the settings' limits."""
    if pack_of(settings.model_path).detector == DLIB_MMOD:
        return DlibDetector(settings.model_path, min_face_size=settings.min_face_size,
                            max_side=min(settings.detector_max_side, MAX_SIDE),
                            max_faces=settings.max_faces, num_threads=settings.num_threads)
    return FaceDetector(score_threshold=settings.detector_score_threshold, min_face_size=settings.min_face_size,
                        max_side=settings.detector_max_side, num_threads=settings.num_threads,
                        max_faces=settings.max_faces)
