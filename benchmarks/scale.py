"""Gallery scale: search latency, exact vs approximate recall@1, memory per identity, bulk enrolment, end to end.

    python benchmarks/scale.py --out benchmarks/results/scale.json          # 1e3 .. 1e6, both distributions

Two kinds of synthetic gallery, because an approximate index's recall depends on what the vectors look like:

- `face-like`: the gallery is real: the enrolled photo (the LFW protocol's seeded choice) of each of the 1,680
  LFW people with >= 2 photos, embedded by the shipped model, padded to the gallery size with vectors drawn from
  a Gaussian fitted (mean and full 512x512 covariance) to the embeddings of the one-photo LFW people, normalised.
  Queries are another real photo of those people. Real face embeddings are far from isotropic (99.9% of their
  energy lies in ~110 of 512 directions), and the `hnsw` index exploits that structure.
- `uniform`: unit vectors uniform on the sphere, every direction equally likely: the worst case for any
  approximate index. Queries are enrolled vectors plus noise at cosine ~0.66 (this model's median genuine score).

recall@1 = how often the index's top hit is the exact top hit (a `flat` search of the same vectors). Search
latency is one query at a time, k=5, median of 200. End to end = `Gallery.identify` on a photo, measured with the
default exact index at every size up to `--gallery-max`; for the other kinds it is the photo pipeline (the same
measurement on an empty gallery) plus their search latency. The LFW embeddings are computed once and cached
(`--embeddings`).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.dataset import choose_enrolled, list_identities  # noqa: E402
from facerec.evaluation.embedding import embed_photos  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.vectors.faiss_index import FaceIndex  # noqa: E402
from facerec.pipeline import FacePipeline  # noqa: E402
from facerec.settings import Settings  # noqa: E402

QUERIES, TIMED_QUERIES, CHUNK = 300, 200, 100_000
EF_SEARCH = (32, 64, 128, 192, 256, 384, 512)


@dataclass
class TestBed:
    """A gallery of `vectors` (row i has face id i) and queries whose exact top hits are `truth`."""

    distribution: str
    vectors: np.ndarray
    queries: np.ndarray
    truth: np.ndarray | None = None


def normalised(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def uniform_bed(size: int) -> TestBed:
    rng = np.random.default_rng(size)
    vectors = np.empty((size, 512), np.float32)
    for start in range(0, size, CHUNK):
        count = min(CHUNK, size - start)
        vectors[start : start + count] = normalised(rng.standard_normal((count, 512), dtype=np.float32))
    rows = rng.choice(size, min(QUERIES, size), replace=False)
    queries = normalised(vectors[rows] + 0.05 * rng.standard_normal((len(rows), 512), dtype=np.float32))
    return TestBed("uniform", vectors, queries)


def face_like_bed(size: int, lfw: dict[str, np.ndarray]) -> TestBed:
    enrolled, queries, fit = lfw["enrolled"], lfw["queries"], lfw["fit"].astype(np.float64)
    mean = fit.mean(axis=0)
    root = np.linalg.cholesky(np.cov(fit.T) + 1e-8 * np.eye(512))
    rng = np.random.default_rng(size)
    vectors = np.empty((max(size, len(enrolled)), 512), np.float32)
    vectors[: len(enrolled)] = enrolled
    for start in range(len(enrolled), len(vectors), CHUNK):
        count = min(CHUNK, len(vectors) - start)
        vectors[start : start + count] = normalised(mean + rng.standard_normal((count, 512)) @ root.T)
    return TestBed("face-like", vectors[:size], queries[:QUERIES])


def lfw_embeddings(data_dir: Path, cache: Path) -> dict[str, np.ndarray]:
    """{"enrolled", "queries"}: the protocol's enrolled photo and another photo of each LFW person with >= 2
    photos (in name order);
    {"fit"}: one photo of every one-photo person. Embedded end to end by the shipped model, cached."""
    if cache.exists():
        with np.load(cache) as saved:
            return dict(saved)
    identities = list_identities(data_dir / "lfw")
    enrolled_photo = choose_enrolled(identities)
    pairs = [(photo, next(p for p in identities[name] if p != photo)) for name, photo in enrolled_photo.items()]
    singles = [photos[0] for photos in identities.values() if len(photos) == 1]
    pipeline = FacePipeline(Settings.from_env(flip_tta=False))  # search cost does not depend on it
    embedded = embed_photos(pipeline, [a for a, _ in pairs] + [b for _, b in pairs] + singles).embeddings
    lfw = {"enrolled": embedded[: len(pairs)], "queries": embedded[len(pairs) : 2 * len(pairs)],
           "fit": embedded[2 * len(pairs) :]}
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **lfw)
    return lfw


def filled_index(kind: str, vectors: np.ndarray) -> tuple[FaceIndex, float]:
    """Built in one go, as a gallery's index is when it is rebuilt from the database."""
    index = FaceIndex(kind)
    start = time.perf_counter()
    index.fill(np.arange(len(vectors)), vectors)
    return index, time.perf_counter() - start


