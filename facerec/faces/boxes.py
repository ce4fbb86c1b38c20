"""How much two face boxes (x1, y1, x2, y2, in the same units) cover each other: the one intersection over union
that following a face across frames, matching a photo's face to the one enrolled from it, and placing a face tag's
region on a detected face all decide by."""

from __future__ import annotations


def overlap(a, b) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes, in [0, 1]."""
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0
