"""Train arms of the model on a borrowed GPU machine, from a packed copy of the training set.

Why a packed copy: the GPU machine reaches nothing outside it and receives at most 64 MiB per call, so the
training set (celeba112 + the LFW training people, with the teacher's targets) travels re-encoded as WebP in two
parts, each copied into /root/pack by one call; the second call trains. Everything the loop does is
`facerec.train.loop.train` unchanged: the same FaceSet, losses, validation on the held-out selection identities
and checkpoints as `facerec-train train`; this file only moves the data and runs arms side by side on one GPU.

    python scripts/device_training.py pack PACK_DIR --lfw-cache cache/lfw --teacher T1.npz T2.npz   # here
    python scripts/device_training.py stage PACK_DIR/part1.npz                                      # there
    python scripts/device_training.py run --budget 420 --out $OUT                                   # there

An arm's weights come back as fp16 state dicts split in two files (a file from the machine is at most 16 MiB);
`join` makes a `facerec-train export`-able embedder.pt of them here.

The default arms (#61 item 5): `fused_scores`, which asks the ResNet18's own cosines to be the fused pack's (dlib's
weight in the shipped join, `models/facerec-dlib-fused.onnx`, times the teacher's cosine plus the rest times the
shipped model's, run on each batch's pixels: `facerec.train.distill.fused_targets`), beside `control`, the same run
without it; both from the shipped weights, chosen between afterwards on the held-out selection identities
(`python benchmarks/embedding_options.py --model A --other B=...`). Nothing in the app depends on it being run.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import multiprocessing
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from facerec.train.data import FaceSet, load_sources  # noqa: E402
from facerec.train.loop import TrainConfig  # noqa: E402

STAGED = Path(os.environ.get("FACEREC_PACK_DIR", "/root/pack"))
WEBP_QUALITY = 80
PARTS = 2

# The arms, from the shipped weights, for as many epochs as the budget allows. v9 trained `control` (v8's terms
# without the batch structure match) beside `tail_flip` (+ the two terms that measured slightly positive at CPU
# compute: tail crossings, flip-invariant targets); v10 continues `tail_flip` beside the same with a moving
# average of the weights, which at CPU compute was mostly the start's weights but over a GPU run's thousands of
# steps averages the run's end. The choice between them and the shipped model is made afterwards, here, on the
# held-out selection identities.
ARMS = {
    "control": {},
    "tail_flip": {"tail_weight": 1.0, "flip_invariant_targets": True},
    "tail_flip_ema": {"tail_weight": 1.0, "flip_invariant_targets": True, "ema_decay": 0.999},
    "fused_scores": {"structure_weight": 100.0, "reference_model": "models/facerec-r18-arcface.onnx",
                     "fused_share": "the shipped join's"},
}
DEFAULT_ARMS = ("control", "fused_scores")
FUSED_JOIN = Path(__file__).resolve().parent.parent / "models" / "facerec-dlib-fused.onnx"


def fused_dlib_weight(join: Path = FUSED_JOIN) -> float:
    """dlib's weight w in the shipped fused pack's join (its initializer `dlib_share` is sqrt(w))."""
    import onnx
    from onnx import numpy_helper

    shares = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(join)).graph.initializer}
    return float(shares["dlib_share"].reshape(-1)[0]) ** 2


def arm_settings(name: str) -> dict:
    """An arm's changes to BASE, with the fused share read from the shipped join where the arm asks for it."""
    changes = dict(ARMS[name])
    if changes.get("fused_share") == "the shipped join's":
        changes["fused_share"] = fused_dlib_weight()
    return changes
BASE = dict(head="arcface", stem="high_res", batch_size=int(os.environ.get("FACEREC_TRAIN_BATCH", 512)), lr=0.02, warmup_epochs=1.0, arcface_weight=1.0,
            distill_weight=40.0, structure_weight=0.0, held_out_split="single", validate_every=1,
            keep_best="one_shot_rank1", device=os.environ.get("FACEREC_TRAIN_DEVICE", "cuda"), warm_start="models/facerec-r18-arcface.onnx")