def median_search_ms(index: FaceIndex, queries: np.ndarray) -> float:
    samples = []
    for query in queries[:TIMED_QUERIES]:
        start = time.perf_counter()
        index.search(query[None], 5)
        samples.append(time.perf_counter() - start)
    return 1000 * statistics.median(samples)


def index_bytes(index: FaceIndex) -> int:
    import faiss

    with tempfile.NamedTemporaryFile() as handle:
        faiss.write_index(index._index, handle.name)
        return Path(handle.name).stat().st_size


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_kind(bed: TestBed, kind: str) -> list[dict]:
    index, build_s = filled_index(kind, bed.vectors)
    size = len(bed.vectors)
    common = {"distribution": bed.distribution, "size": size, "kind": kind, "build_s": round(build_s, 2),
              "index_bytes_per_identity": round(index_bytes(index) / size, 1)}
    rows = []
    for ef in EF_SEARCH if kind == "hnsw" else (None,):
        if ef is not None:
            index.ef_search = ef
        _, found = index.search(bed.queries, 5)
        if bed.truth is None:  # the exact index runs first and defines the truth
            bed.truth = found[:, 0]
        rows.append({**common, "ef_search": ef, "search_ms": round(median_search_ms(index, bed.queries), 3),
                     "recall_at_1": round(float(np.mean(found[:, 0] == bed.truth)), 4),
                     "peak_rss_mb": round(rss_mb(), 1)})
    return rows


def bench_gallery(size: int, photo: str) -> dict:
    """Bulk enrolment into a real gallery (SQLite + default exact index), then `identify` on a real photo."""
    vectors = uniform_bed(size).vectors
    with tempfile.TemporaryDirectory() as home:
        gallery = Gallery(Settings(home=Path(home), store_crops=False))
        start = time.perf_counter()
        for chunk in range(0, size, 20_000):
            gallery.add_embeddings([{"name": f"person {i}", "embedding": vectors[i]}
                                    for i in range(chunk, min(size, chunk + 20_000))])
        enrol_s = time.perf_counter() - start
        identify_ms = identify_latency_ms(gallery, photo)
        db_bytes = (Path(home) / "gallery.db").stat().st_size
        gallery.close()
    return {"size": size, "bulk_enrol_per_s": round(size / enrol_s, 1), "identify_ms_end_to_end": identify_ms,
            "database_bytes_per_identity": round(db_bytes / size, 1)}


def identify_latency_ms(gallery: Gallery, photo: str, repeats: int = 10) -> float:
    gallery.identify(photo)  # warm-up: model load, first allocation
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        gallery.identify(photo)
        samples.append(time.perf_counter() - begin)
    return round(1000 * statistics.median(samples), 1)


