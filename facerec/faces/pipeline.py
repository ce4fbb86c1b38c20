"""image -> faces -> aligned crops -> embeddings: the straight line every caller (gallery, eval, UI) walks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from facerec.faces.align import align_face
from facerec.faces.detect import DetectedFace, FoundFaces, rescaled
from facerec.faces.pack_parts import detector_for, embedder_for
from facerec.faces.image import ImageInput, decode_photo
from facerec.settings import Settings


@dataclass
class Photo:
    """A decoded photo: RGB uint8 pixels and the sha256 of its source bytes (of the pixels for arrays). `scale`:
    of the pixels against the photo's own size (below 1 when a photo over `Settings.working_pixels` was shrunk
    while decoding); faces are always given in the photo's own coordinates."""

    pixels: np.ndarray
    sha256: str
    scale: float = 1.0

    @property
    def shape(self) -> tuple[int, int, int]:
        """The photo's own (height, width, 3)."""
        height, width = self.pixels.shape[:2]
        return round(height / self.scale), round(width / self.scale), 3


class FacePipeline:
    """The settings' model pack (`facerec.packs.catalog`): its detector, the 112x112 alignment every pack shares,
    its embedder."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.detector = detector_for(settings)
        self.embedder = embedder_for(settings.model_path, flip_tta=settings.flip_tta,
                                     num_threads=settings.num_threads)

    def read(self, source: ImageInput, label: str | None = None) -> Photo:
        """Decode `source`; `label` is what error messages call it (`facerec.faces.image.load_image`)."""
        pixels, scale = decode_photo(source, self.settings.max_pixels, label, self.settings.working_pixels)
        return Photo(pixels, _sha256_of(source, pixels), scale)

    def detect(self, photo: Photo) -> FoundFaces:
        """The photo's faces, in its own coordinates."""
        found = self.detector.detect(photo.pixels)
        if photo.scale == 1.0:
            return found
        return FoundFaces([rescaled(face, 1.0 / photo.scale) for face in found], found=found.found)

    def embed(self, photo: Photo, faces: list[DetectedFace]) -> tuple[np.ndarray, np.ndarray]:
        """(aligned crops [N,112,112,3] uint8, unit embeddings [N,512] float32) for the given faces."""
        if not faces:
            return np.zeros((0, 112, 112, 3), np.uint8), np.zeros((0, 512), np.float32)
        crops = np.stack([align_face(photo.pixels, face.landmarks * photo.scale) for face in faces])
        return crops, self.embedder.embed(crops)


def _sha256_of(source: ImageInput, pixels: np.ndarray) -> str:
    if isinstance(source, (bytes, bytearray)):
        return hashlib.sha256(source).hexdigest()
    if isinstance(source, (str,)) or hasattr(source, "__fspath__"):
        with open(source, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    return hashlib.sha256(np.ascontiguousarray(pixels).tobytes()).hexdigest()
