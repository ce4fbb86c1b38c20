"""Would more training faces help? The current recipe on 50% vs 100% of today's training identities, with the
same compute (the same number of steps: 2 epochs of the half, 1 of the whole), scored on held-out identities.

    python benchmarks/data_slope.py --out benchmarks/results/data_slope.json     # ~1 h on 2 cores, resumable

Both runs start from the shipped weights (training compute is scarce here: the measured question is whether more
people help the fine-tuning that every new model of ours is). That start has seen every training person, which
can only shrink the gap, so a small gap is an upper bound on what halving costs in this regime, not a law for
training from scratch. Runs train side by side, one thread each, so neither has the machine to itself; each
resumes from its checkpoint if interrupted. Scoring is benchmarks/embedding_options.py's: fp32, test-time flip, the
150 held-out CelebA identities, one-shot rank-1 as the mean over 30 enrollment draws, TAR at FAR 1e-4. Each
run's last epoch is scored (not its best-scoring one), so no choice is made on the identities that score it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from embedding_options import held_out_crops, measure  # noqa: E402

from facerec.provenance import file_sha256, write_result  # noqa: E402

RECIPE = ["--stem", "high_res", "--batch-size", "128", "--lr", "0.01", "--warmup-epochs", "0.1",
          "--arcface-weight", "1", "--distill-weight", "40", "--structure-weight", "100"]  # model v8's stage
FRACTIONS = {"half": (0.5, 2), "whole": (1.0, 1)}  # name -> (share of identities, epochs): the same steps


def train_command(data: Path, warm: Path, run: Path, fraction: float, epochs: int) -> list[str]:
    return ["facerec-train", "train", "--celeba", str(data / "celeba112"), "--lfw-cache", "cache/lfw",
            "--teacher", str(data / "teacher" / "celeba112_dlib.npz"), "cache/lfw_teacher.npz",
            "--warm-start", str(warm), "--run-dir", str(run), "--epochs", str(epochs),
            "--train-fraction", str(fraction), *RECIPE]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--warm-start", default="models/facerec-r18-arcface.onnx", type=Path)
    parser.add_argument("--work", default="runs/data_slope", type=Path)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    single_thread = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    running = {}
    for name, (fraction, epochs) in FRACTIONS.items():
        run = args.work / name
        if not (run / "model_fp32.onnx").exists():
            run.mkdir(parents=True, exist_ok=True)
            log = open(run / "train.log", "a")
            running[name] = subprocess.Popen(train_command(args.data, args.warm_start, run, fraction, epochs),
                                             stdout=log, stderr=subprocess.STDOUT, env=single_thread)
    for name, process in running.items():
        if process.wait():
            raise SystemExit(f"training {name} failed: see {args.work / name / 'train.log'}")
        run = args.work / name
        subprocess.run(["facerec-train", "export-onnx", str(run / "embedder.pt"), str(run / "model_fp32.onnx"),
                        "--check-cache", "cache/lfw"], check=True)
    crops, names = held_out_crops(args.data / "celeba112")
    scores = {"start": measure(args.warm_start, True, crops, names)}
    for name in FRACTIONS:
        scores[name] = measure(args.work / name / "model_fp32.onnx", True, crops, names)
    write_result(args.out, {
        "question": "does halving the training identities, at the same number of steps, cost held-out accuracy?",
        "recipe": RECIPE, "fractions": {k: {"identities": f, "epochs": e} for k, (f, e) in FRACTIONS.items()},
        "warm_start_sha256": file_sha256(args.warm_start), "scores": scores,
        "half_minus_whole": {key: scores["half"][key] - scores["whole"][key]
                             for key in ("one_shot_rank1", "tar_at_far_1e-4", "closest_is_positive_accuracy")},
    }, model_path=args.warm_start, threads=None)


if __name__ == "__main__":
    main()
