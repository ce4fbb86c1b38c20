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


def cross_fade_clip(out: Path, first: Path, second: Path, frames: int = 60) -> Path:
    """One face, in one place, turning frame by frame into another (a cross-fade): one track for the tracker."""
    import cv2

    side, width, height = 160, 480, 270
    a = np.asarray(Image.open(first).convert("RGB").resize((side, side)), np.float32)
    b = np.asarray(Image.open(second).convert("RGB").resize((side, side)), np.float32)
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), 25, (width, height))
    for index in range(frames):
        share = index / (frames - 1)
        canvas = np.full((height, width, 3), 100, np.uint8)
        canvas[55:55 + side, 160:160 + side] = (a * (1 - share) + b * share).astype(np.uint8)
        writer.write(canvas[:, :, ::-1].copy())
    writer.release()
    return out


def y4m(out: Path, photo: Path, frames: int = 20, size: tuple[int, int] = (640, 480), fps: int = 10) -> Path:
    """A camera's view as YUV4MPEG2 (4:2:0, what Chromium's fake camera reads): the photo drifting to the right over
    a plain background, looped by the browser."""
    import cv2

    width, height = size
    face = np.asarray(Image.open(photo).convert("RGB").resize((200, 200), Image.BILINEAR))
    with open(out, "wb") as handle:
        handle.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(frames):
            canvas = np.zeros((height, width, 3), np.uint8) + np.array((90, 100, 110), np.uint8)
            paste(canvas, face, 200 + 2 * index, 140)
            handle.write(b"FRAME\n" + cv2.cvtColor(canvas, cv2.COLOR_RGB2YUV_I420).tobytes())
    return out
