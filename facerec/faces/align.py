"""ArcFace alignment: a similarity transform from five landmarks to the standard 112x112 template.

This is the procedure `../shared/data/README.md` documents for the `celeba112` training crops: least-squares
similarity (Umeyama, no reflection), bilinear sampling, black border. Training, enrollment, identification and
evaluation all call `align_face`, so the model always sees crops made the same way.
"""

from __future__ import annotations

import numpy as np

ALIGNED_SIZE = 112

# (x, y) of left eye, right eye, nose tip, left and right mouth corners in the 112x112 crop.
ARCFACE_TEMPLATE = np.array(
    [
        [38.2946, 51.6963],
        [73.5318, 51.5014],
        [56.0252, 71.7366],
        [41.5493, 92.3655],
        [70.7299, 92.2041],
    ],
    dtype=np.float64,
)


def similarity_transform(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Least-squares similarity (rotation, uniform scale, translation; no reflection) mapping source -> target.

    Umeyama (1991). Args: [N, 2] point arrays. Returns the 2x3 matrix M with target ~= M @ [x, y, 1].
    """
    source = np.asarray(source, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    source_mean, target_mean = source.mean(axis=0), target.mean(axis=0)
    source_centered, target_centered = source - source_mean, target - target_mean
    covariance = target_centered.T @ source_centered / len(source)
    u, singular, vt = np.linalg.svd(covariance)
    sign = np.eye(2)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        sign[1, 1] = -1.0
    rotation = u @ sign @ vt
    source_variance = source_centered.var(axis=0).sum()
    scale = (singular * np.diag(sign)).sum() / source_variance if source_variance > 0 else 1.0
    translation = target_mean - scale * rotation @ source_mean
    return np.hstack([scale * rotation, translation[:, None]])


def warp_affine(image: np.ndarray, matrix: np.ndarray, size: int = ALIGNED_SIZE) -> np.ndarray:
    """Sample `image` (uint8 [H, W, C]) at the inverse of `matrix` into a size x size crop.

    Pixel centres sit at integer coordinates (OpenCV's convention); bilinear interpolation; pixels that
    fall outside the photo are black.
    """
    forward = np.vstack([matrix, [0.0, 0.0, 1.0]])
    inverse = np.linalg.inv(forward)[:2]
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
    src_x = inverse[0, 0] * xs + inverse[0, 1] * ys + inverse[0, 2]
    src_y = inverse[1, 0] * xs + inverse[1, 1] * ys + inverse[1, 2]
    return _bilinear(image, src_x, src_y)


def _bilinear(image: np.ndarray, src_x: np.ndarray, src_y: np.ndarray) -> np.ndarray:
    height, width = image.shape[:2]
    x0, y0 = np.floor(src_x).astype(np.int64), np.floor(src_y).astype(np.int64)
    fx, fy = (src_x - x0)[..., None], (src_y - y0)[..., None]
    padded = np.zeros((height + 2, width + 2, image.shape[2]), dtype=np.float64)
    padded[1:-1, 1:-1] = image
    # Indices into the zero-padded image: anything beyond one pixel outside reads the black border.
    xa, xb = np.clip(x0 + 1, 0, width + 1), np.clip(x0 + 2, 0, width + 1)
    ya, yb = np.clip(y0 + 1, 0, height + 1), np.clip(y0 + 2, 0, height + 1)
    top = padded[ya, xa] * (1 - fx) + padded[ya, xb] * fx
    bottom = padded[yb, xa] * (1 - fx) + padded[yb, xb] * fx
    return np.clip(np.rint(top * (1 - fy) + bottom * fy), 0, 255).astype(np.uint8)


def align_face(image: np.ndarray, landmarks: np.ndarray, size: int = ALIGNED_SIZE) -> np.ndarray:
    """Aligned RGB uint8 [size, size, 3] crop of the face whose five landmarks ([5, 2], x/y pixels) are given.

    Only the part of the image the crop samples is read (`sampled_region`), so a face costs the same in a video
    frame or a 16-megapixel photo; the pixels are exactly those of warping the whole image."""
    template = ARCFACE_TEMPLATE * (size / ALIGNED_SIZE)
    matrix = similarity_transform(landmarks, template)
    left, top, right, bottom = sampled_region(matrix, size, image.shape[1], image.shape[0])
    if right <= left or bottom <= top:  # the crop lies wholly outside the image: black, as the full warp gives
        return np.zeros((size, size, image.shape[2]), np.uint8)
    shifted = matrix.copy()
    shifted[:, 2] += matrix[:, :2] @ np.array([left, top], np.float64)
    return warp_affine(image[top:bottom, left:right], shifted, size)


def sampled_region(matrix: np.ndarray, size: int, width: int, height: int) -> tuple[int, int, int, int]:
    """(left, top, right, bottom), clipped to the image: every pixel `warp_affine(image, matrix, size)` reads
    (the crop's corner points mapped back, widened by the bilinear neighbour and one pixel for rounding)."""
    inverse = np.linalg.inv(np.vstack([matrix, [0.0, 0.0, 1.0]]))[:2]
    corners = np.array([[0, 0, 1], [size - 1, 0, 1], [0, size - 1, 1], [size - 1, size - 1, 1]], np.float64)
    xs, ys = (inverse @ corners.T)
    left, top = int(np.floor(xs.min())) - 1, int(np.floor(ys.min())) - 1
    right, bottom = int(np.floor(xs.max())) + 3, int(np.floor(ys.max())) + 3
    return max(left, 0), max(top, 0), min(right, width), min(bottom, height)


def landmark_alignment_error(landmarks: np.ndarray) -> float:
    """Mean distance in crop pixels between the warped landmarks and the template (how well five points fit)."""
    matrix = similarity_transform(landmarks, ARCFACE_TEMPLATE)
    warped = np.asarray(landmarks, dtype=np.float64) @ matrix[:, :2].T + matrix[:, 2]
    return float(np.linalg.norm(warped - ARCFACE_TEMPLATE, axis=1).mean())
