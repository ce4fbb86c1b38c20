"""The score cohort's size and K, chosen on the held-out identities (never LFW).

    python benchmarks/cohort_sweep.py --data ../shared/data --out benchmarks/results/cohort_sweep.json

For each cohort size (the first N of the seeded training identities, `facerec.evaluation.cohort_model`) and K,
every pair of the held-out calibration identities' photos is scored by AS-norm (`facerec.openset.cohort`), and
the genuine-pair acceptance (TAR) is read at the empirical impostor thresholds for FAR 1e-3, 1e-4 and 1e-5; the
raw cosine is the control. The rule: the smallest cohort and K within 0.005 of the best TAR at FAR 1e-4 (the
cost per face grows with the cohort; K costs nothing).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.evaluation.calibrate_model import cached_embeddings, held_out_photos  # noqa: E402
from facerec.evaluation.cohort_model import cohort_candidates  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.openset.cohort import Cohort, pairwise_scores  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

SIZES = (500, 1000, 2000, 3000, 4500, 6190)
TOP_KS = (50, 100, 200, 300, 500)
FARS = (1e-3, 1e-4, 1e-5)
WITHIN = 0.005


def tar_at_fars(scores: np.ndarray, same: np.ndarray, upper: np.ndarray) -> dict:
    genuine, impostor = scores[upper & same], np.sort(scores[upper & ~same])[::-1]
    result = {}
    for far in FARS:
        threshold = impostor[max(0, int(far * len(impostor)) - 1)]
        result[f"tar_at_far_{far:.0e}"] = round(float(np.mean(genuine > threshold)), 4)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="benchmarks/results/cohort_sweep.json")
    parser.add_argument("--cache", default="cache")
    args = parser.parse_args()
    model = Settings.from_env().model_path
    embedder = FaceEmbedder(model, flip_tta=True)
    started = time.perf_counter()
    paths, labels = held_out_photos(args.data)
    probes = cached_embeddings(embedder, paths, Path(args.cache) / "calibration_embeddings.npz")
    candidates = cohort_candidates(args.data)
    pool = cached_embeddings(embedder, candidates, Path(args.cache) / "cohort_candidates.npz")
    embedded = time.perf_counter() - started
    same = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones(same.shape, bool), k=1)
    rows = [{"scores": "raw cosine", **tar_at_fars(probes @ probes.T, same, upper)}]
    for size in SIZES:
        for top_k in TOP_KS:
            cohort = Cohort(pool[:size], top_k)
            rows.append({"scores": "as-norm", "cohort": min(size, len(pool)), "top_k": top_k,
                         **tar_at_fars(pairwise_scores(probes, cohort.statistics(probes)), same, upper)})
            print(rows[-1], flush=True)
    normed = [r for r in rows if r["scores"] == "as-norm"]
    best = max(r["tar_at_far_1e-04"] for r in normed)
    chosen = min((r for r in normed if r["tar_at_far_1e-04"] >= best - WITHIN), key=lambda r: (r["cohort"], r["top_k"]))
    write_result(args.out, {"identities": int(len(set(labels))), "photos": len(paths),
                            "cohort_pool": len(pool), "rows": rows, "rule": __doc__.split("The rule: ")[1].strip(),
                            "chosen": chosen, "seconds": {"embedding": round(embedded, 1)}}, model, 0, embedder)
    print("chosen", chosen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
