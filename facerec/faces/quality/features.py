"""What can be measured of one face before it is enrolled, and that predicts whether it will be recognised later.

- `eye_distance_px`: the distance between the eyes in the photo's own pixels (from the detector's landmarks). The
  aligned crop puts the eyes `TEMPLATE_EYE_DISTANCE` (35.2 px) apart, so a face with eyes closer than that is
  upsampled and loses detail; a bigger face carries no more than the crop keeps (`effective_eye_distance`).
- `yaw`: how far the nose sits from the middle of the eyes, as a share of half the eye distance, once the eyes
  are level: 0 for a frontal face, about 1 when the nose tip is in line with an eye (a strong profile). A ratio of
  landmark positions, so a similarity transform (the alignment) leaves it unchanged.
- `sharpness`: log10 of the variance of the Laplacian over the aligned crop's face region: low when blurred.
- `stability`: mean cosine between the embedding of the crop and of four slightly changed copies of it (mirrored,
  blurred, shifted by 3 px, halved and restored). A face the network reads reliably changes little; a face it
  reads poorly (small, blurred, turned, occluded) moves. Costs 5 single-view embeddings (~50 ms on one core).
  Read apart as `geometric_stability` (mirrored, shifted: pose, occlusion, odd light) and `detail_stability`
  (blurred, halved: fine detail). A sharp scan with film grain moves under blur alone (the US Navy portrait of
  Grace Hopper: 0.90 and 0.88 against 0.97 and 0.96 for mirror and shift), which the single mean called
  "unstable" (#64 row 2); the calibration weighs the two apart.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from PIL import Image

from facerec.faces.align import ARCFACE_TEMPLATE

TEMPLATE_EYE_DISTANCE = float(np.linalg.norm(ARCFACE_TEMPLATE[1] - ARCFACE_TEMPLATE[0]))  # px in the 112 crop
FACE_REGION = (slice(30, 106), slice(18, 94))  # rows, columns of the crop that hold the face (dlib's box too)
SHIFT_PX = 3
_BINOMIAL = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0


@dataclass(frozen=True)
class QualityFeatures:
    eye_distance_px: float  # in the original photo
    yaw: float  # 0 frontal .. ~1 strong profile
    sharpness: float  # log10 variance of the Laplacian of the aligned crop's face region
    stability: float  # mean cosine to the embeddings of four slightly changed copies, in [-1, 1]
    geometric_stability: float = float("nan")  # of the mirrored and shifted copies
    detail_stability: float = float("nan")  # of the blurred and halved copies

    def to_dict(self) -> dict:
        return {key: round(value, 4) for key, value in asdict(self).items()}


def effective_eye_distance(eye_distance_px: float) -> float:
    """The eye distance the aligned crop can use: the photo's, up to the template's (bigger faces are shrunk)."""
    return min(eye_distance_px, TEMPLATE_EYE_DISTANCE)


def eye_distance(landmarks: np.ndarray) -> float:
    """Pixels between the two eye landmarks."""
    points = np.asarray(landmarks, np.float64)
    return float(np.linalg.norm(points[1] - points[0]))


def yaw_ratio(landmarks: np.ndarray) -> float:
    """0 when the nose tip is midway between the eyes (frontal), ~1 when it is in line with one eye."""
    points = np.asarray(landmarks, np.float64)
    left, right, nose = points[0], points[1], points[2]
    axis = right - left
    length = float(np.linalg.norm(axis))
    if length == 0:
        return 1.0
    along = float(np.dot(nose - left, axis / length))  # the nose's position along the line of the eyes
    return abs(2.0 * along / length - 1.0)


def sharpness(crop: np.ndarray) -> float:
    """log10 variance of the 4-neighbour Laplacian of the crop's grey face region (blur lowers it)."""
    grey = np.asarray(crop, np.float64)[FACE_REGION] @ np.array([0.299, 0.587, 0.114])
    laplacian = (grey[:-2, 1:-1] + grey[2:, 1:-1] + grey[1:-1, :-2] + grey[1:-1, 2:] - 4.0 * grey[1:-1, 1:-1])
    return math.log10(float(laplacian.var()) + 1.0)


def perturbed_copies(crop: np.ndarray) -> np.ndarray:
    """[4, 112, 112, 3] uint8: the crop mirrored, blurred (5x5 binomial), shifted by `SHIFT_PX` right and down
    (black border, as the alignment leaves), and halved in resolution then restored."""
    crop = np.asarray(crop, np.uint8)
    mirrored = crop[:, ::-1]
    blurred = binomial_blur(crop)
    shifted = np.zeros_like(crop)
    shifted[SHIFT_PX:, SHIFT_PX:] = crop[:-SHIFT_PX, :-SHIFT_PX]
    size = crop.shape[0]
    halved = np.asarray(Image.fromarray(crop).resize((size // 2, size // 2), Image.BILINEAR)
                        .resize((size, size), Image.BILINEAR))
    return np.stack([mirrored, blurred, shifted, halved])


def stability(embedder, crop: np.ndarray) -> float:
    """Mean cosine between the crop's single-view embedding and its perturbed copies' (`perturbed_copies`)."""
    return float(np.mean(perturbation_cosines(embedder, crop)))


def perturbation_cosines(embedder, crop: np.ndarray) -> np.ndarray:
    """[4]: the cosine of the crop's single-view embedding to each perturbed copy's (mirrored, blurred, shifted,
    halved)."""
    views = embedder.embed_single_view(np.concatenate([np.asarray(crop, np.uint8)[None], perturbed_copies(crop)]))
    return views[1:] @ views[0]


def measure(embedder, crop: np.ndarray, landmarks: np.ndarray, photo_scale: float = 1.0) -> QualityFeatures:
    """The features of one aligned crop (uint8 [112, 112, 3]) and its landmarks in the photo's pixels;
    `photo_scale` multiplies the eye distance (calibration shrinks photos to simulate small faces)."""
    mirrored, blurred, shifted, halved = perturbation_cosines(embedder, crop)
    return QualityFeatures(eye_distance_px=eye_distance(landmarks) * photo_scale, yaw=yaw_ratio(landmarks),
                           sharpness=sharpness(crop), stability=float(np.mean([mirrored, blurred, shifted, halved])),
                           geometric_stability=float((mirrored + shifted) / 2),
                           detail_stability=float((blurred + halved) / 2))


def binomial_blur(crop: np.ndarray) -> np.ndarray:
    """One pass of a 5x5 binomial filter (sigma ~1 px), edges repeated."""
    padded = np.pad(crop.astype(np.float64), ((2, 2), (2, 2), (0, 0)), mode="edge")
    rows = sum(weight * padded[i : i + crop.shape[0], :, :] for i, weight in enumerate(_BINOMIAL))
    both = sum(weight * rows[:, i : i + crop.shape[1], :] for i, weight in enumerate(_BINOMIAL))
    return np.clip(np.rint(both), 0, 255).astype(np.uint8)
