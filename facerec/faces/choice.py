"""Which detected face a caller means, when a photo holds several: the one place that decides it.

- identify: every face (no choice needed).
- enroll, add-photo and verify: one face, never guessed: the photo's only face or the one the caller picked by
  index (`chosen_face`); `largest_face` is what the UI pre-selects.
- dataset photos (LFW, folder-per-identity evaluation): the face nearest the image centre, because those
  photos are framed on the labelled person (the same rule made the `celeba112` crops).
"""

from __future__ import annotations

from facerec.errors import InvalidArgument, MultipleFaces, NoFace
from facerec.faces.detect import DetectedFace
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import FacePipeline, Photo
from facerec.words.phrasing import no_face_message


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


def decoded_faces(pipeline: FacePipeline, photo: ImageInput | Photo) -> tuple[Photo, list[DetectedFace]]:
    """(the decoded photo, its detected faces): a Photo decoded earlier is not decoded again."""
    photo = photo if isinstance(photo, Photo) else pipeline.read(photo)
    return photo, pipeline.detect(photo)


def chosen_face(photo: Photo, faces: list[DetectedFace], index: int | None, label: str,
                min_face_size: float) -> DetectedFace:
    """The one face of `photo` a caller means: its only face, or the one `index` picks (left to right, from 0).
    NoFace, MultipleFaces (listing the faces, so a caller can offer the choice) or InvalidArgument otherwise;
    `label` ("the photo", "the first photo") names the photo in the message."""
    if not faces:
        raise NoFace(no_face_message(photo.shape, min_face_size, label, getattr(faces, "too_small", None)))
    if index is None:
        if len(faces) > 1:
            listed = "; ".join(f"#{i}: box {tuple(round(v) for v in f.box)}" for i, f in enumerate(faces))
            raise MultipleFaces(f"{label} has {len(faces)} faces ({listed})", faces, label)
        index = 0
    if not 0 <= index < len(faces):
        raise InvalidArgument(f"face index {index} is out of range: {label} has {len(faces)} face(s)")
    return faces[index]
