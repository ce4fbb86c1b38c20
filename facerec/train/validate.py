"""Validation during training, on held-out CelebA identities only (never LFW: its evaluation people are measured
once, at the end): the embedding metrics and one-shot rank-1 (one seeded photo per identity enrolled, the rest
queried), the figure the product lives by."""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from facerec.metrics import ClosestIsPositiveAccuracy, MedianDistances
from facerec.evaluation.figures import one_shot_rank1
from facerec.train.data import FaceSet


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


def validate(model, faces: FaceSet, device: torch.device, autocast: bool = True,
             distiller=None) -> dict[str, float]:
    """Held-out figures of the embedding; with the distillation head, also how close its projection of the
    (unflipped) embedding comes to the teacher's held-out targets (`distill_cosine`, mean cosine in [-1, 1]) and
    the one-shot rank-1 of that projection (`projection_one_shot_rank1`): how much of the teacher has been learnt,
    beside what the shipped 512-d embedding makes of it."""
    val_rows = faces.rows("val")
    if not len(val_rows):
        return {}
    identities = [faces.identities[r] for r in val_rows]
    embeddings = embed_images(model, faces.images[val_rows], device, autocast=autocast)
    results = held_out_metrics(embeddings, faces.labels(val_rows))
    results["one_shot_rank1"] = one_shot_rank1(embeddings, identities)
    if distiller is not None and faces.teacher is not None and not np.isnan(faces.teacher[val_rows, 0]).any():
        projected = _projected(model, distiller, faces.images[val_rows], device, autocast)
        results["distill_cosine"] = float((projected * faces.teacher[val_rows, 0]).sum(axis=1).mean())
        results["projection_one_shot_rank1"] = one_shot_rank1(projected, identities)
    return {k: float(v) for k, v in results.items()}


@torch.no_grad()
def _projected(model, distiller, images: np.ndarray, device: torch.device, autocast: bool) -> np.ndarray:
    """Unit projections [N, 128] of the unflipped embeddings into the teacher's space (the projection is linear
    with no bias, so projecting the unit embedding gives the same direction as projecting the raw one)."""
    unit = embed_images(model, images, device, flip=False, autocast=autocast)
    return F.normalize(distiller.projection(torch.from_numpy(unit).to(device)).float(), dim=1).cpu().numpy()


def teacher_figures(faces: FaceSet) -> dict[str, float]:
    """The teacher's own held-out figures, from its raw descriptors (dlib compares by Euclidean distance)."""
    val_rows = faces.rows("val")
    raw = faces.teacher_raw[val_rows] if faces.teacher_raw is not None else None
    if raw is None or np.isnan(raw).any():
        return {}
    results = held_out_metrics(raw, faces.labels(val_rows))
    results["one_shot_rank1"] = one_shot_rank1(raw, [faces.identities[r] for r in val_rows], euclidean=True)
    return {k: float(v) for k, v in results.items()}