def pack(out_dir: Path, celeba: str, lfw_cache: str | None, teachers: list[str]) -> None:
    """Write part1.npz .. partN.npz: WebP crops (rows split evenly), and in the last part the rows' metadata
    and the teacher's unit targets (float16)."""
    faces = load_sources(celeba, lfw_cache, teachers, workers=2, held_out_split="single")
    out_dir.mkdir(parents=True, exist_ok=True)
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        blobs = pool.map(_encode, list(faces.images), chunksize=256)
    extras_bytes = faces.teacher.size * 2 + len(faces.paths) * 64  # the last part's metadata and targets
    cumulative = np.cumsum([len(b) for b in blobs])
    share = (cumulative[-1] + extras_bytes) / PARTS  # parts of about equal bytes, the extras counted in
    bounds = np.array([0, *(np.searchsorted(cumulative, share * (k + 1)) for k in range(PARTS - 1)), len(blobs)])
    for part in range(PARTS):
        chunk = blobs[bounds[part]:bounds[part + 1]]
        extra = {}
        if part == PARTS - 1:
            meta = {"identities": faces.identities, "splits": faces.splits, "paths": faces.paths}
            extra = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8),
                     "teacher": faces.teacher.astype(np.float16),
                     "teacher_mean": faces.teacher_mean.astype(np.float32)}
        np.savez(out_dir / f"part{part + 1}.npz", first=np.int64(bounds[part]),
                 lengths=np.array([len(b) for b in chunk], np.int64),
                 data=np.frombuffer(b"".join(chunk), np.uint8), **extra)
    sizes = {p.name: p.stat().st_size for p in sorted(out_dir.glob("part*.npz"))}
    print(json.dumps({"rows": len(blobs), "train": int(len(faces.rows("train"))),
                      "val": int(len(faces.rows("val"))), "bytes": sizes}))


def _encode(image: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "WEBP", quality=WEBP_QUALITY)
    return buffer.getvalue()


def stage(part: Path) -> None:
    """Copy one carried part to the machine's own disk, where the next call finds it."""
    STAGED.mkdir(parents=True, exist_ok=True)
    shutil.copy(part, STAGED / part.name)
    print(f"staged {part.name}: {sorted(p.name for p in STAGED.iterdir())}")


def _decode(blob: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(blob)) as image:
        return np.asarray(image.convert("RGB"))


def _training_rows(limit: int | None = None) -> int:
    """How many training rows the parts hold (read from the last part's metadata, without decoding a crop)."""
    with np.load(STAGED / f"part{PARTS}.npz") as part:
        splits = json.loads(part["meta"].tobytes().decode())["splits"]
    count = sum(split == "train" for split in splits)
    return min(count, limit) if limit else count


def unpack(limit: int | None = None) -> FaceSet:
    """The FaceSet the parts describe (limit: only the first rows of each split, for a quick check)."""
    blobs: list[bytes] = []
    last = None
    for index in range(1, PARTS + 1):
        with np.load(STAGED / f"part{index}.npz") as part:
            data, lengths = part["data"].tobytes(), part["lengths"]
            offsets = np.concatenate([[0], np.cumsum(lengths)])
            blobs += [data[offsets[i]:offsets[i + 1]] for i in range(len(lengths))]
            if "meta" in part:
                last = {k: part[k] for k in ("meta", "teacher", "teacher_mean")}
    meta = json.loads(last["meta"].tobytes().decode())
    rows = np.arange(len(blobs))
    if limit:
        splits = np.array(meta["splits"])
        rows = np.concatenate([np.flatnonzero(splits == s)[:limit] for s in ("train", "val")])
    with multiprocessing.get_context("fork").Pool(min(16, os.cpu_count() or 1)) as pool:
        images = np.stack(pool.map(_decode, [blobs[i] for i in rows], chunksize=256))
    return FaceSet(images, [meta["identities"][i] for i in rows], [meta["splits"][i] for i in rows],
                   [meta["paths"][i] for i in rows], teacher=last["teacher"][rows].astype(np.float32),
                   teacher_mean=last["teacher_mean"])


def _train_arm(name: str, overrides: dict, epochs: int, max_seconds: float, work: str, limit: int | None) -> None:
    import torch

    from facerec.train.loop import train

    torch.backends.cudnn.benchmark = True

    faces = unpack(limit)
    config = TrainConfig(**{**BASE, **overrides, "epochs": epochs, "max_seconds": max_seconds})
    log_path = Path(work) / f"{name}.log"
    with open(log_path, "a") as log:
        def say(line: str) -> None:
            log.write(line + "\n")
            log.flush()
        train(config, faces, Path(work) / name, log=say)


def _probe(work: str, limit: int | None, steps: int) -> float:
    """Images per second of one arm alone (the control's step, after a warm-up)."""
    import torch

    from facerec.train.loop import _build_parts, _step
    from facerec.train.precision import use_bf16

    torch.backends.cudnn.benchmark = True
    faces = unpack(limit)
    config = TrainConfig(**{**BASE, "warm_start": None})
    device = torch.device(config.device)
    parts = _build_parts(config, faces, device)
    rows = parts.sampler.epoch()
    bf16 = use_bf16(device)
    for _ in range(5):
        _step(config, bf16, device, parts, next(rows))
    if device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(steps):
        _step(config, bf16, device, parts, next(rows))
    if device.type == "cuda":
        torch.cuda.synchronize()
    rate = steps * config.batch_size / (time.perf_counter() - started)
    Path(work, "probe.json").write_text(json.dumps({"images_per_second": rate, "bf16": bf16}))
    return rate


