"""Do the teacher's descriptors of augmented crops help? The current recipe with and without stored augmentation
targets, the same steps from the same start, scored on held-out identities (#27 point 3).

    python benchmarks/augmentation_ablation.py --out benchmarks/results/augmentation_ablation.json
    # ~1 h on 2 cores: ~35 min of teacher descriptors (resumable), then two ~10 min runs side by side

What the two runs differ in (`facerec.train.augmented_targets.StoredAugmentations`):
- fresh: every crop is augmented at random; its distillation target is the teacher's descriptor of the clean crop
  (or its mirror), however far the augmentation moved the face from it (the recipe up to model v8);
- stored: half of each batch is shown instead one of its K stored augmentations, made again from its seed, with
  the teacher's descriptor of exactly those pixels as the target; the other half as in "fresh".
The teacher's descriptors cost ~75 ms a crop here, so the measurement trains on the first `--identities` celeba112
training identities in name order (a folder of links under --work; never a held-out identity of the disjoint split),
celeba112 alone (no LFW, whose crops have no stored augmentations). Both runs start from the shipped weights with
model v8's stage recipe at a fine-tuning learning rate, train side by side with one thread each, and their last
epochs are scored (no choice made on the scoring identities) on the 150 held-out selection identities of the whole
set, whom neither the runs nor the shipped weights were trained on, as `benchmarks/embedding_options.py` scores: fp32, test-time flip, one-shot rank-1 as the mean over 30 enrollment draws, TAR at FAR 1e-4. The result
also states how far the augmentations move the teacher's descriptor (cosine between the stored augmentation's
target and the clean crop's, the "fresh" recipe's target), which bounds what the stored targets can change.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from embedding_options import held_out_crops, measure  # noqa: E402

from facerec.datasets.folders import held_out, list_identities  # noqa: E402
from facerec.provenance import file_sha256, write_result  # noqa: E402

RECIPE = ["--stem", "high_res", "--batch-size", "128", "--lr", "0.005", "--warmup-epochs", "0.1",
          "--arcface-weight", "1", "--distill-weight", "40", "--structure-weight", "100"]  # model v8's stage
ARMS = ("fresh", "stored")


def linked_subset(celeba: Path, folder: Path, identities: int) -> list[str]:
    """A folder of links to the first `identities` celeba112 training identities in name order (never one the
    disjoint split holds out: the selection identities score the runs); returns their names."""
    everyone = list_identities(celeba)
    kept_out = held_out(everyone, "disjoint").everyone
    names = [name for name in sorted(everyone) if name not in kept_out][:identities]
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        link = folder / name
        if not link.exists():
            link.symlink_to((celeba / name).resolve(), target_is_directory=True)
    return names


def train_side_by_side(runs: dict[str, tuple[Path, list[str]]]) -> None:
    """Run each `facerec-train train` command (name: (run folder, command)) whose run has no export yet, all at
    once with one thread each, then export each to ONNX; SystemExit naming the log of a run that failed."""
    single_thread = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    running = {}
    for name, (run, command) in runs.items():
        if not (run / "model_fp32.onnx").exists():
            run.mkdir(parents=True, exist_ok=True)
            running[name] = subprocess.Popen(command, stdout=open(run / "train.log", "a"), stderr=subprocess.STDOUT,
                                             env=single_thread)
    for name, process in running.items():
        run = runs[name][0]
        if process.wait():
            raise SystemExit(f"training {name} failed: see {run / 'train.log'}")
        subprocess.run(["facerec-train", "export-onnx", str(run / "embedder.pt"), str(run / "model_fp32.onnx")],
                       check=True)


def train_command(data: Path, crops: Path, warm: Path, run: Path, epochs: int, augmented: Path | None,
                  share: float) -> list[str]:
    stored = ["--augmented-teacher", str(augmented), "--augmented-share", str(share)] if augmented else []
    return ["facerec-train", "train", "--celeba", str(crops), "--teacher", str(data / "teacher" / "celeba112_dlib.npz"),
            "--warm-start", str(warm), "--run-dir", str(run), "--epochs", str(epochs), *RECIPE, *stored]


def target_shift(plain_file: Path, augmented_file: Path) -> dict:
    """How far augmentation moves the teacher's descriptor: cosine between each stored augmentation's centred unit
    descriptor and the clean crop's, over every stored augmentation (quartiles and mean)."""
    from facerec.train.augmented_targets import crop_and_k
    from facerec.train.teacher import load_targets, normalized_targets

    plain, augmented = load_targets([plain_file]), load_targets([augmented_file])
    pairs = [(plain[crop_and_k(name)[0]][0], value[0]) for name, value in augmented.items()]
    clean, moved = np.stack([p for p, _ in pairs]), np.stack([a for _, a in pairs])
    mean = np.stack([p for p, _ in plain.values()]).mean(axis=0)
    cosine = (normalized_targets(clean, mean) * normalized_targets(moved, mean)).sum(axis=1)
    return {"augmentations": len(pairs), "mean": float(cosine.mean()),
            "quartiles": [float(q) for q in np.percentile(cosine, [25, 50, 75])]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--warm-start", default="models/facerec-r18-arcface.onnx", type=Path)
    parser.add_argument("--identities", type=int, default=2500)
    parser.add_argument("--augmentations", type=int, default=1, help="K stored augmentations per crop")
    parser.add_argument("--share", type=float, default=0.5, help="share of a batch shown a stored augmentation")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--work", default="runs/augmentation_ablation", type=Path)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    crops = args.work / "celeba112_subset"
    names = linked_subset(args.data / "celeba112", crops, args.identities)
    augmented = args.work / f"augmented_{args.augmentations}.npz"
    if not augmented.exists():
        subprocess.run(["facerec-train", "teacher-targets", str(crops), str(augmented), "--augmentations",
                        str(args.augmentations)], check=True)
    train_side_by_side({arm: (args.work / arm, train_command(args.data, crops, args.warm_start, args.work / arm,
                                                             args.epochs, augmented if arm == "stored" else None,
                                                             args.share))
                        for arm in ARMS})
    scoring, scoring_names = held_out_crops(args.data / "celeba112")  # the selection identities: nobody trained on them
    scores = {"start": measure(args.warm_start, True, scoring, scoring_names)}
    for arm in ARMS:
        scores[arm] = measure(args.work / arm / "model_fp32.onnx", True, scoring, scoring_names)
    write_result(args.out, {
        "question": "do the teacher's descriptors of stored augmentations, as targets, help at the same steps?",
        "recipe": RECIPE, "epochs": args.epochs, "identities": len(names), "augmentations": args.augmentations,
        "share": args.share, "warm_start_sha256": file_sha256(args.warm_start),
        "target_shift": target_shift(args.data / "teacher" / "celeba112_dlib.npz", augmented),
        "scores": scores,
        "stored_minus_fresh": {key: scores["stored"][key] - scores["fresh"][key]
                               for key in ("one_shot_rank1", "tar_at_far_1e-4", "closest_is_positive_accuracy")},
    }, model_path=args.warm_start, threads=None)


if __name__ == "__main__":
    main()
