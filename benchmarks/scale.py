"""Gallery scale: search latency, exact vs approximate (HNSW) recall@1, memory per identity, bulk enrolment.

    python benchmarks/scale.py --sizes 1000 10000 100000 1000000 --out runs/scale.json

Synthetic unit vectors stand in for faces (search cost does not depend on what the vectors mean); queries are
enrolled vectors plus noise, so the exact nearest neighbour is known. Search latency is one query at a time
(median of 200). End-to-end latency from a photo = the measured photo pipeline (decode, detect, align, embed)
plus the search at that size, measured together through `Gallery.identify` up to `--gallery-max` identities.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.gallery import Gallery  # noqa: E402
from facerec.index import FaceIndex  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def unit_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 512)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def queries_near(vectors: np.ndarray, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(vectors), count, replace=False)
    noisy = vectors[rows] + 0.05 * rng.standard_normal((count, 512)).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True), rows


def median_ms(index: FaceIndex, queries: np.ndarray) -> float:
    samples = []
    for query in queries:
        start = time.perf_counter()
        index.search(query[None], 5)
        samples.append(time.perf_counter() - start)
    return 1000 * statistics.median(samples)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_index(size: int, kind: str, ef_values=(64,)) -> list[dict]:
    vectors = unit_vectors(size, seed=size)
    queries, truth = queries_near(vectors, 200, seed=1)
    before = rss_mb()
    index = FaceIndex(kind)
    start = time.perf_counter()
    for chunk in range(0, size, 100_000):
        index.add(np.arange(chunk, min(size, chunk + 100_000)), vectors[chunk : chunk + 100_000])
    build = time.perf_counter() - start
    import faiss

    with tempfile.NamedTemporaryFile() as handle:
        faiss.write_index(index._index, handle.name)
        bytes_per_identity = Path(handle.name).stat().st_size / size
    rows = []
    for ef in ef_values if kind == "hnsw" else (None,):
        if ef is not None:
            index.ef_search = ef
        latency = median_ms(index, queries)
        _, found = index.search(queries, 1)
        rows.append({"size": size, "kind": kind, "ef_search": ef, "search_ms": round(latency, 3),
                     "recall_at_1": float(np.mean(found[:, 0] == truth)), "build_s": round(build, 2),
                     "index_bytes_per_identity": round(bytes_per_identity, 1),
                     "peak_rss_growth_mb": round(rss_mb() - before, 1)})
    return rows


def bench_gallery(size: int, photo: str) -> dict:
    vectors = unit_vectors(size, seed=size + 7)
    with tempfile.TemporaryDirectory() as home:
        gallery = Gallery(Settings(home=Path(home), store_crops=False))
        start = time.perf_counter()
        for chunk in range(0, size, 20_000):
            gallery.add_embeddings([{"name": f"person {i}", "embedding": vectors[i]}
                                    for i in range(chunk, min(size, chunk + 20_000))])
        enrol_s = time.perf_counter() - start
        decoded = gallery.read(photo)
        gallery.identify(decoded)
        samples = []
        for _ in range(10):
            begin = time.perf_counter()
            gallery.identify(photo)
            samples.append(time.perf_counter() - begin)
        db_bytes = (Path(home) / "gallery.db").stat().st_size
        gallery.close()
    return {"size": size, "bulk_enrol_per_s": round(size / enrol_s, 1),
            "identify_ms_end_to_end": round(1000 * statistics.median(samples), 1),
            "database_bytes_per_identity": round(db_bytes / size, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    parser.add_argument("--gallery-max", type=int, default=100000)
    parser.add_argument("--kinds", nargs="+", default=["flat", "flat16", "hnsw"])
    parser.add_argument("--photo", default="../shared/data/lfw/Abdullah_Gul/Abdullah_Gul_0001.jpg")
    parser.add_argument("--out")
    args = parser.parse_args()
    results = {"index": [], "gallery": []}
    for size in args.sizes:
        for kind in args.kinds:
            for row in bench_index(size, kind, ef_values=(64, 128, 256)):
                print(json.dumps(row), flush=True)
                results["index"].append(row)
        if size <= args.gallery_max:
            row = bench_gallery(size, args.photo)
            print(json.dumps(row), flush=True)
            results["gallery"].append(row)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
