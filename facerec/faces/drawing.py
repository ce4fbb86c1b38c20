"""Detected faces drawn on the photo: numbered boxes, and labels laid out so that none covers another."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from facerec.faces.detect import DetectedFace, rescaled
from facerec.faces.image import shrunk

KNOWN, UNKNOWN, NEUTRAL = (40, 200, 80), (230, 60, 60), (60, 140, 255)


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


LABEL_SHARE = 26  # a label's font size, as a share of the photo's longer side


Box = tuple[float, float, float, float]


def annotate(pixels: np.ndarray, faces: list[DetectedFace], labels: list[str] | None = None,
             colours: list[tuple[int, int, int]] | None = None, landmarks: bool = False,
             max_side: int | None = None, scale: float = 1.0) -> np.ndarray:
    """The photo with a box (and label) per face; label defaults to the face's index. Labels never cover each
    other (`label_layout`). `scale`: of `pixels` against the coordinates the faces are given in (a photo shrunk
    while decoding, `Photo.scale`). With `max_side`, drawn on a copy shrunk to it (what a page shows), never on a
    full-size copy of a large photo."""
    if max_side:
        pixels, shrink = shrunk(pixels, max_side)
        scale *= shrink
    if scale != 1.0:
        faces = [rescaled(face, scale) for face in faces]
    image = Image.fromarray(pixels).convert("RGB")
    draw = ImageDraw.Draw(image)
    width = max(2, max(image.size) // 300)
    labels = labels or [f"#{number}" for number in range(len(faces))]
    for number, face in enumerate(faces):
        draw.rectangle(list(face.box), outline=colours[number] if colours else NEUTRAL, width=width)
    for number, (text, box, font) in enumerate(label_layout(image.size, faces, labels, width)):
        colour = colours[number] if colours else NEUTRAL
        draw.rectangle(list(box), fill=colour)
        draw.text((box[0] + width, box[1]), text, fill=(255, 255, 255), font=font)
        if landmarks:
            for x, y in faces[number].landmarks:
                draw.ellipse([x - width, y - width, x + width, y + width], fill=colour)
    return np.asarray(image)


def label_layout(size: tuple[int, int], faces: list[DetectedFace], labels: list[str],
                 width: int = 2) -> list[tuple[str, Box, ImageFont.ImageFont]]:
    """Where each face's label goes: (the text drawn, its rectangle, its font), inside the picture and overlapping
    no other label.

    Labels scale with the photo, so they stay readable however small the page shows it (at 1/26 of the photo's
    longer side a label is ~13 px high on a 360 px-wide phone screen). Each label tries, in turn: above its box,
    below it, inside its top edge; a label that fits nowhere is shortened to its number ("#2"; the table beside
    the picture names it), then set in a smaller font, then stacked where it meets nothing. Wide photos of
    people side by side are where full labels collided ("#2 Serena Williams 0.930" over "#1 unknown")."""
    image_width, image_height = size
    placed: list[Box] = []
    layout = []
    base = max(14, max(size) // LABEL_SHARE)
    for number, (face, label) in enumerate(zip(faces, labels)):
        choice = None
        for text, font_size in ((label, base), (f"#{number}", base), (f"#{number}", max(10, base * 2 // 3))):
            font = _font(font_size)
            for box in _label_spots(face.box, _text_size(font, text), width, image_width, image_height):
                if not any(_overlap(box, other) for other in placed):
                    choice = (text, box, font)
                    break
            if choice:
                break
        if choice is None:  # nowhere free near the face: the first free row from the top, at the face's left
            font = _font(max(10, base * 2 // 3))
            text = f"#{number}"
            text_width, text_height = _text_size(font, text)
            left = max(0.0, min(face.box[0], image_width - text_width - 2 * width))
            top = 0.0
            box = (left, top, left + text_width + 2 * width, top + text_height + 2 * width)
            while any(_overlap(box, other) for other in placed) and box[3] < image_height:
                top = max(other[3] for other in placed if _overlap(box, other)) + 1
                box = (left, top, box[2], top + text_height + 2 * width)
            choice = (text, box, font)
        placed.append(choice[1])
        layout.append(choice)
    return layout


def _text_size(font, text: str) -> tuple[float, float]:
    left, top, right, bottom = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox((0, 0), text, font=font)
    return right - left, bottom - top


def _label_spots(face: Box, text: tuple[float, float], width: int, image_width: int, image_height: int):
    """Candidate rectangles for a label of `text` (width, height) next to a face box: above, below, inside."""
    x1, y1, x2, y2 = face
    box_width, box_height = text[0] + 2 * width, text[1] + 2 * width
    left = max(0.0, min(x1, image_width - box_width))  # inside the picture: moved left, never cut
    for top in (y1 - box_height - width, y2 + width, y1 + width):
        if 0 <= top and top + box_height <= image_height and box_width <= image_width:
            yield (left, top, left + box_width, top + box_height)


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
