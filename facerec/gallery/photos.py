"""Reading photos for an interface that shows them before it asks anything: decode once, detect the faces to
draw, and tell how likely a face is to be recognised later if enrolled (`facerec.faces.quality`)."""

from __future__ import annotations

from facerec.gallery.core import Core
from facerec.faces.detect import DetectedFace
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import Photo
from facerec.faces.quality import EnrollmentQuality
from facerec.gallery.enrollment import Enrollment
from facerec.faces.choice import decoded_faces


class Photos:
    def __init__(self, core: Core, *, enrollment: Enrollment) -> None:
        self._pipeline, self._enrollment, self._quality = core.pipeline, enrollment, core.quality

    def read(self, photo: ImageInput, label: str | None = None) -> Photo:
        """Decode a photo once (to detect, enroll or identify from it); `label` names it in error messages."""
        return self._pipeline.read(photo, label)

    def detect(self, photo: ImageInput | Photo) -> tuple[Photo, list[DetectedFace]]:
        """Decode and detect: what the UI draws before the user picks a face."""
        return decoded_faces(self._pipeline, photo)

    def enrollment_quality(self, photo: ImageInput | Photo, face_index: int | None = None,
                           faces: list[DetectedFace] | None = None) -> EnrollmentQuality | None:
        """How likely the photo's face is to be recognised later if enrolled (None: no calibration ships).
        `faces`: what `detect` found in this decoded `photo`, so a caller that has just drawn them (the Enroll
        tab) does not run the detector a second time."""
        _photo, face, crop, _embedding = self._enrollment.one_face(photo, face_index, faces)
        return self._quality.assess(face, crop)
