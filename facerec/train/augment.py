"""Face augmentation, batched on the training device (GPU or CPU) so data loading never stalls training.

Input: uint8 [N, 112, 112, 3] aligned crops. Output: float [N, 3, 112, 112] in 0..255 (the embedder normalises).
Kept mild in geometry (the crops are aligned; big warps would teach the model misalignment) and strong in
appearance: colour jitter, grayscale, blur and down-scaling so low-resolution and compressed uploads still work.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F


class FaceAugmentation:
    def __init__(
        self,
        flip: float = 0.5,
        max_scale: float = 0.1,
        max_shift: float = 0.06,
        max_rotation_deg: float = 8.0,
        colour: float = 0.3,
        grayscale: float = 0.1,
        blur: float = 0.15,
        downscale: float = 0.15,
        enabled: bool = True,
    ) -> None:
        self.flip, self.max_scale, self.max_shift = flip, max_scale, max_shift
        self.max_rotation = math.radians(max_rotation_deg)
        self.colour, self.grayscale, self.blur, self.downscale = colour, grayscale, blur, downscale
        self.enabled = enabled

    def __call__(self, batch: torch.Tensor) -> torch.Tensor:
        return self.with_flips(batch)[0]

    def with_flips(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(augmented float [N, 3, 112, 112] in 0..255, bool [N]: which crops were mirrored). Distillation needs
        the second: a mirrored crop is matched to the teacher's descriptor of the mirrored crop."""
        images = batch.permute(0, 3, 1, 2).float() / 255.0
        flipped = torch.zeros(len(images), dtype=torch.bool, device=images.device)
        if self.enabled:
            images, flipped = self._geometry(images)
            images = self._appearance(images)
            images = self._degrade(images)
        return images.clamp(0, 1) * 255.0, flipped

    def _rand(self, count: int, device) -> torch.Tensor:
        return torch.rand(count, device=device)

    def _geometry(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        count, device = images.shape[0], images.device
        flip = self._rand(count, device) < self.flip
        images = torch.where(flip[:, None, None, None], images.flip(3), images)
        scale = 1.0 + (self._rand(count, device) * 2 - 1) * self.max_scale
        angle = (self._rand(count, device) * 2 - 1) * self.max_rotation
        shift = (torch.rand(count, 2, device=device) * 2 - 1) * self.max_shift
        cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
        theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], 1), torch.stack([sin, cos, shift[:, 1]], 1)], 1)
        grid = F.affine_grid(theta, list(images.shape), align_corners=False)
        return F.grid_sample(images, grid, mode="bilinear", padding_mode="zeros", align_corners=False), flip

    def _appearance(self, images: torch.Tensor) -> torch.Tensor:
        count, device = images.shape[0], images.device
        shape = (count, 1, 1, 1)

        def factor() -> torch.Tensor:
            return 1.0 + (torch.rand(shape, device=device) * 2 - 1) * self.colour

        weights = torch.tensor([0.299, 0.587, 0.114], device=device).view(1, 3, 1, 1)
        images = images * factor()
        gray = (images * weights).sum(1, keepdim=True)
        mean = gray.mean(dim=(2, 3), keepdim=True)
        images = (images - mean) * factor() + mean
        gray = (images * weights).sum(1, keepdim=True)
        images = gray + (images - gray) * factor()
        to_gray = torch.rand(shape, device=device) < self.grayscale
        gray = (images * weights).sum(1, keepdim=True).expand_as(images)
        return torch.where(to_gray, gray, images).clamp(0, 1)

    def _degrade(self, images: torch.Tensor) -> torch.Tensor:
        count, device = images.shape[0], images.device
        blurred = self._rand(count, device) < self.blur
        if blurred.any():
            sigma = float(torch.empty(1).uniform_(0.5, 1.6))
            images[blurred] = _gaussian_blur(images[blurred], sigma)
        small = self._rand(count, device) < self.downscale
        if small.any():
            side = int(torch.randint(24, 72, (1,)))
            size = images.shape[-1]
            shrunk = F.interpolate(images[small], size=(side, side), mode="bilinear", antialias=True,
                                   align_corners=False)
            images[small] = F.interpolate(shrunk, size=(size, size), mode="bilinear", align_corners=False)
        return images


def _gaussian_blur(images: torch.Tensor, sigma: float) -> torch.Tensor:
    radius = max(1, int(math.ceil(2.5 * sigma)))
    offsets = torch.arange(-radius, radius + 1, device=images.device, dtype=images.dtype)
    kernel = torch.exp(-(offsets**2) / (2 * sigma**2))
    kernel = kernel / kernel.sum()
    channels = images.shape[1]
    horizontal = kernel.view(1, 1, 1, -1).repeat(channels, 1, 1, 1)
    vertical = kernel.view(1, 1, -1, 1).repeat(channels, 1, 1, 1)
    images = F.conv2d(F.pad(images, (radius, radius, 0, 0), mode="reflect"), horizontal, groups=channels)
    return F.conv2d(F.pad(images, (0, 0, radius, radius), mode="reflect"), vertical, groups=channels)