def photo_pipeline_ms(photo: str) -> float:
    with tempfile.TemporaryDirectory() as home:
        gallery = Gallery(Settings(home=Path(home), store_crops=False))
        gallery.add_embeddings([{"name": "someone", "embedding": uniform_bed(1).vectors[0]}])
        try:
            return identify_latency_ms(gallery, photo)
        finally:
            gallery.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    parser.add_argument("--distributions", nargs="+", default=["face-like", "uniform"])
    parser.add_argument("--kinds", nargs="+", default=["flat", "flat16", "hnsw"])
    parser.add_argument("--gallery-max", type=int, default=1_000_000)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--embeddings", type=Path, default=Path("runs/scale_lfw_embeddings.npz"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--tables", type=Path, help="print the README tables of an earlier --out file and stop")
    args = parser.parse_args()
    if args.tables:
        print(markdown_tables(json.loads(args.tables.read_text())))
        return
    photo = str(args.data / "lfw" / "Abdullah_Gul" / "Abdullah_Gul_0001.jpg")
    lfw = lfw_embeddings(args.data, args.embeddings) if "face-like" in args.distributions else {}
    results = {"index": [], "gallery": [], "photo_pipeline_ms": photo_pipeline_ms(photo)}
    print(json.dumps({"photo_pipeline_ms": results["photo_pipeline_ms"]}), flush=True)
    for size in args.sizes:
        for distribution in args.distributions:
            bed = face_like_bed(size, lfw) if distribution == "face-like" else uniform_bed(size)
            for kind in ["flat"] + [k for k in args.kinds if k != "flat"]:
                for row in bench_kind(bed, kind):
                    record(results["index"], row, args.out, results)
            del bed
            if distribution == args.distributions[0] and size <= args.gallery_max:
                record(results["gallery"], bench_gallery(size, photo), args.out, results)


def markdown_tables(results: dict, ef_shown=(128, 256, 512)) -> str:
    """The README's tables: one row per gallery size and kind of vectors (the JSON keeps every efSearch)."""
    rows: dict[tuple, dict] = {}
    for row in results["index"]:
        key = (row["size"], row["distribution"])
        entry = rows.setdefault(key, {})
        entry[(row["kind"], row["ef_search"])] = row
    ef_heads = " | ".join(f"hnsw ef {ef}: ms (recall@1)" for ef in ef_shown)
    lines = [f"| identities | vectors | flat ms | flat16 ms | {ef_heads} | hnsw build s | bytes/identity flat / hnsw |",
             "|---|---|---|---|" + "---|" * len(ef_shown) + "---|---|"]
    for (size, distribution), entry in rows.items():
        cells = [f"{size:,}", distribution]
        for kind in ("flat", "flat16"):
            cells.append(str(entry[(kind, None)]["search_ms"]) if (kind, None) in entry else "-")
        graph = [entry.get(("hnsw", ef)) for ef in ef_shown]
        cells += [f"{r['search_ms']} ({r['recall_at_1']:.3f})" if r else "-" for r in graph]
        built = next((r for r in graph if r), None)
        cells.append(str(built["build_s"]) if built else "-")
        flat_bytes = entry[("flat", None)]["index_bytes_per_identity"] if ("flat", None) in entry else 0
        cells.append(f"{flat_bytes:.0f} / {built['index_bytes_per_identity']:.0f}" if built else f"{flat_bytes:.0f} / -")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Photo pipeline alone (decode, detect, align, embed with flip TTA; 1-person gallery): "
                  f"{results['photo_pipeline_ms']} ms.", "",
              "| identities | bulk enrolment (faces/s) | identify ms end to end, exact index | database bytes/identity |",
              "|---|---|---|---|"]
    for row in results["gallery"]:
        lines.append(f"| {row['size']:,} | {row['bulk_enrol_per_s']:,.0f} | {row['identify_ms_end_to_end']} | "
                     f"{row['database_bytes_per_identity']:.0f} |")
    return "\n".join(lines)


def record(rows: list, row: dict, out: Path | None, results: dict) -> None:
    """Print a row as it is measured and rewrite the output file: a long run keeps what it measured so far."""
    print(json.dumps(row), flush=True)
    rows.append(row)
    if out:
        out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
