"""ResNet18 adapted to 112x112 aligned faces, ending in a 512-d embedding.

The ResNet18 trunk is torchvision's, written out here (its BasicBlock, the same module names, shapes and
initialisation), so training needs torch alone: torchvision's wheels are tied to one torch release each, and a
test environment can then take whichever torch build is at hand (#31 item 11).

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

from facerec.errors import InvalidArgument

STEMS = ("standard", "high_res")


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock: two 3x3 convolutions and a shortcut (a 1x1 projection when the shape
    changes); its attribute names are torchvision's, so weights map one to one."""

    def __init__(self, inputs: int, outputs: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(outputs, outputs, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.downsample = (nn.Sequential(nn.Conv2d(inputs, outputs, kernel_size=1, stride=stride, bias=False),
                                         nn.BatchNorm2d(outputs)) if stride != 1 or inputs != outputs else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


def resnet18_trunk(stem: str) -> nn.Sequential:
    """conv1, bn1, relu, maxpool, layer1..layer4 of ResNet18 (512 channels out), with torchvision's
    initialisation (He normal for convolutions, unit scale and zero shift for batch-norms)."""
    conv1 = (nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False) if stem == "high_res" else
             nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False))
    layers = []
    for inputs, outputs, stride in ((64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)):
        layers.append(nn.Sequential(BasicBlock(inputs, outputs, stride), BasicBlock(outputs, outputs)))
    trunk = nn.Sequential(conv1, nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                          nn.MaxPool2d(kernel_size=3, stride=2, padding=1), *layers)
    for module in trunk.modules():
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
    return trunk


class FaceEmbedder(nn.Module):
    """float RGB [N, 3, 112, 112] in 0..255 -> embedding [N, embedding_size] (not normalised; see `normalized`)."""

    def __init__(self, stem: str = "high_res", embedding_size: int = 512, dropout: float = 0.4) -> None:
        super().__init__()
        if stem not in STEMS:
            raise InvalidArgument(f"stem must be one of {STEMS}")
        self.stem_name = stem
        final_side = 7 if stem == "high_res" else 4
        self.features = resnet18_trunk(stem)
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
