"""Train the shipped model and the head/stem comparison on an accelerator, inside a fixed wall-clock budget.

Run from the repository root:
    python scripts/device_train.py --pack PART1 PART2 --out OUT --final-seconds 270 --compare-seconds 45

1. The final model (ArcFace, high-resolution stem): its epoch count is chosen from the measured throughput so
   that it fits `--final-seconds`; that count is what `facerec train --epochs N` reproduces on any machine.
2. The comparison: softmax / contrastive / triplet / ArcFace heads (and ArcFace with the standard stem), each
   trained for the same wall-clock budget on the same data, then validated on held-out identities and LFW.
Outputs in OUT: the final weights split in <16 MB parts, `results.json` and `log.txt`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from facerec.train.data import load_pack  # noqa: E402
from facerec.train.loop import BEST_FILE, WEIGHTS_FILE, TrainConfig, measure_throughput, train  # noqa: E402

PART_BYTES = 15 * 1024 * 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pack", nargs="+", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", default="/tmp/facerec_runs")
    parser.add_argument("--final-seconds", type=float, default=270)
    parser.add_argument("--compare-seconds", type=float, default=45)
    parser.add_argument("--deadline-seconds", type=float, default=560)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--max-epochs", type=int, default=80)
    parser.add_argument("--run", action="append", default=[],
                        help="HEAD:STEM:EPOCHS:MAX_SECONDS; trains these instead of the final+comparison plan and "
                             "returns each run's best held-out epoch as fp16 weights")
    args = parser.parse_args()
    began = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log_file = open(out / "log.txt", "a")

    def log(message: str) -> None:
        line = f"[{time.perf_counter() - began:7.1f}s] {message}"
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    torch.backends.cudnn.benchmark = True
    faces = load_pack(args.pack, workers=16)
    train_count = len(faces.rows("train"))
    log(f"decoded {len(faces.identities)} faces ({train_count} training) on {torch.cuda.get_device_name(0)}")
    results: dict = {"final": None, "comparison": []}

    def save_results() -> None:
        (out / "results.json").write_text(json.dumps(results, indent=1))

    base = TrainConfig(batch_size=args.batch_size, lr=args.lr, device="cuda")
    if args.run:
        for spec in args.run:
            head, stem, epochs, seconds = spec.split(":")
            config = replace(base, head=head, stem=stem, epochs=int(epochs), max_seconds=float(seconds),
                             validate_every=4)
            started = time.perf_counter()
            record = train(config, faces, Path(args.work) / f"{head}_{stem}_{epochs}", log=log)
            best = torch.load(Path(args.work) / f"{head}_{stem}_{epochs}" / BEST_FILE, weights_only=False)
            best["model"] = {k: (v.half() if v.is_floating_point() else v) for k, v in best["model"].items()}
            name = f"{head}_{stem}_{epochs}.pt"
            torch.save(best, Path(args.work) / name)
            _split_weights(Path(args.work) / name, out, prefix=name)
            results["comparison"].append({"config": asdict(config), "seconds": time.perf_counter() - started,
                                          "last": record, "best_epoch": best["epoch"],
                                          "best_score": best[config.keep_best]})
            save_results()
            log(f"{name}: best held-out epoch {best['epoch']}")
        return
    rate = measure_throughput(base, faces)
    epochs = min(args.max_epochs, max(1, int(args.final_seconds * rate / train_count)))
    final = replace(base, epochs=epochs, max_seconds=args.final_seconds * 1.15, validate_every=max(1, epochs // 15))
    log(f"final: {rate:.0f} img/s -> {epochs} epochs; config {json.dumps(asdict(final))}")
    started = time.perf_counter()
    record = train(final, faces, Path(args.work) / "final", log=log)
    results["final"] = {"config": asdict(final), "throughput": rate, "seconds": time.perf_counter() - started,
                        "last": record}
    save_results()
    _split_weights(Path(args.work) / "final" / WEIGHTS_FILE, out)
    log("final weights saved")

    variants = [("arcface", "high_res"), ("softmax", "high_res"), ("contrastive", "high_res"),
                ("triplet", "high_res"), ("arcface", "standard")]
    for head, stem in variants:
        remaining = args.deadline_seconds - (time.perf_counter() - began)
        if remaining < args.compare_seconds + 25:
            log(f"skipping {head}/{stem}: {remaining:.0f}s left")
            continue
        config = replace(base, head=head, stem=stem)
        rate = measure_throughput(config, faces)
        config = replace(config, epochs=max(1, int(args.compare_seconds * rate / train_count)),
                         max_seconds=args.compare_seconds * 1.15, validate_every=1000)
        started = time.perf_counter()
        record = train(config, faces, Path(args.work) / f"{head}_{stem}", log=log)
        results["comparison"].append({"head": head, "stem": stem, "throughput": rate, "epochs": config.epochs,
                                      "seconds": time.perf_counter() - started, "last": record})
        save_results()
    log("done")


def _split_weights(path: Path, out: Path, prefix: str = "embedder.pt") -> None:
    data = path.read_bytes()
    for index, start in enumerate(range(0, len(data), PART_BYTES)):
        (out / f"{prefix}.part{index}").write_bytes(data[start : start + PART_BYTES])


if __name__ == "__main__":
    main()
