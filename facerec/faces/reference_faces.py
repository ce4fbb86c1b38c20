"""Synthetic aligned faces drawn from a seed: the inputs of the embedder's load-time self-check.

Why synthetic: the self-check ships inputs and their exact embeddings with the model, and nothing made from LFW or
CelebA may be redistributed. Why face-like: int8 kernels fail (saturate) where activations and weights are both
large, and a face's edges, eyes and mouth drive the network's activations into the ranges real faces reach, which
flat noise does not. Each face has skin, hair, eyes, brows, nose and mouth at the ArcFace template's landmarks,
a lighting gradient and a mid-frequency texture; each draw differs in tone, shape and contrast.

Determinism: every random number comes from PCG64's raw 64-bit output (NumPy guarantees the bit generators'
streams across versions, not its distributions) and every shape is drawn with plain array arithmetic (no
anti-aliasing library whose rasterisation could change), so the same seed gives the same bytes everywhere.
"""

from __future__ import annotations

import numpy as np

from facerec.faces.align import ALIGNED_SIZE, ARCFACE_TEMPLATE

SEED = 20261202


class _Uniform:
    """Uniform floats in [0, 1) from PCG64's raw stream (stable across NumPy versions)."""

    def __init__(self, seed: int) -> None:
        self._bits = np.random.PCG64(seed)

    def __call__(self, *shape: int) -> np.ndarray:
        count = int(np.prod(shape)) if shape else 1
        raw = self._bits.random_raw(count).astype(np.uint64) >> np.uint64(11)
        values = raw.astype(np.float64) / float(1 << 53)
        return values.reshape(shape) if shape else values[0]

    def between(self, low: float, high: float) -> float:
        return low + (high - low) * float(self())


def _grid() -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.mgrid[0:ALIGNED_SIZE, 0:ALIGNED_SIZE].astype(np.float64)
    return xs + 0.5, ys + 0.5


def _ellipse(xs: np.ndarray, ys: np.ndarray, cx: float, cy: float, rx: float, ry: float) -> np.ndarray:
    """Soft mask in [0, 1] of an ellipse (a one-pixel ramp at its edge)."""
    radius = np.sqrt(((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2)
    return np.clip((1.0 - radius) * min(rx, ry), 0.0, 1.0)


def _texture(uniform: _Uniform, cells: int) -> np.ndarray:
    """A smooth random field in [-1, 1]: a cells x cells grid of random values, bilinearly enlarged."""
    grid = uniform(cells + 1, cells + 1) * 2.0 - 1.0
    position = np.linspace(0.0, cells, ALIGNED_SIZE, endpoint=False)
    low = np.floor(position).astype(int)
    weight = position - low
    rows = grid[low] * (1 - weight)[:, None] + grid[low + 1] * weight[:, None]
    return rows[:, low] * (1 - weight)[None, :] + rows[:, low + 1] * weight[None, :]


def _paint(image: np.ndarray, mask: np.ndarray, colour: np.ndarray) -> None:
    image *= 1.0 - mask[..., None]
    image += mask[..., None] * colour


def synthetic_face(uniform: _Uniform) -> np.ndarray:
    """One synthetic aligned face: uint8 [112, 112, 3] RGB, landmarks at the ArcFace template."""
    xs, ys = _grid()
    (left_eye, right_eye, nose, mouth_left, mouth_right) = ARCFACE_TEMPLATE
    background = np.array([uniform.between(20, 235) for _ in range(3)])
    image = np.broadcast_to(background, (ALIGNED_SIZE, ALIGNED_SIZE, 3)).copy()
    tone = uniform.between(0.25, 1.0)  # dark to light skin
    skin = np.array([235.0, 190.0, 160.0]) * tone + np.array([15.0, 10.0, 5.0])
    hair = np.array([uniform.between(10, 120)] * 3) * np.array([1.0, 0.85, 0.7])
    face_cx, face_cy = 56.0 + uniform.between(-2, 2), 64.0 + uniform.between(-2, 3)
    face_rx, face_ry = uniform.between(36, 44), uniform.between(46, 54)
    _paint(image, _ellipse(xs, ys, face_cx, face_cy - 14, face_rx + 4, face_ry * 0.75) * (ys < 50), hair)
    _paint(image, _ellipse(xs, ys, face_cx, face_cy, face_rx, face_ry), skin)
    eye_rx, eye_ry = uniform.between(5, 8), uniform.between(2.5, 4.5)
    for eye in (left_eye, right_eye):
        _paint(image, _ellipse(xs, ys, eye[0], eye[1], eye_rx, eye_ry), np.array([240.0, 240.0, 235.0]))
        _paint(image, _ellipse(xs, ys, eye[0], eye[1], eye_ry, eye_ry), np.array([40.0, 30.0, 25.0]) * tone * 2)
        _paint(image, _ellipse(xs, ys, eye[0], eye[1], eye_ry * 0.4, eye_ry * 0.4), np.zeros(3))
        brow = _ellipse(xs, ys, eye[0], eye[1] - uniform.between(8, 12), eye_rx * 1.4, uniform.between(1.2, 2.5))
        _paint(image, brow, hair * 0.8)
    nostrils = sum(_ellipse(xs, ys, nose[0] + side * 4.5, nose[1] + 3, 2.2, 1.4) for side in (-1, 1))
    _paint(image, np.clip(nostrils, 0, 1), skin * 0.45)
    ridge = _ellipse(xs, ys, nose[0] + 2, nose[1] - 10, 2.0, 12.0)
    _paint(image, ridge, np.minimum(skin * 1.15, 255))
    mouth_cx, mouth_cy = (mouth_left[0] + mouth_right[0]) / 2, (mouth_left[1] + mouth_right[1]) / 2
    lips = _ellipse(xs, ys, mouth_cx, mouth_cy, (mouth_right[0] - mouth_left[0]) / 2, uniform.between(3, 6))
    _paint(image, lips, np.array([uniform.between(120, 200), 60.0, 60.0]) * max(tone, 0.5))
    _paint(image, _ellipse(xs, ys, mouth_cx, mouth_cy, (mouth_right[0] - mouth_left[0]) / 2, 0.8), skin * 0.3)
    lighting = 1.0 + uniform.between(-0.45, 0.45) * (xs - 56) / 56 + uniform.between(-0.25, 0.25) * (ys - 56) / 56
    image *= lighting[..., None]
    image += _texture(uniform, 14)[..., None] * uniform.between(4, 25)
    contrast = uniform.between(0.8, 1.3)
    image = (image - image.mean()) * contrast + image.mean()
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def reference_faces(count: int = 8, seed: int = SEED) -> np.ndarray:
    """`count` synthetic aligned faces, uint8 [count, 112, 112, 3]; the same bytes for the same seed everywhere."""
    uniform = _Uniform(seed)
    return np.stack([synthetic_face(uniform) for _ in range(count)])
