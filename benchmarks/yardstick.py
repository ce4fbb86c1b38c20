"""Is the synthetic padding of benchmarks/scale.py a fair yardstick? Recall of the approximate indexes against
ef_search on a gallery of real faces only, beside the same gallery with its padding drawn from the `face-like`
Gaussian, at the largest real size ../shared/data gives.

    python benchmarks/yardstick.py --out benchmarks/results/yardstick.json

Why: scale.py pads a gallery of real faces to a million with vectors drawn from a Gaussian fitted to real
embeddings. If such vectors were easier for HNSW than real faces (less clustered, say), every recall it reports
would flatter the engines. Here both galleries hold the same people to find and the same queries, and differ only
in what surrounds them:

- the people to find: `--people` celeba112 identities with >= 2 photos (chosen with a fixed seed); the last photo
  of each is the query, the others are in the gallery;
- `real`: every other photo of celeba112 and every photo of LFW, embedded by the shipped model as a gallery
  stores them (aligned crops; LFW's cached by `facerec-train prepare`);
- `face-like`: as many vectors drawn, exactly as scale.py draws them, from the Gaussian fitted to the embeddings
  of LFW's one-photo people.

recall@1 = how often the index's top hit is the exact top hit of the same gallery (a `flat` search), the queries
one at a time; FAISS `hnsw` (facerec's build) and pgvector's HNSW (a PostgreSQL this script starts, as scale.py
does). The embeddings are cached per model file (`--cache`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import PostgresBench, TestBed, bench_kind, face_like_bed  # noqa: E402

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.evaluation.calibrate_model import cached_embeddings  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

SEED = 7


def lfw_embeddings(embedder: FaceEmbedder, lfw_cache: Path, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings of every aligned LFW photo, whether its person has one photo only)."""
    rows = [line.split("\t") for line in (lfw_cache / "manifest.tsv").read_text().splitlines()[1:]]
    photos = Counter(row[1] for row in rows)
    single = np.array([photos[row[1]] == 1 for row in rows])
    key = cache / f"yardstick_lfw_{embedder.sha256[:12]}.npy"
    if key.exists():
        return np.load(key), single
    crops = np.load(lfw_cache / "faces.npy", mmap_mode="r")
    vectors = np.concatenate([embedder.embed(np.asarray(crops[start:start + 64]))
                              for start in range(0, len(crops), 64)])
    np.save(key, vectors)
    return vectors, single


def beds(data: Path, lfw_cache: Path, cache: Path, people: int) -> tuple[TestBed, TestBed]:
    embedder = FaceEmbedder(Settings().model_path)  # flip averaged, as a gallery stores its faces
    celeba = list_identities(data / "celeba112")
    paths = [photo for name in sorted(celeba) for photo in celeba[name]]
    celeba_vectors = cached_embeddings(embedder, paths, cache / f"yardstick_celeba_{embedder.sha256[:12]}.npz")
    lfw_vectors, lfw_single = lfw_embeddings(embedder, lfw_cache, cache)
    owner = np.array([p.parent.name for p in paths])
    rng = np.random.default_rng(SEED)
    candidates = sorted(name for name in celeba if len(celeba[name]) >= 2)
    chosen = set(rng.choice(candidates, people, replace=False).tolist())
    query_rows = [max(np.flatnonzero(owner == name)) for name in sorted(chosen)]
    findable = np.flatnonzero(np.isin(owner, list(chosen)) & ~np.isin(np.arange(len(paths)), query_rows))
    surround = np.flatnonzero(~np.isin(owner, list(chosen)))
    queries = celeba_vectors[query_rows]
    real = np.concatenate([celeba_vectors[findable], celeba_vectors[surround], lfw_vectors])
    synthetic = face_like_bed(len(real), {"enrolled": celeba_vectors[findable], "queries": queries,
                                          "fit": lfw_vectors[lfw_single]})
    return TestBed("real", real, queries), TestBed("face-like", synthetic.vectors, queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--lfw-cache", type=Path, default=Path("cache/lfw"))
    parser.add_argument("--cache", type=Path, default=Path("cache"))
    parser.add_argument("--people", type=int, default=300)
    parser.add_argument("--no-pgvector", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    real, synthetic = beds(args.data, args.lfw_cache, args.cache, args.people)
    print(json.dumps({"gallery": len(real.vectors), "queries": len(real.queries)}), flush=True)
    rows = []
    postgres = None if args.no_pgvector else PostgresBench(None)
    try:
        for bed in (real, synthetic):
            for kind in ("flat", "hnsw"):
                rows += bench_kind(bed, kind)
            if postgres is not None:
                rows += postgres.bench(bed)
            print(json.dumps(rows[-1]), flush=True)
    finally:
        if postgres is not None:
            postgres.close()
    ties = {bed.distribution: exact_ties(bed) for bed in (real, synthetic)}
    write_result(args.out, {"gallery": len(real.vectors), "queries": len(real.queries), "people_to_find": args.people,
                            "exact_ties": ties, "rows": rows}, Settings().model_path, threads=0)


def exact_ties(bed: TestBed) -> int:
    """Queries whose two nearest faces are equally near (a photo in the data twice): either is a right answer,
    and an index that returns the other counts as a miss of recall@1."""
    top = np.sort(bed.queries @ bed.vectors.T, axis=1)[:, -2:]
    return int(np.sum(top[:, 1] - top[:, 0] < 1e-7))


if __name__ == "__main__":
    main()
