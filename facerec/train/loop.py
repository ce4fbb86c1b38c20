"""The training loop: bf16 autocast, channels_last, SGD with warm-up + cosine decay, a checkpoint every epoch,
resume from the last one, and one JSON line per epoch in `train_log.jsonl` (loss, learning rate, speed,
validation figures)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from .augment import FaceAugmentation
from .backbone import FaceEmbedder
from .data import FaceSet
from .heads import build_head, needs_identity_batches
from .validate import validate

CHECKPOINT_FILE, LOG_FILE, WEIGHTS_FILE, BEST_FILE = "last.ckpt", "train_log.jsonl", "embedder.pt", "best.pt"


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
    bf16: bool = True
    validate_every: int = 1
    max_seconds: float | None = None  # stop early (after the current step) once this much time has passed
    keep_best: str | None = "closest_is_positive_accuracy"  # held-out metric whose best epoch is kept
    notes: dict = field(default_factory=dict)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class BatchSampler:
    """Random batches over training rows, or P identities x K photos when the loss needs positives in-batch.
    Both give the same number of batches per epoch, so heads see the same amount of data."""

    def __init__(self, labels: np.ndarray, batch_size: int, per_identity: int | None, seed: int) -> None:
        self.labels, self.batch_size, self.per_identity = labels, batch_size, per_identity
        self.rng = np.random.default_rng(seed)
        self.by_label = [np.flatnonzero(labels == k) for k in range(labels.max() + 1)]
        self.steps_per_epoch = len(labels) // batch_size

    def epoch(self):
        if not self.per_identity:
            order = self.rng.permutation(len(self.labels))
            for step in range(self.steps_per_epoch):
                yield order[step * self.batch_size : (step + 1) * self.batch_size]
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
    train_rows = faces.rows("train")
    labels = faces.labels(train_rows)
    num_classes = int(labels.max()) + 1
    model = FaceEmbedder(config.stem, dropout=config.dropout).to(device).to(memory_format=torch.channels_last)
    head = build_head(config.head, 512, num_classes, config.arcface_scale,
                      config.arcface_margin if config.head == "arcface" else config.pair_margin).to(device)
    parameters = [{"params": model.parameters()}, {"params": head.parameters()}]
    optimizer = torch.optim.SGD(parameters, lr=config.lr, momentum=config.momentum,
                                weight_decay=config.weight_decay, nesterov=True)
    sampler = BatchSampler(labels, config.batch_size,
                           config.photos_per_identity if needs_identity_batches(config.head) else None, config.seed)
    augment = FaceAugmentation(enabled=config.augment)
    images = torch.from_numpy(faces.images[train_rows]).to(device)
    label_tensor = torch.from_numpy(labels).to(device)
    total_steps = config.epochs * sampler.steps_per_epoch

    start_epoch, history = 0, []
    checkpoint_path = run_dir / CHECKPOINT_FILE
    if checkpoint_path.exists():
        state = torch.load(checkpoint_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        head.load_state_dict(state["head"])
        optimizer.load_state_dict(state["optimizer"])
        sampler.rng.bit_generator.state = state["sampler_rng"]
        start_epoch, history = state["epoch"] + 1, state["history"]
        log(f"resumed from epoch {start_epoch} of {config.epochs}")

    started = time.perf_counter()
    record: dict = history[-1] if history else {}
    for epoch in range(start_epoch, config.epochs):
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
            losses.append(_step(config, device, model, head, optimizer, augment, images, label_tensor, batch_rows))
            if config.max_seconds and time.perf_counter() - started > config.max_seconds:
                break
        seconds = time.perf_counter() - epoch_start
        record = {
            "epoch": epoch + 1,
            "loss": float(torch.stack(losses).float().mean()),
            "lr": lr,
            "images_per_second": len(losses) * config.batch_size / seconds,
            "epoch_seconds": round(seconds, 2),
            "elapsed_seconds": round(time.perf_counter() - started, 1),
        }
        out_of_time = bool(config.max_seconds) and time.perf_counter() - started > config.max_seconds
        if (epoch + 1) % config.validate_every == 0 or epoch + 1 == config.epochs or out_of_time:
            record.update(validate(model, faces, device))
            _keep_if_best(config, model, record, history, run_dir)
        history.append(record)
        log(json.dumps(record))
        with open(run_dir / LOG_FILE, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        torch.save({"model": model.state_dict(), "head": head.state_dict(), "optimizer": optimizer.state_dict(),
                    "sampler_rng": sampler.rng.bit_generator.state, "epoch": epoch, "history": history,
                    "config": asdict(config)}, checkpoint_path)
        if out_of_time:
            log(f"stopping after epoch {epoch + 1}: time budget of {config.max_seconds:.0f}s spent")
            break
    torch.save({"model": model.state_dict(), "config": asdict(config), "history": history},
               run_dir / WEIGHTS_FILE)
    return record


def measure_throughput(config: TrainConfig, faces: FaceSet, steps: int = 20, warmup: int = 5) -> float:
    """Training images per second for this config on this machine (a few throw-away steps)."""
    device = pick_device(config.device)
    rows = faces.rows("train")
    labels = faces.labels(rows)
    model = FaceEmbedder(config.stem).to(device).to(memory_format=torch.channels_last)
    head = build_head(config.head, 512, int(labels.max()) + 1, config.arcface_scale, config.pair_margin).to(device)
    optimizer = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.01, momentum=0.9)
    sampler = BatchSampler(labels, config.batch_size,
                           config.photos_per_identity if needs_identity_batches(config.head) else None, 0)
    images = torch.from_numpy(faces.images[rows]).to(device)
    label_tensor = torch.from_numpy(labels).to(device)
    augment = FaceAugmentation(enabled=config.augment)
    batches = sampler.epoch()
    for i in range(warmup + steps):
        if i == warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
        _step(config, device, model, head, optimizer, augment, images, label_tensor, next(batches))
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * config.batch_size / (time.perf_counter() - start)


def _step(config, device, model, head, optimizer, augment, images, labels, batch_rows) -> torch.Tensor:
    """One optimisation step on the given training rows; returns the (detached) loss."""
    index = torch.from_numpy(batch_rows).to(device)
    batch = augment(images[index]).contiguous(memory_format=torch.channels_last)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=config.bf16):
        embeddings = model(batch)
    loss = head(embeddings.float(), labels[index])
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def _keep_if_best(config: TrainConfig, model, record: dict, history: list[dict], run_dir: Path) -> None:
    """Save the weights of the epoch with the best held-out score (held-out identities, never LFW)."""
    key = config.keep_best
    if not key or key not in record:
        return
    previous = [h[key] for h in history if key in h]
    if not previous or record[key] > max(previous):
        torch.save({"model": model.state_dict(), "config": asdict(config), "epoch": record["epoch"],
                    key: record[key]}, run_dir / BEST_FILE)
