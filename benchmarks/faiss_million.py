"""A million faces in the embedded default index (`auto`, FAISS in the process): the switch from exact search to the
graph, and identify's final answers against exact search (#52 item 3).

    python benchmarks/faiss_million.py --out benchmarks/results/faiss_million.json

The faces and queries are `pgvector_choices.py`'s (every celeba112 and LFW photo embedded by the shipped model, the
rest `face-like` padding; 300 held-out celeba112 photos of enrolled people as queries). The engine is the
product's `AutoVectors` given all of them at once, as a gallery opened on a million faces gives it: exact search
serves at once while the graph is built in the background; the build time and the recall it measured on its own
faces (what Health shows) are recorded. Then, one query at a time: the exact index's search and the graph's, p50
and p99 for identify's 50 candidates, and identify's final answer from the graph's candidates (cohort-normalised
scores, the best person named at the threshold the model card gives this gallery) against the same answer from
exact search. Memory per face: the serialized size of each index (what the process holds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pgvector_choices import CANDIDATES, bed_arguments, bed_from  # noqa: E402

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.vectors.faiss.auto import AutoVectors  # noqa: E402


def timed_search(engine, queries: np.ndarray) -> tuple[list, list[float]]:
    """Each query alone, after a warm pass: (candidates per query, seconds per query)."""
    found, samples = [], []
    for rep in range(2):
        for query in queries:
            start = time.perf_counter()
            similarities, ids = engine.search(query[None], CANDIDATES)
            elapsed = time.perf_counter() - start
            if rep:
                samples.append(elapsed)
                found.append((ids[0], similarities[0].astype(np.float64)))
    return found, samples


def index_bytes(engine) -> int:
    import faiss

    return int(faiss.serialize_index(engine.serving.faiss_index).size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bed_arguments(parser)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    vectors, _person, queries, _celeba, truth, judge = bed_from(args)
    settings = Settings()
    ids = np.arange(len(vectors), dtype=np.int64)

    exact = AutoVectors(approximate_from=args.size + 1).built(ids, vectors)  # what served before: exact alone
    exact_found, exact_samples = timed_search(exact, queries)
    exact_bytes = index_bytes(exact)
    del exact
    start = time.perf_counter()
    engine = AutoVectors(hnsw_m=settings.hnsw_m, ef_search=settings.hnsw_ef_search).built(ids, vectors)
    exact_ready = time.perf_counter() - start  # the gallery answers (exactly) from here on
    engine.wait()
    graph_ready = time.perf_counter() - start
    described = engine.describe()
    graph_found, graph_samples = timed_search(engine, queries)
    answers = [judge.answer(n, ids_, cosines) for n, (ids_, cosines) in enumerate(graph_found)]
    exact_answers = [judge.answer(n, *truth[n]) for n in range(len(queries))]
    result = {
        "size": args.size, "queries": len(queries), "candidates": CANDIDATES,
        "threshold": round(judge.rule.threshold, 4),
        "exact_named": sum(a is not None for a in exact_answers),
        "approximate_from": engine.approximate_from, "hnsw_m": settings.hnsw_m, "ef_search": settings.hnsw_ef_search,
        "exact": {"ready_s": round(exact_ready, 1), "bytes_per_face": round(exact_bytes / args.size, 1),
                  "search_p50_ms": round(1000 * statistics.median(exact_samples), 2),
                  "search_p99_ms": round(1000 * float(np.percentile(exact_samples, 99)), 2),
                  "agrees_with_numpy": float(np.mean([f[0][0] == t[0][0] for f, t in zip(exact_found, truth)]))},
        "graph": {"ready_s": round(graph_ready, 1), "bytes_per_face": round(index_bytes(engine) / args.size, 1),
                  "index": described["index"], "recall_measured_at_build": described["recall"],
                  "recall_sample": described["recall_sample"],
                  "raw_recall_at_1": round(float(np.mean([g[0][0] == t[0][0] for g, t in zip(graph_found, truth)])), 4),
                  "final_answer_agreement": round(float(np.mean([a == e for a, e in zip(answers, exact_answers)])), 4),
                  "search_p50_ms": round(1000 * statistics.median(graph_samples), 2),
                  "search_p99_ms": round(1000 * float(np.percentile(graph_samples, 99)), 2)},
    }
    print(result, flush=True)
    write_result(args.out, result, settings.model_path, threads=0)


if __name__ == "__main__":
    main()
