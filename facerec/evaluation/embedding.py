"""Embed the photos of a folder-per-identity dataset end to end: decode -> detect -> central face -> align -> embed.

Dataset photos are framed on the labelled person, so the face nearest the image centre is taken (the rule the
training crops were made with). A photo with no detected face falls back to its central square
(`facerec.datasets.cache.central_square_crop`) and is counted as a detection failure; an unreadable file is counted too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from facerec.faces.align import align_face
from facerec.datasets.cache import central_square_crop
from facerec.faces.choice import central_face
from facerec.errors import FaceRecError
from facerec.faces.pipeline import FacePipeline


@dataclass
class EmbeddedPhotos:
    paths: list[Path]
    embeddings: np.ndarray  # [N, 512] unit vectors, row i for paths[i]
    sha256: list[str]
    boxes: list[list[float] | None]
    detection_failures: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def photos_per_second(self) -> float:
        return len(self.paths) / self.seconds if self.seconds else float("nan")


def embed_photos(pipeline: FacePipeline, paths: list[Path], progress=None, batch: int = 32) -> EmbeddedPhotos:
    """Embeddings of the central face of every photo; `progress(1)` is called as each photo finishes."""
    started = time.perf_counter()
    shas, boxes, failures, unreadable = [], [], [], []
    pending, embedded = [], []
    for path in paths:
        try:
            photo = pipeline.read(path)
        except FaceRecError:
            unreadable.append(str(path))
            pending.append(np.zeros((112, 112, 3), np.uint8))
            shas.append("")
            boxes.append(None)
        else:
            face = central_face(pipeline.detect(photo), photo.shape)
            if face is None:
                failures.append(str(path))
                pending.append(central_square_crop(photo.pixels))
                boxes.append(None)
            else:
                pending.append(align_face(photo.pixels, face.landmarks * photo.scale))
                boxes.append([round(float(v), 2) for v in face.box])
            shas.append(photo.sha256)
        if len(pending) == batch:
            embedded.append(pipeline.embedder.embed(np.stack(pending)))
            pending = []
        if progress:
            progress(1)
    if pending:
        embedded.append(pipeline.embedder.embed(np.stack(pending)))
    vectors = np.concatenate(embedded) if embedded else np.zeros((0, 512), np.float32)
    return EmbeddedPhotos(list(paths), vectors, shas, boxes, failures, unreadable, time.perf_counter() - started)
