"""Teacher targets of augmented crops (#27 point 3): the teacher's descriptors of K deterministic augmentations
of each training crop, so distillation can match what the student sees after augmentation, not only the clean
crop and its mirror.

Only the 128 numbers are stored. Each augmentation is regenerated at training time from its seed, which depends on
nothing but the crop's path and k (`augmentation_seed`), through the training's own `FaceAugmentation` under that
seed: the image the teacher described and the image the student is shown are the same pixels. Computed once,
resumable, on every core (`facerec.train.teacher.compute_targets`: the augmentations are made chunk by chunk in
the parent process, the teacher runs in the workers).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from facerec.train.augment import FaceAugmentation
from facerec.train.teacher import compute_targets

TAG = "#aug"  # an augmented target's path: "<crop path>#aug<k>"


def augmentation_seed(path: str, k: int) -> int:
    """The seed of augmentation k of the crop at `path`: the same on every machine and in every run."""
    return int(hashlib.sha256(f"{path}{TAG}{k}".encode()).hexdigest()[:15], 16)


def augmented(crops: np.ndarray, seeds: Sequence[int],
              augmentation: FaceAugmentation | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 [N, 112, 112, 3] augmented crops, bool [N] mirrored) of uint8 `crops`, crop i under seeds[i]."""
    augmentation = augmentation or FaceAugmentation()
    images, mirrored = [], []
    for crop, seed in zip(crops, seeds):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            image, flipped = augmentation.with_flips(torch.from_numpy(np.ascontiguousarray(crop))[None])
        images.append(image[0].permute(1, 2, 0).round().clamp(0, 255).to(torch.uint8).numpy())
        mirrored.append(bool(flipped[0]))
    return np.stack(images), np.array(mirrored)


class AugmentedCrops:
    """A lazy [N x K] view of `crops` (anything sliceable into uint8 arrays): item i is augmentation i % K of crop
    i // K, made when sliced."""

    def __init__(self, crops, paths: Sequence[str], augmentations: int) -> None:
        self.crops, self.paths, self.augmentations = crops, list(paths), augmentations

    def __len__(self) -> int:
        return len(self.paths) * self.augmentations

    def names(self) -> list[str]:
        return [f"{path}{TAG}{k}" for path in self.paths for k in range(self.augmentations)]

    def __getitem__(self, items: slice) -> np.ndarray:
        indices = range(*items.indices(len(self)))
        rows = sorted({i // self.augmentations for i in indices})
        source = dict(zip(rows, np.asarray(self.crops[rows[0]:rows[-1] + 1])[[r - rows[0] for r in rows]]))
        crops = np.stack([source[i // self.augmentations] for i in indices])
        seeds = [augmentation_seed(self.paths[i // self.augmentations], i % self.augmentations) for i in indices]
        return augmented(crops, seeds)[0]


def compute_augmented_targets(crops, paths: Sequence[str], augmentations: int, out_file: str | Path,
                              workers: int | None = None,
                              progress: Callable[[int, int], None] | None = None) -> Path:
    """The teacher file of `augmentations` augmentations of every crop ("<path>#aug<k>" rows, no mirror: the
    augmentation mirrors half of them itself)."""
    view = AugmentedCrops(crops, paths, augmentations)
    return compute_targets(view, view.names(), out_file, mirror=False, workers=workers, progress=progress)
