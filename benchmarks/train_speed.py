"""Training throughput of each stem and precision on this CPU: images per second of one optimisation step of
the embedder (forward, backward, SGD), batch 64, every core, on random pixels (a convolution's time does not
depend on the values).

    python benchmarks/train_speed.py --out benchmarks/results/train_speed_<cpu>.json     # ~2 min

Why: training compute is what this project has least of, so a recipe is chosen after its cost is measured.
What it showed on an AMD EPYC with native bf16 (avx512_bf16): the standard stem (7x7/2 convolution, feature
maps 28/14/7/4) trains ~6x faster than the high-resolution stem the shipped model has (56/28/14/7), and bf16
autocast ~2x faster than fp32 there; on CPUs without native bf16 the loop uses fp32 (`facerec.train.precision`).
Only the network is timed: the ArcFace head, distillation and augmentation add ~10% in the real loop.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.provenance import write_result  # noqa: E402

BATCH = 64
STEPS = 4


def images_per_second(stem: str, bf16: bool, steps: int = STEPS) -> float:
    import torch

    from facerec.train.backbone import FaceEmbedder

    torch.manual_seed(0)
    model = FaceEmbedder(stem=stem).to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = (torch.rand(BATCH, 3, 112, 112) * 255).contiguous(memory_format=torch.channels_last)

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            embeddings = model(images)
        embeddings.float().pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # the first step allocates and picks kernels
    started = time.perf_counter()
    for _ in range(steps):
        step()
    return BATCH * steps / (time.perf_counter() - started)


def main() -> None:
    import torch

    from facerec.train.precision import cpu_has_native_bf16

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    native = cpu_has_native_bf16()
    rows = []
    for stem in ("high_res", "standard"):
        for bf16 in (False, True):
            speed = images_per_second(stem, bf16)
            rows.append({"stem": stem, "precision": "bf16" if bf16 else "fp32", "images_per_second": round(speed, 1),
                         "chosen_by_the_loop": bf16 == native})
            print(json.dumps(rows[-1]), flush=True)
    result = {"batch": BATCH, "steps": STEPS, "threads": torch.get_num_threads(), "torch": torch.__version__,
              "native_bf16": native, "rows": rows}
    write_result(args.out, result, None, threads=torch.get_num_threads())


if __name__ == "__main__":
    main()