def run(budget: float, out: Path, work: Path, limit: int | None, probe_steps: int,
        arms: tuple[str, ...] = DEFAULT_ARMS) -> None:
    """Probe the speed, give each arm the epochs that fit `budget` seconds side by side, train, and write each
    arm's last weights (fp16, two files), log and config into `out`."""
    context = multiprocessing.get_context("spawn")
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    probe = context.Process(target=_probe, args=(str(work), limit, probe_steps))
    probe.start()
    probe.join()
    rate = json.loads((work / "probe.json").read_text())["images_per_second"]
    faces_train = _training_rows(limit)
    shared_rate = rate / len(arms) * 0.8  # arms share the GPU; a margin for validation and imprinting
    epochs = max(1, math.floor((budget - (time.perf_counter() - started)) * shared_rate / faces_train))
    print(json.dumps({"probe_images_per_second": round(rate), "epochs": epochs, "train_rows": faces_train}),
          flush=True)
    left = budget - (time.perf_counter() - started) + 20  # a hard stop, should the probe have been optimistic
    processes = [context.Process(target=_train_arm, args=(name, arm_settings(name), epochs, left, str(work), limit))
                 for name in arms]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    out.mkdir(parents=True, exist_ok=True)
    import torch

    for name in arms:
        run_dir = work / name
        shutil.copy(work / f"{name}.log", out / f"{name}.log")
        weights = run_dir / "best.pt"  # the epoch with the best held-out rank-1 (the loop's keep_best)
        if not weights.exists():
            weights = run_dir / "embedder.pt"
        if not weights.exists():
            print(f"{name}: no weights", flush=True)
            continue
        state = torch.load(weights, map_location="cpu", weights_only=False)
        half = {k: (v.half() if v.is_floating_point() and v.dim() > 1 else v) for k, v in state["model"].items()}
        sizes = np.cumsum([v.numel() * v.element_size() for v in half.values()])
        middle = int(np.searchsorted(sizes, sizes[-1] / 2)) + 1  # two files of about equal bytes
        keys = list(half)
        for index, chosen in enumerate((keys[:middle], keys[middle:])):
            torch.save({"model": {k: half[k] for k in chosen}, "config": state["config"],
                        "history": state.get("history"), "epoch": state.get("epoch")},
                       out / f"{name}_{index + 1}.pt")
    print(f"done in {time.perf_counter() - started:.0f}s", flush=True)


def join(first: Path, second: Path, out: Path) -> None:
    """One embedder.pt (what `facerec-train export` reads) from an arm's two halves."""
    import torch

    states = [torch.load(p, map_location="cpu", weights_only=False) for p in (first, second)]
    model = {k: (v.float() if v.is_floating_point() else v) for s in states for k, v in s["model"].items()}
    torch.save({"model": model, "config": states[0]["config"], "history": states[0]["history"]}, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("pack")
    p.add_argument("out", type=Path)
    p.add_argument("--celeba", default="../shared/data/celeba112")
    p.add_argument("--lfw-cache")
    p.add_argument("--teacher", nargs="+", default=[])
    p = commands.add_parser("stage")
    p.add_argument("part", type=Path)
    p = commands.add_parser("run")
    p.add_argument("--budget", type=float, default=420)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--work", type=Path, default=Path("/root/work"))
    p.add_argument("--limit", type=int, help="only the first rows of each split (a quick check)")
    p.add_argument("--probe-steps", type=int, default=20)
    p.add_argument("--arms", nargs="+", choices=sorted(ARMS), default=list(DEFAULT_ARMS))
    p.add_argument("--device")
    p.add_argument("--batch-size", type=int)
    p = commands.add_parser("join")
    p.add_argument("first", type=Path)
    p.add_argument("second", type=Path)
    p.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "pack":
        pack(args.out, args.celeba, args.lfw_cache, args.teacher)
    elif args.command == "stage":
        stage(args.part)
    elif args.command == "run":
        if args.device:  # spawned arms read it from the environment
            os.environ["FACEREC_TRAIN_DEVICE"] = BASE["device"] = args.device
        if args.batch_size:
            os.environ["FACEREC_TRAIN_BATCH"] = str(args.batch_size)
            BASE["batch_size"] = args.batch_size
        run(args.budget, args.out, args.work, args.limit, args.probe_steps, tuple(args.arms))
    else:
        join(args.first, args.second, args.out)


if __name__ == "__main__":
    main()
