"""Which detected face a caller means, when a photo holds several.

- identify: every face (no choice needed).
- enroll: the face the user picked by index; `largest_face` is what the UI pre-selects.
- dataset photos (LFW, folder-per-identity evaluation): the face nearest the image centre, because those
  photos are framed on the labelled person (the same rule made the `celeba112` crops).
"""

from __future__ import annotations

from facerec.faces.detect import DetectedFace


def central_face(faces: list[DetectedFace], image_shape: tuple[int, ...]) -> DetectedFace | None:
    """The face whose box centre is nearest the image centre; None when there are no faces."""
    if not faces:
        return None
    cy, cx = image_shape[0] / 2, image_shape[1] / 2
    return min(faces, key=lambda f: (f.center[0] - cx) ** 2 + (f.center[1] - cy) ** 2)


def largest_face(faces: list[DetectedFace]) -> DetectedFace | None:
    """The face with the largest box area; None when there are no faces."""
    return max(faces, key=lambda f: f.area) if faces else None


def largest_face_index(faces: list[DetectedFace]) -> int | None:
    """Index (in detection order, left to right) of the largest face."""
    face = largest_face(faces)
    return None if face is None else faces.index(face)
