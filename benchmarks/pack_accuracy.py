"""Each model pack's TAR at FAR 1e-3 / 1e-4 / 1e-5 on the same held-out identities, raw and cohort-normalised.

    python benchmarks/pack_accuracy.py --data ../shared/data --out benchmarks/results/pack_accuracy.json

The photos: the 150 held-out celeba112 identities of facerec's shipped model (`facerec.datasets.folders.held_out`,
"single" split: its network never trained on them; dlib's was trained on ~3M faces chosen to avoid LFW, not
CelebA's identities as far as its author says), 2,411 aligned crops, every pair. Each pack embeds them through its
own embedder (`facerec.faces.pack_parts.embedder_for`), with the flip the app uses; the normalised score is AS-norm
with the pack's own shipped cohort (`<pack>.cohort.npz`, top K from its card), as the app decides. Thresholds are
the empirical impostor quantiles. One more row, the issue's reference fusion: the mean of facerec's and the
public-domain pack's AS-normalised scores (two cohorts, two searches), which the fused pack replaces by one
normalised joined score that a single index can search. LFW is never read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.evaluation.calibrate_model import cached_embeddings, held_out_photos  # noqa: E402
from facerec.faces.pack_parts import embedder_for  # noqa: E402
from facerec.openset.cohort import Cohort, cohort_path, pairwise_scores  # noqa: E402
from facerec.packs.catalog import DEFAULT_PACK, PACKS, PUBLIC_DOMAIN_PACK  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import pack_file  # noqa: E402

FARS = (1e-3, 1e-4, 1e-5)


def tar_at_fars(scores: np.ndarray, same: np.ndarray, upper: np.ndarray) -> dict:
    genuine, impostor = scores[upper & same], np.sort(scores[upper & ~same])[::-1]
    return {f"tar_at_far_{far:.0e}": round(float(np.mean(genuine > impostor[max(0, int(far * len(impostor)) - 1)])), 4)
            for far in FARS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cache", default="cache")
    args = parser.parse_args()
    paths, labels = held_out_photos(args.data, split="single")
    same = labels[:, None] == labels[None, :]
    upper = np.triu(np.ones(same.shape, bool), k=1)
    rows, normalised, sha = [], {}, {}
    for name in PACKS:
        model = pack_file(name)
        embedder = embedder_for(model, flip_tta=True)
        vectors = cached_embeddings(embedder, paths, Path(args.cache) / f"held_out_{name}.npz")
        card = json.loads(model.with_suffix(".json").read_text())
        cohort = Cohort.load(cohort_path(model), card["cohort"]["sha256"])
        normalised[name] = pairwise_scores(vectors, cohort.statistics(vectors))
        sha[name] = embedder.sha256
        rows.append({"pack": name, "scores": "raw cosine", **tar_at_fars(vectors @ vectors.T, same, upper)})
        rows.append({"pack": name, "scores": "as-norm", "cohort": len(cohort.embeddings), "top_k": cohort.top_k,
                     **tar_at_fars(normalised[name], same, upper)})
        print(rows[-2], rows[-1], flush=True)
    mean = (normalised[DEFAULT_PACK] + normalised[PUBLIC_DOMAIN_PACK]) / 2
    rows.append({"pack": f"mean of {DEFAULT_PACK} and {PUBLIC_DOMAIN_PACK}", "scores": "mean of two as-norm",
                 **tar_at_fars(mean, same, upper)})
    print(rows[-1])
    write_result(args.out, {"what": "every pack's TAR at FAR 1e-3 / 1e-4 / 1e-5 on facerec's held-out identities",
                            "identities": int(len(set(labels))), "photos": len(paths),
                            "genuine_pairs": int((upper & same).sum()), "impostor_pairs": int((upper & ~same).sum()),
                            "split": "single (facerec's shipped model never trained on these)",
                            "pack_sha256": sha, "rows": rows}, None, 0)


if __name__ == "__main__":
    main()
