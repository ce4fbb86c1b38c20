"""Which training terms move the strict tail? Model v8's stage recipe and its variants, the same steps from the same
start, scored on held-out identities (model v9's diagnostic and ablations).

    python benchmarks/recipe_diagnostic.py --arms structure no_structure --out benchmarks/results/recipe_diagnostic.json
    python benchmarks/recipe_diagnostic.py --arms lookalike tail --out benchmarks/results/recipe_diagnostic.json

Every arm trains on the first `--identities` celeba112 training identities in name order (never one that the
disjoint split holds out), from the shipped weights, for `--epochs` at a fine-tuning learning rate, two arms side
by side with one thread each. Each finished arm is scored on the 150 held-out selection identities (nobody in the
lineage trained on them) as `benchmarks/embedding_options.py` scores: fp32, test-time flip, one-shot rank-1 as the
mean over 30 enrollment draws, TAR at FAR 1e-4, ClosestIsPositiveAccuracy. The results file keeps every arm ever
scored with the same settings, so later arms join the control they are compared with; the control of every
ablation is `no_structure` (v8's terms without the batch structure match). Resumable: a finished arm is not run
again, and a killed arm resumes from its last checkpoint.

Arms (extra arguments to `facerec-train train` on top of `COMMON`):
- structure: model v8's stage (distillation x40 and the batch's similarity structure matched to the teacher's x100);
- no_structure: the same without the structure term;
- lookalike: no_structure, with half of each batch made of look-alike identities (each one's nearest other
  identities by the teacher's descriptors, `facerec.train.lookalikes`);
- tail: no_structure, with the tail term (each anchor against a bank of the teacher's descriptors of the whole
  training set, positives and hardest negatives, `facerec.train.strict_threshold_loss`);
- lookalike_tail: both;
- ema: no_structure, scored on an exponential moving average of its weights (`--ema-decay`);
- flip_targets: no_structure, with flip-invariant teacher targets (`--flip-invariant-targets`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from augmentation_ablation import linked_subset, train_side_by_side  # noqa: E402
from embedding_options import held_out_crops, measure  # noqa: E402

from facerec.provenance import file_sha256, write_result  # noqa: E402

COMMON = ["--stem", "high_res", "--batch-size", "128", "--lr", "0.005", "--warmup-epochs", "0.1",
          "--arcface-weight", "1", "--distill-weight", "40", "--held-out-split", "disjoint"]  # model v8's stage
ARMS: dict[str, list[str]] = {
    "structure": ["--structure-weight", "100"],
    "no_structure": [],
    "lookalike": ["--lookalike-share", "0.5"],
    "tail": ["--tail-weight", "1"],
    "lookalike_tail": ["--lookalike-share", "0.5", "--tail-weight", "1"],
    "ema": ["--ema-decay", "0.999"],
    "flip_targets": ["--flip-invariant-targets"],
}
CONTROL = "no_structure"
COMPARED = ("one_shot_rank1", "tar_at_far_1e-4", "closest_is_positive_accuracy")


def train_command(data: Path, crops: Path, warm: Path, run: Path, epochs: int, arm: str) -> list[str]:
    return ["facerec-train", "train", "--celeba", str(crops), "--teacher", str(data / "teacher" / "celeba112_dlib.npz"),
            "--warm-start", str(warm), "--run-dir", str(run), "--epochs", str(epochs), *COMMON, *ARMS[arm]]


def run_arms(arms: list[str], args: argparse.Namespace, crops: Path) -> None:
    """Train the arms that have no export yet, two at a time, one thread each; export each to ONNX."""
    pending = [arm for arm in arms if not (args.work / arm / "model_fp32.onnx").exists()]
    for pair_start in range(0, len(pending), 2):
        train_side_by_side({arm: (args.work / arm, train_command(args.data, crops, args.warm_start, args.work / arm,
                                                                 args.epochs, arm))
                            for arm in pending[pair_start:pair_start + 2]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--warm-start", default="models/facerec-r18-arcface.onnx", type=Path)
    parser.add_argument("--arms", nargs="+", choices=sorted(ARMS), required=True)
    parser.add_argument("--identities", type=int, default=3300)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--work", default="runs/recipe_diagnostic", type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    crops = args.work / "celeba112_subset"
    names = linked_subset(args.data / "celeba112", crops, args.identities)
    run_arms(args.arms, args, crops)

    settings = {"common": COMMON, "epochs": args.epochs, "identities": len(names),
                "warm_start_sha256": file_sha256(args.warm_start)}
    earlier = json.loads(args.out.read_text()) if args.out.exists() else {}
    scores = earlier.get("scores", {}) if earlier.get("settings") == settings else {}
    scoring, scoring_names = held_out_crops(args.data / "celeba112")  # the selection identities: nobody trained on them
    if "start" not in scores:
        scores["start"] = measure(args.warm_start, True, scoring, scoring_names)
    for arm in args.arms:
        scores[arm] = {**measure(args.work / arm / "model_fp32.onnx", True, scoring, scoring_names),
                       "arguments": ARMS[arm]}
    against_control = {arm: {key: scores[arm][key] - scores[CONTROL][key] for key in COMPARED}
                       for arm in scores if arm not in ("start", CONTROL) and CONTROL in scores}
    write_result(str(args.out), {
        "question": "which training terms move held-out TAR at FAR 1e-4 and rank-1, at the same steps?",
        "settings": settings, "control": CONTROL, "scores": scores, "minus_control": against_control,
    }, model_path=args.warm_start, threads=None)


if __name__ == "__main__":
    main()
