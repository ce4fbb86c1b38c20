"""Videos made at test time from LFW photos (nothing fetched is committed): faces moving over a plain background,
written as MP4 (MPEG-4 Part 2, which OpenCV writes everywhere) or any fourcc asked for.

`clip(path, paths_of_faces)`: each face is a photo pasted along its own straight path from `start` to `end` (as
shares of the frame's width and height), shrunk to `side` pixels; later faces are drawn over earlier ones."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

WIDTH, HEIGHT, FPS = 480, 270, 25


@dataclass(frozen=True)
class Path2D:
    photo: Path
    start: tuple[float, float]
    end: tuple[float, float]
    side: int = 120
    frames: tuple[int, int] | None = None  # (first, last) frame it is on screen; None: every frame


def clip(out: Path, faces: list[Path2D], frames: int = 50, fourcc: str = "mp4v", fps: int = FPS,
         size: tuple[int, int] = (WIDTH, HEIGHT), background: tuple[int, int, int] = (90, 100, 110)) -> Path:
    """Write the clip to `out` and return it."""
    import cv2

    width, height = size
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*fourcc), fps, (width, height))
    assert writer.isOpened(), f"OpenCV cannot write {fourcc}"
    pictures = [np.asarray(Image.open(face.photo).convert("RGB").resize((face.side, face.side), Image.BILINEAR))
                for face in faces]
    for index in range(frames):
        canvas = np.zeros((height, width, 3), np.uint8) + np.array(background, np.uint8)
        share = index / max(frames - 1, 1)
        for face, picture in zip(faces, pictures):
            if face.frames is not None and not face.frames[0] <= index <= face.frames[1]:
                continue
            cx = (face.start[0] + (face.end[0] - face.start[0]) * share) * width
            cy = (face.start[1] + (face.end[1] - face.start[1]) * share) * height
            left, top = int(round(cx - face.side / 2)), int(round(cy - face.side / 2))
            paste(canvas, picture, left, top)
        writer.write(canvas[:, :, ::-1].copy())
    writer.release()
    return out


def paste(canvas: np.ndarray, picture: np.ndarray, left: int, top: int) -> None:
    """`picture` onto `canvas` with its top-left corner at (left, top), clipped to the canvas."""
    height, width = canvas.shape[:2]
    x0, y0 = max(left, 0), max(top, 0)
    x1, y1 = min(left + picture.shape[1], width), min(top + picture.shape[0], height)
    if x1 > x0 and y1 > y0:
        canvas[y0:y1, x0:x1] = picture[y0 - top:y1 - top, x0 - left:x1 - left]
