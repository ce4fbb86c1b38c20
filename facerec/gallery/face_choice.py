"""Which face of a photo a caller means: enroll, add-photo and verify all take one face, and never guess it."""

from __future__ import annotations

from facerec.faces.detect import DetectedFace
from facerec.errors import InvalidArgument, MultipleFaces, NoFace
from facerec.words.phrasing import no_face_message
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import FacePipeline, Photo


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
        raise NoFace(no_face_message(photo.shape, min_face_size, label))
    if index is None:
        if len(faces) > 1:
            listed = "; ".join(f"#{i}: box {tuple(round(v) for v in f.box)}" for i, f in enumerate(faces))
            raise MultipleFaces(f"{label} has {len(faces)} faces ({listed})", faces, label)
        index = 0
    if not 0 <= index < len(faces):
        raise InvalidArgument(f"face index {index} is out of range: {label} has {len(faces)} face(s)")
    return faces[index]
