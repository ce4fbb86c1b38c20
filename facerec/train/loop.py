"""The training loop: ArcFace plus optional distillation from the teacher, bf16 autocast where the hardware has
native bf16 (fp32 elsewhere), channels_last, SGD with warm-up + cosine decay, an optional warm start from a
shipped ONNX model, a checkpoint every epoch, resume from the last one, and one JSON line per epoch in
`train_log.jsonl` (losses, learning rate, speed, held-out validation figures)."""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from facerec.errors import InvalidArgument
from facerec.train.augment import FaceAugmentation
from facerec.train.augmented_targets import StoredAugmentations
from facerec.train.backbone import FaceEmbedder
from facerec.train.data import FaceSet, teacher_key
from facerec.train.distill import DistillationHead, fused_targets, similarity_structure_loss
from facerec.train.heads import build_head, needs_identity_batches
from facerec.train.lookalikes import LookalikeRows, nearest_identities
from facerec.train.precision import use_bf16
from facerec.train.reference import ReferenceEmbedder, reference_loss
from facerec.train.strict_threshold_loss import EmbeddingMemory, tail_loss
from facerec.train.validate import validate

CHECKPOINT_FILE, LOG_FILE, WEIGHTS_FILE, BEST_FILE = "last.ckpt", "train_log.jsonl", "embedder.pt", "best.pt"
CONFIG_FILE = "config.json"


@dataclass
class TrainConfig:
    head: str = "arcface"
    stem: str = "high_res"
    epochs: int = 20
    batch_size: int = 256
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 5e-4
    warmup_epochs: float = 1.0
    arcface_scale: float = 30.0
    arcface_margin: float = 0.4
    pair_margin: float = 2.0
    dropout: float = 0.4
    photos_per_identity: int = 4
    augment: bool = True
    seed: int = 0
    device: str = "auto"
    bf16: bool | None = None  # None: bf16 autocast only where the device computes bf16 natively
    arcface_weight: float = 1.0  # weight of the head's loss (0: distillation alone)
    distill_weight: float = 0.0  # weight of the cosine regression onto the teacher (0: no distillation)
    structure_weight: float = 0.0  # weight of the batch similarity-structure match to the teacher (0: none)
    warm_start: str | None = None  # ONNX embedder whose weights start the run (moved to `stem` if it differs)
    validate_every: int = 1
    max_seconds: float | None = None  # stop early (after the current step) once this much time has passed
    stop_after_epoch: int | None = None  # end this call after that epoch (the schedule stays the one of `epochs`;
    #                                      the same command without it resumes the run to the end)
    keep_best: str | None = "one_shot_rank1"  # held-out metric whose best epoch is kept
    held_out_split: str = "single"  # `facerec.datasets.folders.HELD_OUT_SPLITS`: "disjoint" from model v9
    reference_model: str | None = None  # an ONNX embedder run on each augmented batch as a second teacher
    reference_weight: float = 0.0  # weight of pointing the embedding along the reference's (`reference_loss`)
    fused_share: float = 0.0  # > 0: the structure term matches the fused pack's cosines, this share the teacher's
    #                           and the rest the reference model's (`facerec.train.distill.fused_targets`)
    augmented_share: float = 0.5  # where the faces carry stored augmentations' targets: the share of a batch's
    #                               crops shown one of them (`facerec.train.augmented_targets.StoredAugmentations`)
    lookalike_share: float = 0.0  # share of each batch made of look-alike identities (`facerec.train.lookalikes`)
    lookalike_neighbours: int = 5  # each identity's nearest identities (by the teacher) its look-alikes come from
    tail_weight: float = 0.0  # weight of the threshold-crossing term against a memory (`facerec.train.strict_threshold_loss`)
    tail_memory: int = 8192  # embeddings that memory holds
    ema_decay: float = 0.0  # > 0: keep, validate and save an exponential moving average of the weights
    flip_invariant_targets: bool = False  # the teacher target of a crop and of its mirror: their normalised mean
    notes: dict = field(default_factory=dict)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class BatchSampler:
    """Random batches over training rows, or P identities x K photos when the loss needs positives in-batch.
    Both give the same number of batches per epoch, so heads see the same amount of data. Unlabelled rows
    (label -1) come only in random batches: P x K needs identities."""

    def __init__(self, labels: np.ndarray, batch_size: int, per_identity: int | None, seed: int,
                 lookalikes: LookalikeRows | None = None, lookalike_share: float = 0.0) -> None:
        self.labels, self.batch_size, self.per_identity = labels, batch_size, per_identity
        self.lookalikes = lookalikes
        self.lookalike_rows = int(round(lookalike_share * batch_size)) if lookalikes is not None else 0
        self.rng = np.random.default_rng(seed)
        self.by_label = [np.flatnonzero(labels == k) for k in range(labels.max() + 1)]
        if per_identity and (labels < 0).any():
            raise InvalidArgument("unlabelled rows need a head trained on random batches (e.g. arcface)")
        self.steps_per_epoch = len(labels) // batch_size

    def epoch(self):
        if not self.per_identity:
            order = self.rng.permutation(len(self.labels))
            plain = self.batch_size - self.lookalike_rows  # the rest of a batch: the epoch's random order
            for step in range(self.steps_per_epoch):
                rows = order[step * plain : (step + 1) * plain]
                if self.lookalike_rows:
                    rows = np.concatenate([rows, self.lookalikes.rows(self.rng, self.lookalike_rows)])
                yield rows
            return
        identities_per_batch = self.batch_size // self.per_identity
        for _ in range(self.steps_per_epoch):
            chosen = self.rng.choice(len(self.by_label), identities_per_batch, replace=False)
            yield np.concatenate([
                self.rng.choice(self.by_label[k], self.per_identity, replace=len(self.by_label[k]) < self.per_identity)
                for k in chosen
            ])


