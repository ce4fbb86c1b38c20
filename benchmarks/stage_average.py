"""Which training stages to average (`facerec-train average`), chosen on held-out identities only (never LFW).

    python benchmarks/stage_average.py --stage v4=runs/v4/model_fp32.onnx --stage v5=runs/v5/model_fp32.onnx \
        --stage v6=runs/v6/model_fp32.onnx --out models/training/stage_average.json

Every stage alone and the equal-weight average of every set of two or more consecutive stages (the later ones
always in: the average should contain what the recipe learnt last) are measured the same way as
benchmarks/embedding_options.py (fp32, test-time flip, the 150 held-out CelebA identities; one-shot rank-1 as the
mean over 30 enrollment draws). The rule: the best-scoring candidate; a single stage when no average beats it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from embedding_options import held_out_crops, measure  # noqa: E402

from facerec.provenance import write_result  # noqa: E402
from facerec.train.averaging import average_onnx  # noqa: E402


def candidates(stages: dict[str, Path], work: Path) -> dict[str, tuple[list[str], Path]]:
    """name -> (stages in it, ONNX file): each stage, then the averages of the last k stages, k >= 2."""
    names = list(stages)
    out = {name: ([name], path) for name, path in stages.items()}
    for k in range(2, len(names) + 1):
        members = names[-k:]
        name = "avg_" + "_".join(members)
        out[name] = (members, average_onnx([stages[m] for m in members], work / f"{name}.onnx"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--stage", action="append", required=True, help="NAME=MODEL.onnx (fp32), oldest first")
    parser.add_argument("--work", default="runs/stage_average")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    stages = {name: Path(path) for name, path in (s.split("=", 1) for s in args.stage)}
    crops, names = held_out_crops(Path(args.data) / "celeba112")
    rows = [{"name": name, "stages": members, **measure(path, True, crops, names)}
            for name, (members, path) in candidates(stages, Path(args.work)).items()]
    chosen = max(rows, key=lambda r: r["one_shot_rank1"])
    result = {"held_out_identities": len(set(names)), "photos": len(names), "candidates": rows,
              "rule": "the candidate with the best held-out one-shot rank-1 (mean over 30 draws), fp32 with flip",
              "chosen": chosen}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(args.out, result, None, threads=0)
    for r in rows:
        print(f"{r['name']:14} rank1={r['one_shot_rank1']:.4f} (protocol draw "
              f"{r['one_shot_rank1_protocol_draw']:.4f}) CIPA={r['closest_is_positive_accuracy']:.4f}")
    print("chosen:", chosen["name"])


if __name__ == "__main__":
    main()
