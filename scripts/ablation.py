"""The distillation ablation at equal budget: ArcFace alone, distillation alone, both.

Every arm starts from the same warm start, sees the same number of training images (the same epochs, batch size,
learning-rate schedule and seed) and is scored on the held-out CelebA identities only (never LFW). The teacher's
own figures on the same photos stand beside them. Output: a JSON read by `scripts/make_model_card.py`.

    python scripts/ablation.py --lfw-cache cache/lfw --teacher ../shared/data/teacher/celeba112_dlib.npz \
        cache/lfw_teacher.npz --warm-start cache/v1.onnx --epochs 1 --out models/training/ablation.json
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.train.data import load_sources  # noqa: E402
from facerec.train.loop import TrainConfig, train  # noqa: E402
from facerec.train.validate import teacher_figures  # noqa: E402

ARMS = {  # name: (ArcFace weight, distillation weight)
    "arcface": (1.0, 0.0),
    "distillation": (0.0, 30.0),
    "arcface+distillation": (1.0, 30.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--celeba", default="../shared/data/celeba112")
    parser.add_argument("--lfw-cache", required=True)
    parser.add_argument("--teacher", nargs="+", required=True)
    parser.add_argument("--warm-start")
    parser.add_argument("--stem", default="standard")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--warmup-epochs", type=float, default=0.1)
    parser.add_argument("--runs", default="runs/ablation")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    faces = load_sources(args.celeba, args.lfw_cache, args.teacher)
    results = {"teacher": teacher_figures(faces), "arms": {}}
    for name, (arcface_weight, distill_weight) in ARMS.items():
        config = TrainConfig(stem=args.stem, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                             warmup_epochs=args.warmup_epochs, arcface_weight=arcface_weight,
                             distill_weight=distill_weight, warm_start=args.warm_start)
        record = train(config, faces, Path(args.runs) / name.replace("+", "_"),
                       log=lambda line: print(line, flush=True))
        results["arms"][name] = {"config": asdict(config), "last": record}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps({n: a["last"].get("one_shot_rank1") for n, a in results["arms"].items()}))


if __name__ == "__main__":
    main()
