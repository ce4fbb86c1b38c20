"""ResNet18 (torchvision) adapted to 112x112 aligned faces, ending in a 512-d embedding.

Two stems, measured against each other in the model card:
- `standard`: torchvision's 7x7/2 convolution + max-pool; the last feature map is 4x4 at 112x112.
- `high_res`: a 3x3/1 convolution + max-pool, so every stage runs at twice the resolution (7x7 final map),
  about 4x the compute, which is what face models usually do to keep fine detail.
The head is a global depthwise convolution over the final map (as in MobileFaceNet), a linear layer and
batch-norm: position-aware like the usual flatten+FC head, but 12M parameters lighter, so the ONNX file
stays under 50 MB.
"""

from __future__ import annotations

import torch
from torch import nn
from torchvision.models import resnet18

STEMS = ("standard", "high_res")


class FaceEmbedder(nn.Module):
    """float RGB [N, 3, 112, 112] in 0..255 -> embedding [N, embedding_size] (not normalised; see `normalized`)."""

    def __init__(self, stem: str = "high_res", embedding_size: int = 512, dropout: float = 0.4) -> None:
        super().__init__()
        if stem not in STEMS:
            raise ValueError(f"stem must be one of {STEMS}")
        self.stem_name = stem
        trunk = resnet18(weights=None)
        if stem == "high_res":
            trunk.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        final_side = 7 if stem == "high_res" else 4
        self.features = nn.Sequential(
            trunk.conv1, trunk.bn1, trunk.relu, trunk.maxpool, trunk.layer1, trunk.layer2, trunk.layer3, trunk.layer4
        )
        self.head = nn.Sequential(
            nn.BatchNorm2d(512),
            nn.Dropout(dropout),
            nn.Conv2d(512, 512, kernel_size=final_side, groups=512, bias=False),  # global depthwise conv
            nn.BatchNorm2d(512),
            nn.Flatten(),
            nn.Linear(512, embedding_size, bias=False),
            nn.BatchNorm1d(embedding_size),
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images / 127.5 - 1.0))


class NormalizedEmbedder(nn.Module):
    """What is exported to ONNX: the embedder followed by L2 normalisation (unit-length output)."""

    def __init__(self, embedder: FaceEmbedder) -> None:
        super().__init__()
        self.embedder = embedder

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.embedder(images).float(), dim=1)
