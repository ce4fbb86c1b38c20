"""Distillation from dlib's face network: a linear projection of the student's embedding regressed onto the
teacher's descriptor by cosine.

The projection (512 -> 128, training only, not exported) lets the student keep its own 512-d space for ArcFace
while its geometry is pulled towards the teacher's, which was learnt from ~3 million faces. Targets are unit
vectors of the centred teacher descriptors (`facerec.train.teacher.normalized_targets`); rows with no target
(NaN) contribute nothing.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class DistillationHead(nn.Module):
    def __init__(self, embedding_size: int = 512, teacher_size: int = 128) -> None:
        super().__init__()
        self.projection = nn.Linear(embedding_size, teacher_size, bias=False)

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """embeddings [N, 512], targets [N, 128] unit (NaN rows skipped) -> mean (1 - cosine), in [0, 2]."""
        known = ~torch.isnan(targets[:, 0])
        if not bool(known.any()):
            return embeddings.sum() * 0.0
        projected = F.normalize(self.projection(embeddings[known].float()), dim=1)
        return (1.0 - (projected * targets[known]).sum(dim=1)).mean()
