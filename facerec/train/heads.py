"""The four training objectives the metric-learning comparison covers; each maps (embeddings, labels) -> loss.

- `SoftmaxHead`: a plain linear classifier with cross-entropy.
- `ArcFaceHead`: additive angular margin (Deng et al. 2019) on a cosine classifier; a subclass of
  `CosineMarginHead` that overrides only how the target logit is penalised.
- `ContrastiveLoss`: every pair of the batch; positives pulled to 0, negatives pushed beyond `margin`.
- `TripletLoss`: every valid (anchor, positive, negative) triplet of the batch, hinge at `margin`.
Pair and triplet losses work on L2-normalised embeddings (the geometry the runtime uses) and average over the
terms that are non-zero, as pytorch-metric-learning's reducers do. Their batches come from a P x K sampler.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from facerec.errors import InvalidArgument

HEADS = ("softmax", "contrastive", "triplet", "arcface")


class SoftmaxHead(nn.Module):
    def __init__(self, embedding_size: int, num_classes: int) -> None:
        super().__init__()
        self.classifier = nn.Linear(embedding_size, num_classes)

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.classifier(embeddings.float()), labels)


class CosineMarginHead(nn.Module):
    """Cosine classifier: logits = scale * cos(angle between embedding and class centre), with a margin hook."""

    def __init__(self, embedding_size: int, num_classes: int, scale: float = 30.0) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_classes, embedding_size))
        nn.init.normal_(self.weight, std=0.01)
        self.scale = scale
        self.margin_fraction = 1.0  # the training loop ramps this from 0 to 1 during warm-up

    def target_logit(self, cosine: torch.Tensor) -> torch.Tensor:
        return cosine

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        cosine = F.linear(F.normalize(embeddings.float(), dim=1), F.normalize(self.weight, dim=1))
        cosine = cosine.clamp(-1 + 1e-7, 1 - 1e-7)
        target = cosine.gather(1, labels[:, None])
        logits = cosine.scatter(1, labels[:, None], self.target_logit(target))
        return F.cross_entropy(self.scale * logits, labels)


class ArcFaceHead(CosineMarginHead):
    """cos(theta + m) for the target class: an additive margin on the angle itself."""

    def __init__(self, embedding_size: int, num_classes: int, scale: float = 30.0, margin: float = 0.4) -> None:
        super().__init__(embedding_size, num_classes, scale)
        self.margin = margin

    def target_logit(self, cosine: torch.Tensor) -> torch.Tensor:
        margin = self.margin * self.margin_fraction
        theta = torch.acos(cosine)
        # Past pi - m, cos(theta + m) would increase again; fall back to a linear penalty (as insightface does).
        penalised = torch.cos(theta + margin)
        return torch.where(theta + margin < math.pi, penalised, cosine - margin * math.sin(margin))


def _pairwise(embeddings: torch.Tensor, labels: torch.Tensor):
    unit = F.normalize(embeddings.float(), dim=1)
    distances = torch.cdist(unit, unit).clamp_min(0)
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    return distances, same & ~eye, ~same


def _mean_nonzero(values: torch.Tensor) -> torch.Tensor:
    nonzero = values > 0
    return values[nonzero].mean() if nonzero.any() else values.sum() * 0.0


class ContrastiveLoss(nn.Module):
    def __init__(self, margin: float = 2.0) -> None:
        super().__init__()
        self.margin = margin

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        distances, positive, negative = _pairwise(embeddings, labels)
        upper = torch.triu(torch.ones_like(positive), diagonal=1)
        positive_terms = distances[positive & upper] ** 2
        negative_terms = F.relu(self.margin - distances[negative & upper]) ** 2
        return _mean_nonzero(positive_terms) + _mean_nonzero(negative_terms)


class TripletLoss(nn.Module):
    def __init__(self, margin: float = 2.0) -> None:
        super().__init__()
        self.margin = margin

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        distances, positive, negative = _pairwise(embeddings, labels)
        terms = F.relu(distances[:, :, None] - distances[:, None, :] + self.margin)
        valid = positive[:, :, None] & negative[:, None, :]
        return _mean_nonzero(terms[valid])


def build_head(name: str, embedding_size: int, num_classes: int, scale: float, margin: float) -> nn.Module:
    if name == "softmax":
        return SoftmaxHead(embedding_size, num_classes)
    if name == "arcface":
        return ArcFaceHead(embedding_size, num_classes, scale=scale, margin=margin)
    if name == "contrastive":
        return ContrastiveLoss(margin)
    if name == "triplet":
        return TripletLoss(margin)
    raise InvalidArgument(f"unknown head {name!r}; choose from {HEADS}")


def needs_identity_batches(name: str) -> bool:
    """Pair and triplet losses need several photos of each identity in a batch (P x K sampling)."""
    return name in ("contrastive", "triplet")
