"""The faces found in an uploaded photo, drawn with their numbers, and the choice of one (Enroll and Verify).

Faces are numbered from 0 by the left edge of their box, as the Gallery API and the CLI's `--face N` number them,
and the picture shows each number on its box: the page points there, not to a direction (faces one above the
other are not "left to right" to the eye). The choice is a dropdown of 'face #N'. Enroll pre-selects the largest face (and says so); Verify pre-selects nothing and asks,
because comparing the wrong face of a group photo gives a confident wrong answer.
"""

from __future__ import annotations

import gradio as gr

from facerec.faces.choice import largest_face_index
from facerec.faces.detect import DetectedFace
from facerec.faces.drawing import annotate
from facerec.errors import InvalidArgument
from facerec.gallery import Gallery
from facerec.words.phrasing import no_face_message, sentence
from facerec.faces.pipeline import Photo
from facerec.ui.page_pictures import MAX_SIDE

PREFIX = "face #"
# Where a face's number is read: on the picture. The numbers go by each box's left edge, which reads as "left to
# right" only for faces side by side; for faces one above the other it was a claim the picture contradicted.
NUMBER_SHOWN = "the number on its box"


def face_choices(count: int) -> list[str]:
    return [f"{PREFIX}{i}" for i in range(count)]


def chosen_face(value, what: str = "face") -> int | None:
    """The face index a dropdown (or API caller) chose: 'face #2', '2' or 2 -> 2; nothing -> None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    try:
        return int(text[len(PREFIX):] if text.startswith(PREFIX) else text.lstrip("#"))
    except ValueError:
        raise InvalidArgument(f"the {what} must be given as 'face #0', 'face #1', ... (as numbered on the photo); "
                              f"got '{value}'") from None


def faces_view(gallery: Gallery, decoded: Photo, faces: list[DetectedFace], preselect_largest: bool,
               which: str = "this photo"):
    """(photo with numbered boxes, dropdown update, note, number of faces) for a photo decoded and detected (the
    Enroll tab goes on to judge the chosen face's quality from the same detection instead of running the detector
    twice)."""
    if not faces:
        note = sentence(no_face_message(decoded.shape, gallery.services().settings.min_face_size, which,
                                        getattr(faces, "too_small", None)))
        return decoded.pixels, gr.update(choices=[], value=None), note, 0
    choices = face_choices(len(faces))
    drawn = annotate(decoded.pixels, faces, landmarks=True, max_side=MAX_SIDE, scale=decoded.scale)
    if len(faces) == 1:
        return drawn, gr.update(choices=choices, value=choices[0]), "One face found.", 1
    if preselect_largest:
        largest = largest_face_index(faces)
        note = (f"{len(faces)} faces found; face #{largest} (the largest) is selected — pick another if needed.")
        value = choices[largest]
    else:
        note = f"{len(faces)} faces found in {which}: pick the one to compare by {NUMBER_SHOWN}."
        value = None
    return drawn, gr.update(choices=choices, value=value), note, len(faces)
