"""The tail term: every anchor against a memory of the student's recent embeddings, at the strict thresholds.

Why: ArcFace and the teacher's cosine see one batch at a time, and random batches hold almost no look-alikes, so
nothing pushes on the few impostor pairs that set the threshold at a false-accept rate of 1e-4. Following
cross-batch memory (XBM, Wang et al., CVPR 2020) a queue keeps the last `size` embeddings (detached) with their
identities, so each anchor meets thousands of other people per step; following evaluation-oriented distillation
(EKD, Huang et al., CVPR 2022) the loss looks only at the pairs that cross thresholds: at each false-accept rate
of `FARS`, the threshold is the batch-against-memory impostor quantile, and the loss is a soft count of genuine
pairs below it and of the hardest impostor pairs above it. Lowering those counts is what lifts TAR at that FAR.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

FARS = (1e-2, 1e-3, 1e-4)
HARDEST = 20  # impostors per anchor in the loss
TEMPERATURE = 0.05


class EmbeddingMemory:
    """A queue of the last `size` unit embeddings (detached) and their labels."""

    def __init__(self, size: int, dimension: int, device: torch.device) -> None:
        self.embeddings = torch.zeros(size, dimension, device=device)
        self.labels = torch.full((size,), -1, dtype=torch.long, device=device)
        self.position, self.filled = 0, 0

    def add(self, embeddings: torch.Tensor, labels: torch.Tensor) -> None:
        count = min(len(embeddings), len(self.labels))
        where = (self.position + torch.arange(count, device=self.labels.device)) % len(self.labels)
        self.embeddings[where] = F.normalize(embeddings[:count].detach().float(), dim=1)
        self.labels[where] = labels[:count]
        self.position = int((self.position + count) % len(self.labels))
        self.filled = min(len(self.labels), self.filled + count)


def tail_loss(embeddings: torch.Tensor, labels: torch.Tensor, memory: EmbeddingMemory) -> torch.Tensor:
    """The soft count of threshold crossings of the batch (labelled rows) against the memory and itself, averaged
    over `FARS`; the memory then takes the batch in. Zero until the memory holds impostor pairs enough for the
    strictest FAR."""
    labelled = labels >= 0
    anchors, anchor_labels = F.normalize(embeddings[labelled].float(), dim=1), labels[labelled]
    bank = torch.cat([memory.embeddings[: memory.filled], anchors.detach()])
    bank_labels = torch.cat([memory.labels[: memory.filled], anchor_labels])
    similarities = anchors @ bank.T
    same = anchor_labels[:, None] == bank_labels[None, :]
    itself = torch.zeros_like(same)
    itself[torch.arange(len(anchors)), memory.filled + torch.arange(len(anchors))] = True
    genuine, impostor = same & ~itself, ~same
    loss = embeddings.sum() * 0.0
    impostors = similarities[impostor]
    if len(impostors) * min(FARS) >= 1 and bool(genuine.any()):
        hardest = similarities.masked_fill(~impostor, -2.0).topk(min(HARDEST, bank.shape[0]), dim=1).values
        hardest = hardest[hardest > -2.0]
        positives = similarities[genuine]
        for far in FARS:
            count = max(1, int(far * len(impostors)))
            threshold = impostors.detach().topk(count).values[-1]
            loss = loss + F.softplus((threshold - positives) / TEMPERATURE).mean() * TEMPERATURE \
                + F.softplus((hardest - threshold) / TEMPERATURE).mean() * TEMPERATURE
        loss = loss / len(FARS)
    memory.add(anchors, anchor_labels)
    return loss
