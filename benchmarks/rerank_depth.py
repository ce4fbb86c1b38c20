"""How deep identify must look among the index's raw nearest faces for the cohort-normalised best.

    python benchmarks/rerank_depth.py --data ../shared/data --out benchmarks/results/rerank_depth.json

The index finds candidates by raw cosine; identify re-ranks the top RERANK_DEPTH of them by the normalised score
(`facerec.gallery.search`). This measures, for every search of the LFW open-set protocol (the 779 queries of the
two-photo people and the 4,848 enrolled photos searched leave-one-out as strangers), where the face with the best
normalised score over the WHOLE gallery lies in the raw cosine order: the share outside the raw top k, and the
share of answers (name or unknown at the default rule's threshold for that size) that a re-rank of the top k
would change. At 4,848 real faces, and at 100,000 faces: the same real faces padded with face-like vectors (a
Gaussian fitted to the one-photo people's embeddings, as `benchmarks/scale.py` pads).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.evaluation.embedding import embed_photos  # noqa: E402
from facerec.evaluation.oneshot import plan_protocol  # noqa: E402
from facerec.faces.pipeline import FacePipeline  # noqa: E402
from facerec.openset.cohort import normalised  # noqa: E402
from facerec.openset.model_card import policy_for, scorer_for  # noqa: E402
from facerec.provenance import file_sha256, write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

DEPTHS = (5, 10, 20, 50, 100, 200)
SIZES = (4848, 100_000)
BLOCK = 512


def protocol_embeddings(data: Path, cache: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gallery [4848, D], queries [779, D], each query's gallery row), embedded once and cached, per model file
    (a cache of another model's embeddings was once read back silently)."""
    model_sha256 = file_sha256(Settings().model_path)
    if cache.is_file():
        with np.load(cache) as saved:
            if "model_sha256" in saved and str(saved["model_sha256"]) == model_sha256:
                return saved["gallery"], saved["queries"], saved["owner"]
    enrolled, queries, extra = plan_protocol(data / "lfw", 2, True, 51)
    names = list(enrolled) + list(extra)
    paths = [enrolled[n] for n in enrolled] + [extra[n] for n in extra] + [p for _, p in queries]
    photos = embed_photos(FacePipeline(Settings()), paths)
    owner = np.array([names.index(n) for n, _ in queries])
    gallery, probes = photos.embeddings[:len(names)], photos.embeddings[len(names):]
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, gallery=gallery, queries=probes, owner=owner, model_sha256=model_sha256)
    return gallery, probes, owner


def face_like(count: int, fit: np.ndarray, seed: int) -> np.ndarray:
    mean = fit.mean(axis=0)
    root = np.linalg.cholesky(np.cov(fit.T.astype(np.float64)) + 1e-6 * np.eye(fit.shape[1]))
    drawn = mean + np.random.default_rng(seed).standard_normal((count, fit.shape[1])) @ root.T
    return (drawn / np.linalg.norm(drawn, axis=1, keepdims=True)).astype(np.float32)


def measure(gallery: np.ndarray, probes: np.ndarray, excluded: np.ndarray, threshold: float, scorer) -> dict:
    """For each probe (its own gallery row `excluded`, or -1): rank of the normalised best in raw order, and
    whether the answer of a re-rank of the top k equals the exhaustive one."""
    theirs = scorer.statistics(gallery)
    ranks, changed = [], {k: 0 for k in DEPTHS}
    for start in range(0, len(probes), BLOCK):
        block = probes[start:start + BLOCK]
        cosines = block @ gallery.T
        rows = np.arange(len(block))
        own = excluded[start:start + BLOCK]
        cosines[rows[own >= 0], own[own >= 0]] = -np.inf
        scores = normalised(cosines, scorer.statistics(block), theirs)
        best = scores.argmax(axis=1)
        order = np.argsort(-cosines, axis=1)[:, :max(DEPTHS)]
        for i in rows:
            position = np.flatnonzero(order[i] == best[i])
            ranks.append(int(position[0]) + 1 if len(position) else max(DEPTHS) + 1)
            exhaustive = best[i] if scores[i, best[i]] >= threshold else -1
            for k in DEPTHS:
                top = order[i, :k]
                pick = top[np.argmax(scores[i, top])]
                if (pick if scores[i, pick] >= threshold else -1) != exhaustive:
                    changed[k] += 1
    ranks = np.array(ranks)
    return {"searches": int(len(ranks)), "threshold": round(threshold, 4),
            "outside_raw_top_k": {str(k): float(np.mean(ranks > k)) for k in DEPTHS},
            "answer_changed_by_top_k": {str(k): changed[k] / len(ranks) for k in DEPTHS}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", default="benchmarks/results/rerank_depth.json")
    parser.add_argument("--cache", type=Path, default=Path("cache/lfw_protocol_rerank.npz"))
    args = parser.parse_args()
    settings = Settings()
    policy = policy_for(settings)
    scorer = scorer_for(settings, policy)
    gallery, queries, owner = protocol_embeddings(args.data, args.cache)
    people = len(gallery)
    probes = np.concatenate([queries, gallery])
    excluded = np.concatenate([np.full(len(queries), -1), np.arange(people)])  # strangers: leave-one-out
    results = []
    for size in SIZES:
        bed = gallery if size <= people else np.concatenate(
            [gallery, face_like(size - people, gallery[np.isin(np.arange(people), owner, invert=True)], size)])
        threshold = policy.for_gallery(size, size).threshold
        results.append({"gallery_faces": size, "real_faces": min(size, people), **measure(bed, probes, excluded,
                                                                                           threshold, scorer)})
        print(results[-1], flush=True)
    write_result(args.out, {"depths": list(DEPTHS), "sizes": results, "cohort": scorer.cohort_id,
                            "shipped_depth": 50}, settings.model_path, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
