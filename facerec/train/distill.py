"""Distillation from dlib's face network, two ways: a linear projection of the student's embedding regressed onto
the teacher's descriptor by cosine (`DistillationHead`), and the batch's similarity structure matched
(`similarity_structure_loss`), the teacher's alone or the fused pack's (`fused_targets`).

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


def similarity_structure_loss(embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean squared difference between the cosine similarities of the batch's embeddings, pair by pair, and those
    of their teacher targets (unit, centred: NaN rows skipped; the diagonal left out).

    Why, beside the projection: the projection can reach the teacher's directions through a linear map while the
    512-d embedding itself, the one that is searched, keeps its own geometry. This term asks the embedding's own
    cosines to be the teacher's: how similar two different people look, not only who is who. Measured before it
    was trained with: a linear map of the shipped embedding fitted to blend its similarities with the teacher's
    raised held-out one-shot rank-1 by ~1 point, so the teacher's structure carries what ArcFace alone misses."""
    known = ~torch.isnan(targets[:, 0])
    if int(known.sum()) < 2:
        return embeddings.sum() * 0.0
    student = F.normalize(embeddings[known].float(), dim=1)
    teacher = targets[known]
    difference = student @ student.T - teacher @ teacher.T
    off_diagonal = ~torch.eye(len(student), dtype=torch.bool, device=student.device)
    return (difference[off_diagonal] ** 2).mean()


def fused_targets(targets: torch.Tensor, reference: torch.Tensor, share: float) -> torch.Tensor:
    """[N, 128 + 512] unit rows whose cosines are the fused pack's: `share` x the teacher's cosine + (1 - share) x
    the reference model's (`facerec.packs.join`, with the teacher's centred targets for dlib's part and the
    reference's whole embedding for facerec's). Rows without a teacher target stay NaN (first column), so
    `similarity_structure_loss` skips them as before.

    Why: the fused pack (the two networks' normalised scores together) is ahead of both its parts at strict
    rates; asking one network's cosines to be the fused ones is how a single ResNet18 could carry what both know
    (#61 item 5), the student keeping its own embedding where the teacher is silent."""
    teacher_part = targets * share ** 0.5
    reference_part = F.normalize(reference.float(), dim=1) * (1.0 - share) ** 0.5
    return torch.cat([teacher_part, reference_part], dim=1)
