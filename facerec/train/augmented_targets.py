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

from facerec.errors import InvalidArgument
from facerec.train.augment import FaceAugmentation
from facerec.train.teacher import compute_targets

TAG = "#aug"  # an augmented target's path: "<crop path>#aug<k>"


def crop_and_k(name: str) -> tuple[str, int]:
    """(crop path, k) of an augmented target's name "<crop path>#aug<k>"; ValueError for any other name."""
    crop, tag, k = name.rpartition(TAG)
    if not tag or not k.isdigit():
        raise InvalidArgument(f"{name!r} is not an augmented target (expected '<path>{TAG}<k>')")
    return crop, int(k)


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


class StoredAugmentations:
    """At training time: shows a share of each batch's crops one of their stored augmentations, made again from
    its seed, with the teacher's descriptor of exactly those pixels as the distillation target, in place of a
    fresh random augmentation matched to the clean crop's target (whose descriptor the augmentation has moved
    away from). The other crops keep the fresh augmentation, so the student still sees new variations."""

    def __init__(self, images: torch.Tensor, paths: Sequence[str], targets: np.ndarray, share: float) -> None:
        """images: uint8 [N, 112, 112, 3] training crops; paths: their teacher-file keys ("<id>/<file>");
        targets: float [N, K, 128] unit targets of augmentation k (NaN where none); share: in [0, 1]."""
        if not 0.0 <= share <= 1.0:
            raise InvalidArgument(f"the share of stored augmentations must be in [0, 1], not {share}")
        self.images, self.paths, self.share = images, list(paths), share
        self.targets = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32)).to(images.device)
        self.available = ~torch.isnan(self.targets[:, :, 0])  # [N, K]

    def apply(self, rows: torch.Tensor, batch: torch.Tensor, targets: torch.Tensor
              ) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, targets) with the chosen rows replaced: batch float [B, 3, 112, 112] in 0..255 as
        `FaceAugmentation` makes it, targets [B, 128]. Draws from torch's generator (a resumed run repeats)."""
        rows = rows.cpu()
        available = self.available[rows.to(self.available.device)].cpu()
        positions = ((torch.rand(len(rows)) < self.share) & available.any(dim=1)).nonzero().flatten()
        if not len(positions):
            return batch, targets
        ks = torch.multinomial(available[positions].float(), 1).flatten()
        crop_rows = rows[positions]
        seeds = [augmentation_seed(self.paths[int(r)], int(k)) for r, k in zip(crop_rows, ks)]
        pixels, _ = augmented(self.images[crop_rows.to(self.images.device)].cpu().numpy(), seeds)
        batch, targets = batch.clone(), targets.clone()
        at = positions.to(batch.device)
        batch[at] = torch.from_numpy(pixels).to(batch.device).permute(0, 3, 1, 2).to(batch.dtype)
        targets[at] = self.targets[crop_rows.to(self.targets.device), ks.to(self.targets.device)]
        return batch, targets
