"""Validation during training: embedding metrics on held-out identities and the LFW one-shot protocol."""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from ..metrics import ClosestIsPositiveAccuracy, MedianDistances
from .data import FaceSet


@torch.no_grad()
def embed_images(model, images: np.ndarray, device: torch.device, batch_size: int = 256,
                 flip: bool = True, autocast: bool = True) -> np.ndarray:
    """Unit-length embeddings [N, D] (float32) of uint8 [N, 112, 112, 3] aligned crops; with `flip`, the
    embedding of the mirrored crop is added before normalising (test-time augmentation)."""
    was_training = model.training
    model.eval()
    out = []
    for start in range(0, len(images), batch_size):
        batch = torch.from_numpy(np.ascontiguousarray(images[start : start + batch_size])).to(device)
        batch = batch.permute(0, 3, 1, 2).float().contiguous(memory_format=torch.channels_last)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=autocast):
            embedding = model(batch).float()
            if flip:
                embedding = embedding + model(batch.flip(3)).float()
        out.append(F.normalize(embedding, dim=1).cpu().numpy())
    model.train(was_training)
    return np.concatenate(out) if out else np.zeros((0, 512), np.float32)


def held_out_metrics(embeddings: np.ndarray, labels: np.ndarray, batch_size: int = 512) -> dict[str, float]:
    """The spec's metrics over the held-out identities, fed batch by batch through a cross-batch memory as large
    as the whole set, so the final update scores every held-out photo against every other."""
    accuracy = ClosestIsPositiveAccuracy(cross_batch_memory_size=len(labels))
    medians = MedianDistances(cross_batch_memory_size=len(labels))
    for start in range(0, len(labels), batch_size):
        accuracy.update(embeddings[start : start + batch_size], labels[start : start + batch_size])
        medians.update(embeddings[start : start + batch_size], labels[start : start + batch_size])
    return {"closest_is_positive_accuracy": accuracy.compute(), **medians.compute()}


def lfw_one_shot_rank1(faces: FaceSet, embeddings_by_row: dict[int, np.ndarray]) -> float:
    """Rank-1 of the LFW one-shot protocol from precomputed embeddings of the `lfw_eval` rows."""
    gallery_rows, query_rows = faces.lfw_protocol()
    gallery = np.stack([embeddings_by_row[r] for r in gallery_rows])
    queries = np.stack([embeddings_by_row[r] for r in query_rows])
    gallery_names = [faces.identities[r] for r in gallery_rows]
    best = (queries @ gallery.T).argmax(axis=1)
    return float(np.mean([gallery_names[b] == faces.identities[q] for b, q in zip(best, query_rows)]))


def validate(model, faces: FaceSet, device: torch.device) -> dict[str, float]:
    val_rows = faces.rows("val")
    results: dict[str, float] = {}
    if len(val_rows):
        embeddings = embed_images(model, faces.images[val_rows], device)
        results.update(held_out_metrics(embeddings, faces.labels(val_rows)))
    lfw_rows = faces.rows("lfw_eval")
    if len(lfw_rows):
        embeddings = embed_images(model, faces.images[lfw_rows], device)
        results["lfw_one_shot_rank1"] = lfw_one_shot_rank1(faces, dict(zip(lfw_rows.tolist(), embeddings)))
    return {k: float(v) for k, v in results.items()}