def learning_rate(config: TrainConfig, step: int, total_steps: int, steps_per_epoch: int) -> float:
    warmup = max(1, int(config.warmup_epochs * steps_per_epoch))
    if step < warmup:
        return config.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total_steps - warmup)
    return config.lr * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def train(config: TrainConfig, faces: FaceSet, run_dir: str | Path,
          log: Callable[[str], None] = print) -> dict:
    """Train (or resume) in `run_dir`; returns the last epoch's log record."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    device = pick_device(config.device)
    bf16 = use_bf16(device) if config.bf16 is None else config.bf16
    checkpoint_path = run_dir / CHECKPOINT_FILE
    parts = _build_parts(config, faces, device, imprint=not checkpoint_path.exists())
    model, head, distiller, optimizer, sampler = (parts.model, parts.head, parts.distiller, parts.optimizer,
                                                  parts.sampler)
    scored = parts.ema if parts.ema is not None else model  # what is validated, kept and saved
    total_steps = config.epochs * sampler.steps_per_epoch
    log(f"training on {device} with {'bf16 autocast' if bf16 else 'fp32'}: {len(parts.images)} crops, "
        f"{sampler.steps_per_epoch} steps per epoch, {config.epochs} epochs")
    val_rows = faces.rows("val")
    (run_dir / CONFIG_FILE).write_text(json.dumps({
        "config": asdict(config), "device": str(device), "precision": "bf16" if bf16 else "fp32",
        "training_images": len(parts.images), "training_identities": int(parts.labels.max()) + 1,
        "unlabelled_images": int((parts.labels < 0).sum()),
        "validation_images": len(val_rows), "validation_identities": len({faces.identities[r] for r in val_rows}),
    }, indent=1))

    start_epoch, history = 0, []
    if checkpoint_path.exists():
        state = torch.load(checkpoint_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        head.load_state_dict(state["head"])
        distiller.load_state_dict(state["distiller"])
        optimizer.load_state_dict(state["optimizer"])
        if parts.ema is not None and "ema" in state:
            parts.ema.load_state_dict(state["ema"])
        sampler.rng.bit_generator.state = state["sampler_rng"]
        torch.set_rng_state(state["torch_rng"])
        start_epoch, history = state["epoch"] + 1, state["history"]
        log(f"resumed from epoch {start_epoch} of {config.epochs}")

    started = time.perf_counter()
    earlier_seconds = history[-1]["elapsed_seconds"] if history else 0.0  # spent before a resume
    record: dict = history[-1] if history else {}
    for epoch in range(start_epoch, config.epochs):
        if config.stop_after_epoch is not None and epoch >= config.stop_after_epoch:
            log(f"stopping after epoch {epoch} of {config.epochs} (--stop-after-epoch); run again without it to "
                "resume")
            break
        model.train()
        head.train()
        epoch_start, losses = time.perf_counter(), []
        for step_in_epoch, batch_rows in enumerate(sampler.epoch()):
            step = epoch * sampler.steps_per_epoch + step_in_epoch
            lr = learning_rate(config, step, total_steps, sampler.steps_per_epoch)
            for group in optimizer.param_groups:
                group["lr"] = lr
            if hasattr(head, "margin_fraction"):  # ramp the angular margin in over the warm-up
                head.margin_fraction = min(1.0, (step + 1) / max(1, config.warmup_epochs * sampler.steps_per_epoch))
            losses.append(_step(config, bf16, device, parts, batch_rows))
            if config.max_seconds and time.perf_counter() - started > config.max_seconds:
                break
        seconds = time.perf_counter() - epoch_start
        means = torch.stack(losses).float().mean(dim=0).tolist()
        arcface_loss, distill_loss, structure_loss, reference_loss_, tail_loss_ = means
        record = {
            "epoch": epoch + 1,
            "loss": (config.arcface_weight * arcface_loss + config.distill_weight * distill_loss
                     + config.structure_weight * structure_loss + config.reference_weight * reference_loss_
                     + config.tail_weight * tail_loss_),
            "arcface_loss": arcface_loss,
            "distill_loss": distill_loss,
            **({"structure_loss": structure_loss} if config.structure_weight else {}),
            **({"reference_loss": reference_loss_} if config.reference_weight else {}),
            **({"tail_loss": tail_loss_} if config.tail_weight else {}),
            "lr": lr,
            "images_per_second": len(losses) * config.batch_size / seconds,
            "epoch_seconds": round(seconds, 2),
            "elapsed_seconds": round(earlier_seconds + time.perf_counter() - started, 1),
            "precision": "bf16" if bf16 else "fp32",
        }
        out_of_time = bool(config.max_seconds) and time.perf_counter() - started > config.max_seconds
        if (epoch + 1) % config.validate_every == 0 or epoch + 1 == config.epochs or out_of_time:
            record.update(validate(scored, faces, device, autocast=bf16, distiller=distiller))
            _keep_if_best(config, scored, record, history, run_dir)
        history.append(record)
        log(json.dumps(record))
        with open(run_dir / LOG_FILE, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        temporary = checkpoint_path.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "head": head.state_dict(), "distiller": distiller.state_dict(),
                    "optimizer": optimizer.state_dict(), "sampler_rng": sampler.rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(), "epoch": epoch, "history": history,
                    "config": asdict(config), **({"ema": parts.ema.state_dict()} if parts.ema is not None else {})},
                   temporary)
        temporary.replace(checkpoint_path)  # a kill while saving leaves the previous checkpoint intact
        if out_of_time:
            log(f"stopping after epoch {epoch + 1}: time budget of {config.max_seconds:.0f}s spent")
            break
    torch.save({"model": scored.state_dict(), "config": asdict(config), "history": history},
               run_dir / WEIGHTS_FILE)
    return record


@dataclass
class _RunParts:
    """Everything one training step touches."""

    model: FaceEmbedder
    head: torch.nn.Module
    distiller: DistillationHead
    optimizer: torch.optim.Optimizer
    sampler: BatchSampler
    augment: FaceAugmentation
    images: torch.Tensor  # uint8 [N, 112, 112, 3] training crops
    labels: torch.Tensor  # int64 [N]
    targets: torch.Tensor  # float32 [N, 2, 128] teacher targets for the crop and its mirror (NaN: none)
    stored: StoredAugmentations | None = None  # augmentations whose teacher targets were computed beforehand
    reference: ReferenceEmbedder | None = None  # the second teacher, run on each batch's pixels
    memory: EmbeddingMemory | None = None  # the tail term's memory of recent embeddings
    ema: FaceEmbedder | None = None  # the moving average of the weights, when kept


def _build_parts(config: TrainConfig, faces: FaceSet, device: torch.device, imprint: bool = False) -> _RunParts:
    train_rows = faces.rows("train")
    labels = faces.labels(train_rows)
    num_classes = int(labels.max()) + 1
    model = _initial_model(config, faces).to(device).to(memory_format=torch.channels_last)
    head = build_head(config.head, 512, num_classes, config.arcface_scale,
                      config.arcface_margin if config.head == "arcface" else config.pair_margin).to(device)
    if imprint and config.warm_start and hasattr(head, "weight"):
        labelled = labels >= 0
        head.weight.data.copy_(_class_centres(model, faces.images[train_rows[labelled]], labels[labelled],
                                              num_classes, device))
    distiller = DistillationHead().to(device)
    parameters = [{"params": model.parameters()}, {"params": head.parameters()},
                  {"params": distiller.parameters()}]
    optimizer = torch.optim.SGD(parameters, lr=config.lr, momentum=config.momentum,
                                weight_decay=config.weight_decay, nesterov=True)
    teacher = faces.teacher[train_rows] if faces.teacher is not None else np.full((len(train_rows), 2, 128), np.nan)
    if config.flip_invariant_targets:  # the embedder flips at test time: its target is the pair's mean
        teacher = flip_invariant(teacher)
    lookalikes = None
    if config.lookalike_share:
        if faces.teacher is None:
            raise InvalidArgument("look-alike batches need teacher targets (pass teacher files)")
        lookalikes = LookalikeRows(labels, nearest_identities(teacher, labels, config.lookalike_neighbours))
    sampler = BatchSampler(labels, config.batch_size,
                           config.photos_per_identity if needs_identity_batches(config.head) else None, config.seed,
                           lookalikes, config.lookalike_share)
    augment = FaceAugmentation(enabled=config.augment)
    images = torch.from_numpy(faces.images[train_rows]).to(device)
    label_tensor = torch.from_numpy(labels).to(device)
    if (config.distill_weight or config.structure_weight) and faces.teacher is None:
        raise InvalidArgument("distillation needs teacher targets (pass teacher files)")
    if (labels < 0).any() and not config.distill_weight:
        raise InvalidArgument("unlabelled rows teach only through the teacher: set a distillation weight")
    targets = torch.from_numpy(np.ascontiguousarray(teacher, dtype=np.float32)).to(device)
    stored = None
    if faces.augmented_teacher is not None and config.augmented_share > 0:
        stored = StoredAugmentations(images, [teacher_key(faces.paths[r]) for r in train_rows],
                                     faces.augmented_teacher[train_rows], config.augmented_share)
    if (config.reference_weight or config.fused_share) and not config.reference_model:
        raise InvalidArgument("a reference weight or a fused share needs a reference model (an ONNX embedder)")
    if config.fused_share and not (0.0 < config.fused_share < 1.0 and config.structure_weight):
        raise InvalidArgument("a fused share is the teacher's share of the structure term's cosines: between 0 and 1, "
                              "with a structure weight")
    reference = ReferenceEmbedder(config.reference_model) if config.reference_weight or config.fused_share else None
    memory = EmbeddingMemory(config.tail_memory, 512, device) if config.tail_weight else None
    ema = copy.deepcopy(model).requires_grad_(False) if config.ema_decay else None
    return _RunParts(model, head, distiller, optimizer, sampler, augment, images, label_tensor, targets, stored,
                     reference, memory, ema)


def _class_centres(model: FaceEmbedder, images: np.ndarray, labels: np.ndarray, num_classes: int,
                   device: torch.device) -> torch.Tensor:
    """Unit mean embedding of each class under the warm-start model: the ArcFace head starts from these instead of
    random centres, whose large, meaningless gradients would first wreck the features the run starts from."""
    from facerec.train.validate import embed_images

    embeddings = torch.from_numpy(embed_images(model, images, device, flip=False, autocast=use_bf16(device)))
    centres = torch.zeros(num_classes, embeddings.shape[1]).index_add_(0, torch.from_numpy(labels), embeddings)
    return torch.nn.functional.normalize(centres, dim=1).to(device)


def _initial_model(config: TrainConfig, faces: FaceSet) -> FaceEmbedder:
    if not config.warm_start:
        return FaceEmbedder(config.stem, dropout=config.dropout)
    from facerec.train.warm_start import load_onnx_weights, to_standard_stem

    calibration = faces.images[faces.rows("train")[:: max(1, len(faces.rows("train")) // 256)][:256]]
    model = load_onnx_weights(config.warm_start, calibration)
    model = to_standard_stem(model) if config.stem == "standard" else model
    if model.stem_name != config.stem:
        raise InvalidArgument(f"cannot warm-start a {config.stem} stem from a {model.stem_name} model")
    model.head[1].p = config.dropout
    return model


def _step(config: TrainConfig, bf16: bool, device, parts: _RunParts, batch_rows) -> torch.Tensor:
    """One optimisation step on the given training rows; returns the detached (ArcFace, distillation, similarity
    structure, reference) losses."""
    index = torch.from_numpy(batch_rows).to(device)
    batch, flipped = parts.augment.with_flips(parts.images[index])
    targets = parts.targets[index, flipped.long()]
    if parts.stored is not None:
        batch, targets = parts.stored.apply(index, batch, targets)
    batch = batch.contiguous(memory_format=torch.channels_last)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16):
        embeddings = parts.model(batch)
    embeddings = embeddings.float()
    zero = embeddings.sum() * 0.0
    labels = parts.labels[index]
    labelled = labels >= 0  # unlabelled rows (-1) are taught by the teacher alone
    arcface = (parts.head(embeddings[labelled], labels[labelled]) if config.arcface_weight and bool(labelled.any())
               else zero)
    distill = parts.distiller(embeddings, targets) if config.distill_weight else zero
    referenced = parts.reference(batch) if parts.reference is not None else None
    structure_targets = fused_targets(targets, referenced, config.fused_share) if config.fused_share else targets
    structure = similarity_structure_loss(embeddings, structure_targets) if config.structure_weight else zero
    reference = reference_loss(embeddings, referenced) if config.reference_weight else zero
    tail = tail_loss(embeddings, labels, parts.memory) if parts.memory is not None else zero
    loss = (config.arcface_weight * arcface + config.distill_weight * distill + config.structure_weight * structure
            + config.reference_weight * reference + config.tail_weight * tail)
    parts.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    parts.optimizer.step()
    if parts.ema is not None:
        moving_average(parts.ema, parts.model, config.ema_decay)
    return torch.stack([arcface.detach(), distill.detach(), structure.detach(), reference.detach(), tail.detach()])


@torch.no_grad()
def moving_average(average: torch.nn.Module, model: torch.nn.Module, decay: float) -> None:
    """average <- decay * average + (1 - decay) * model, parameter by parameter (buffers copied): the averaging of
    whole stages, done at every step of one run."""
    for kept, current in zip(average.parameters(), model.parameters()):
        kept.mul_(decay).add_(current.detach(), alpha=1.0 - decay)
    for kept, current in zip(average.buffers(), model.buffers()):
        kept.copy_(current)


def flip_invariant(teacher: np.ndarray) -> np.ndarray:
    """[N, 2, 128] unit targets of a crop and its mirror -> both the normalised mean of the two (NaN stays NaN)."""
    mean = teacher.sum(axis=1)
    mean = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    return np.repeat(mean[:, None], 2, axis=1).astype(np.float32)


def _keep_if_best(config: TrainConfig, model, record: dict, history: list[dict], run_dir: Path) -> None:
    """Save the weights of the epoch with the best held-out score (held-out identities, never LFW)."""
    key = config.keep_best
    if not key or key not in record:
        return
    previous = [h[key] for h in history if key in h]
    if not previous or record[key] > max(previous):
        torch.save({"model": model.state_dict(), "config": asdict(config), "epoch": record["epoch"],
                    key: record[key]}, run_dir / BEST_FILE)
