"""Write the model card `models/facerec-r18-arcface.json` from the measured figures.

    python scripts/make_model_card.py --eval runs/eval_lfw2.json --eval-distractors runs/eval_lfw2_distractors.json \
        --pairs runs/eval_pairs.json --speed runs/speed_1thread.json

Inputs: the training logs brought back from the accelerator (models/training/), the threshold calibration
(models/training/calibration.json, from `facerec calibrate --json models/training/calibration.json`, which also
writes it into the card) and the `facerec eval` / `eval-pairs` / benchmark JSON files named on the command line.
Nothing in the card is typed in by hand except the prose.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.calibrate import legacy_fields  # noqa: E402

MODELS = ROOT / "models"
NAME = "facerec-r18-arcface"


def load(path: str | Path | None) -> dict:
    return json.loads(Path(path).read_text()) if path and Path(path).exists() else {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval")
    parser.add_argument("--eval-distractors")
    parser.add_argument("--pairs")
    parser.add_argument("--speed")
    args = parser.parse_args()
    onnx = MODELS / f"{NAME}.onnx"
    calibration = load(MODELS / "training" / "calibration.json")
    round1 = load(MODELS / "training" / "h200_round1_results.json")
    round2 = load(MODELS / "training" / "h200_round2_results.json")
    shipped = next(r for r in round2["comparison"] if r["config"]["stem"] == "high_res")
    standard_long = next(r for r in round2["comparison"] if r["config"]["stem"] == "standard")
    evaluation, distractors, pairs, speed = load(args.eval), load(args.eval_distractors), load(args.pairs), load(
        args.speed)
    card = {
        "name": NAME,
        "file": onnx.name,
        "sha256": hashlib.sha256(onnx.read_bytes()).hexdigest(),
        "size_bytes": onnx.stat().st_size,
        "architecture": {
            "backbone": "torchvision ResNet18, 3x3 stride-1 stem + max-pool (high-resolution stem: 56/28/14/7 "
                        "feature maps at 112x112 input)",
            "head": "BatchNorm2d -> Dropout(0.4) -> 7x7 global depthwise conv -> BatchNorm -> Linear(512, 512) -> "
                    "BatchNorm1d; L2 normalisation inside the ONNX graph",
            "input": "float32 RGB [N, 3, 112, 112], values 0..255, ArcFace-template aligned (facerec.align)",
            "output": "float32 [N, 512], unit length; cosine similarity = dot product",
            "onnx_opset": 17, "precision": "fp32",
            "test_time_augmentation": "facerec adds the embedding of the mirrored crop (flip_tta=True by default)",
        },
        "training": {
            "objective": "ArcFace additive angular margin, s=30, m=0.4 (margin ramped in over the first epoch)",
            "optimizer": "SGD momentum 0.9 (Nesterov), lr 0.1, weight decay 5e-4, 1 warm-up epoch then cosine",
            "batch_size": shipped["config"]["batch_size"],
            "epochs_scheduled": shipped["config"]["epochs"],
            "epoch_shipped": shipped["best_epoch"],
            "selection": "the epoch with the best ClosestIsPositiveAccuracy on held-out identities (never LFW)",
            "augmentation": "flip, scale +-10%, shift +-6%, rotation +-8 deg, brightness/contrast/saturation +-30%, "
                            "grayscale 10%, Gaussian blur 15%, down-scaling to 24-72 px 15% (on the GPU, batched)",
            "precision": "bfloat16 autocast, channels_last",
            "hardware": "one NVIDIA H200 (lent for 15 minutes); ~13,300 training images/s",
            "wall_seconds": round(shipped["seconds"], 1),
            "data": {
                "celeba112": "29,630 aligned CelebA photos, 6,340 identities, minus 150 held-out identities "
                             "(2,411 photos) kept for validation and threshold calibration",
                "lfw": "LFW people with >= 3 photos (901 people, 7,606 photos), aligned by `facerec prepare`; the "
                       "779 two-photo evaluation people and the one-photo distractors are never trained on",
                "training_images": 34825,
                "training_identities": 7091,
            },
            "licences": "LFW: research use (University of Massachusetts). CelebA: non-commercial research only "
                        "(CelebA agreement). The model inherits these terms: not for commercial use.",
            "retrain_command": "bash scripts/retrain.sh (add --fp32 on a CPU)",
            "retrain_estimate_2_core_cpu": "two to three days: 30 epochs x 34,825 images at the 4.3 images/s "
                                           "measured for fp32 steps (`--fp32`; this CPU has no native bf16, where "
                                           "bf16 autocast runs ~10x slower)",
            "history": _history(MODELS / "training" / "h200_round2_log.txt", "high_res"),
        },
        "validation_held_out": {k: shipped["best_score"] for k in ["closest_is_positive_accuracy"]},
        **_calibration_fields(calibration),
        "lfw": {
            "one_shot_rank1": evaluation.get("rank1"), "one_shot_rank5": evaluation.get("rank5"),
            "one_shot_rank1_with_4069_distractors": distractors.get("rank1"),
            "open_set_dir_at_fpir_1pct": distractors.get("open_set", {}).get("dir_at_fpir_0.01", {}).get("dir"),
            "open_set_at_default_policy": [
                {k: row.get(k) for k in ("gallery_people", "threshold", "expected_fpir", "fpir", "fpir_interval",
                                         "non_mated_searches", "dir", "dir_interval", "mated_searches")}
                for row in distractors.get("open_set", {}).get("sizes", [])],
            "pairs_10fold_accuracy": pairs.get("accuracy_mean"), "pairs_10fold_std": pairs.get("accuracy_std"),
            "tar_at_far_1e-3_one_shot": evaluation.get("tar_at_far", {}).get("1e-3", {}).get("tar"),
            "measured_by": ["facerec eval ../shared/data/lfw --max-per-identity 2 --json runs/eval_lfw2.json",
                            "facerec eval ../shared/data/lfw --max-per-identity 2 --distractors --open-set "
                            "--json runs/eval_lfw2_distractors.json",
                            "facerec eval-pairs ../shared/data/protocols/lfw_pairs.txt ../shared/data/lfw "
                            "--json runs/eval_pairs.json"],
            "note": "the pairs protocol overlaps training people (LFW >= 3 photos): reported, not tuned to",
        },
        "speed_this_machine": speed,
        "comparisons": {
            "same_wall_clock_45s_high_res_stem": [
                {"head": r["head"], "stem": r["stem"], "epochs": r["epochs"],
                 "lfw_one_shot_rank1": round(r["last"]["lfw_one_shot_rank1"], 4),
                 "held_out_closest_is_positive_accuracy": round(r["last"]["closest_is_positive_accuracy"], 4)}
                for r in round1["comparison"]
            ],
            "stems_fixed_epochs": [
                {"stem": r["config"]["stem"], "epochs": r["config"]["epochs"], "seconds": round(r["seconds"], 1),
                 "best_held_out_epoch": r["best_epoch"],
                 "best_held_out_closest_is_positive_accuracy": round(r["best_score"], 4)}
                for r in (shipped, standard_long)
            ],
            "long_run_80_epochs": {
                "lfw_one_shot_rank1_final": round(round1["final"]["last"]["lfw_one_shot_rank1"], 4),
                "note": "80 epochs overfit: held-out accuracy peaked at epoch 25 and fell afterwards",
            },
            "note": "LFW figures during training use cached crops (same alignment) with flip TTA",
        },
    }
    (MODELS / f"{NAME}.json").write_text(json.dumps(card, indent=1) + "\n")
    print(json.dumps({k: card[k] for k in ("sha256", "thresholds", "lfw")}, indent=1))


def _calibration_fields(calibration: dict) -> dict:
    """`calibration` (and the older `thresholds` / `far_curve`) from `facerec calibrate`'s JSON; a calibration file
    of the older format (FAR >= 1e-5 only, no tail) is carried over as it was."""
    if calibration.get("version", 0) >= 2:
        return {"calibration": calibration, **legacy_fields(calibration)}
    return {"thresholds": {k: calibration[k] for k in ("far_1e-3", "far_1e-2") if k in calibration},
            "far_curve": calibration.get("far_curve", []),
            "calibration": {k: calibration.get(k) for k in ("identities", "photos", "genuine_pairs",
                                                            "impostor_pairs")}}


def _history(log_file: Path, stem: str) -> list[dict]:
    """Per-validated-epoch figures of the shipped run, from the accelerator's log."""
    rows, current = [], None
    for line in log_file.read_text().splitlines():
        if "arcface_standard" in line:
            current = "high_res"
            continue
        if "{" not in line:
            continue
        record = json.loads(line[line.index("{"):])
        if current == stem and "lfw_one_shot_rank1" in record:
            rows.append({k: (round(v, 4) if isinstance(v, float) else v) for k, v in record.items()
                         if k in ("epoch", "loss", "lr", "closest_is_positive_accuracy", "MedianDistance",
                                  "MedianClosestDistance", "lfw_one_shot_rank1")})
    return rows


if __name__ == "__main__":
    main()
