"""Answers drawn on the photo stay readable at phone width (#31 item 8): a label's height is a fixed share of the
photo, so a browser that shrinks a large photo to a 360 px-wide screen still shows it at a readable size."""

from __future__ import annotations

import numpy as np
import pytest

from facerec.faces.detect import DetectedFace
from facerec.faces.drawing import annotate

RED = (255, 0, 0)
PHONE_WIDTH = 360  # CSS pixels a phone gives the picture, roughly
READABLE_PX = 11


@pytest.mark.parametrize("size", [(250, 250), (1200, 800), (4000, 3000)])
def test_a_label_is_readable_when_the_photo_is_shown_at_phone_width(size) -> None:
    width, height = size
    face = DetectedFace((0.4 * width, 0.4 * height, 0.6 * width, 0.6 * height), 0.99, np.zeros((5, 2), np.float32))
    drawn = annotate(np.zeros((height, width, 3), np.uint8), [face], ["#0 Colin Powell 0.812"], [RED])
    above_box = drawn[: int(face.box[1]) - 1]  # the label sits above the box (there is room): its fill is red
    label_height = len(np.flatnonzero(np.all(above_box == RED, axis=2).sum(axis=1) > 0.05 * width))
    shown_at = min(1.0, PHONE_WIDTH / width)  # the page scales the picture down to the screen, never up here
    assert label_height * shown_at >= READABLE_PX, (size, label_height)

