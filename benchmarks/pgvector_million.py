"""A million faces in facerec's own PostgreSQL gallery: identify's answers against exact search, latency, disk and
memory per face, and two replicas searching while a third process enrolls (#52's must-show, on the product).

    python benchmarks/pgvector_million.py --out benchmarks/results/pgvector_million.json

Unlike `pgvector_choices.py` (bare tables, one choice at a time), everything here is the product: a database made
by `facerec db upgrade` (embeddings as `halfvec(512)`, the projected HNSW index of
`facerec.storage.backends.projection`), faces loaded through `Enrollment.add_embeddings` (cohort statistics,
journal and all) with the index dropped and built once afterwards, as a bulk import would, and searched through
`Search.search` with the threshold `GalleryThresholds` puts in force for this gallery: identify's decision on an
embedding. The faces are `pgvector_choices.py`'s (every celeba112 and LFW photo, the rest `face-like` padding;
300 held-out celeba112 photos of enrolled people as queries).

- **Final answer**: the product's answer (a name, or unknown) for each query against the same decision made
  from exact float32 search (the 50 nearest faces by cosine over the float32 embeddings, cohort-normalised, best
  person if at the same threshold).
- **Latency**: one query at a time, after a warm pass: the engine's search alone and the whole decision, p50/p99,
  with PostgreSQL's default `shared_buffers` and with one that holds the index (`--shared-buffers`).
- **Disk and memory per face**: the database's size over its faces, each relation's share; the index is what a
  search walks (what `shared_buffers` should hold).
- **Replicas**: two processes, each a gallery opened on the database as an app replica, decide queries one after
  another for `--seconds` while a third enrolls one face at a time; p50/p99 per replica beside the enrollments
  done. (identify on a photo adds the photo pipeline, the same at any gallery size: `benchmarks/speed.py`.)

The loaded database is kept in `--pgdata` (a rerun with the same size reuses it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from pgvector_choices import CANDIDATES, Judge, Server, bed_arguments, bed_from  # noqa: E402

from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.storage import upgrade  # noqa: E402
from facerec.storage.backends.projection import VECTOR_INDEX, vector_index_ddl  # noqa: E402
import facerec.vectors.pgvector as pgvector  # noqa: E402
from facerec.vectors.pgvector.projection import model_projection  # noqa: E402

DATABASE, LOAD_CHUNK, LOADED_KEY = "million", 20_000, "benchmark_loaded"
PRODUCT_REFINE_FACTOR = pgvector.REFINE_FACTOR

REPLICA = """
import json, sys, time
import numpy as np
from pathlib import Path
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings
url, home, role, seconds, vectors = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), np.load(sys.argv[5])
gallery = Gallery(Settings(home=Path(home), database_url=url, store_crops=False, index_kind="pgvector"))
parts = parts_of(gallery)
parts.searching.search(vectors[:1], top_k=1)  # the gallery's first search measures its stranger tail: not timed
parts.thresholds.synced(with_people=True)
samples, done, start = [], 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    vector = vectors[done % len(vectors)]
    began = time.perf_counter()
    if role == "search":
        best = parts.searching.search(vector[None], top_k=1)[0]
        rule = parts.thresholds.synced(with_people=True)
    else:
        parts.enrollment.add_embeddings([{"name": f"writer {time.time_ns()}", "embedding": vector}])
    samples.append(time.perf_counter() - began)
    done += 1
gallery.close()
print(json.dumps({"role": role, "done": done, "samples": samples}))
"""


def name_of(person: str) -> str:
    return person.replace(":", " ").replace("_", " ")


def database_url(server: Server) -> str:
    return f"postgresql+psycopg://postgres@/{DATABASE}?host={server.folder / 'pgdata'}"


def load(server: Server, vectors: np.ndarray, person: np.ndarray, home: Path) -> dict:
    """The gallery, loaded through the product once (kept for reruns): load and build times."""
    exists = server.connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
    url = database_url(server)
    if exists:
        with Gallery(Settings(home=home, database_url=url, store_crops=False, index_kind="pgvector")) as gallery:
            with parts_of(gallery).store.read_engine.connect() as connection:
                loaded = connection.exec_driver_sql(f"SELECT value FROM settings WHERE key = '{LOADED_KEY}'").scalar()
            if loaded:
                return json.loads(loaded)
        server.connection.execute(f"DROP DATABASE {DATABASE}")
    server.connection.execute(f"CREATE DATABASE {DATABASE}")
    upgrade(url, model_projection(Settings()))
    with Gallery(Settings(home=home, database_url=url, store_crops=False, index_kind="pgvector")) as gallery:
        parts = parts_of(gallery)
        with parts.store.write_engine.begin() as connection:
            connection.exec_driver_sql(f"DROP INDEX {VECTOR_INDEX}")
        start = time.perf_counter()
        for chunk in range(0, len(vectors), LOAD_CHUNK):
            rows = range(chunk, min(len(vectors), chunk + LOAD_CHUNK))
            parts.enrollment.add_embeddings([{"name": name_of(person[i]), "embedding": vectors[i]} for i in rows])
        load_s = time.perf_counter() - start
        print(json.dumps({"loaded": len(vectors), "load_s": round(load_s, 1)}), flush=True)
        start = time.perf_counter()
        with parts.store.write_engine.connect() as connection:
            connection.exec_driver_sql("SET maintenance_work_mem = '4GB'")
            connection.exec_driver_sql("SET max_parallel_maintenance_workers = 1")  # two cores here
            connection.exec_driver_sql(vector_index_ddl())
            connection.commit()
        timing = {"load_s": round(load_s, 1), "build_s": round(time.perf_counter() - start, 1)}
        with parts.store.write_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("VACUUM ANALYZE")
            connection.exec_driver_sql("INSERT INTO settings (key, value) VALUES (%(key)s, %(value)s)",
                                       {"key": LOADED_KEY, "value": json.dumps(timing)})
    return timing


def sizes(server: Server, faces: int) -> dict:
    """Bytes per face: the whole database, the index, and each relation with at least 1% of it."""
    rows = psql(server, "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON "
                        "n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't', 'm')")
    total = int(psql(server, "SELECT pg_database_size(current_database())")[0][0])
    return {"disk_bytes_per_face": round(total / faces, 1),
            "index_bytes_per_face": round(dict(rows)[VECTOR_INDEX] / faces, 1),
            "relations_bytes_per_face": {name: round(size / faces, 1) for name, size in
                                         sorted(rows, key=lambda r: -r[1]) if size >= 0.01 * total}}


def psql(server: Server, statement: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(f"postgresql://postgres@/{DATABASE}?host={server.folder / 'pgdata'}") as connection:
        cursor = connection.execute(statement)
        return cursor.fetchall() if cursor.description else []


def single_client(url: str, home: Path, queries: np.ndarray, truth, judge: Judge, ef_search: int,
                  refine_factor: int) -> dict:
    """Final-answer agreement and p50/p99 of the engine's search and of the whole decision, one query at a time,
    with the graph proposing `refine_factor` candidates per face asked for."""
    pgvector.REFINE_FACTOR = refine_factor
    with Gallery(Settings(home=home, database_url=url, store_crops=False, index_kind="pgvector",
                          hnsw_ef_search=ef_search)) as gallery:
        parts = parts_of(gallery)
        rule = parts.thresholds.synced(with_people=True)
        judge.rule = rule
        def decide(query: np.ndarray) -> str | None:
            best = parts.searching.search(query[None], top_k=1)[0]
            in_force = parts.thresholds.synced(with_people=True).threshold
            return best[0].name if best and best[0].score >= in_force else None

        engine = timed(lambda query: parts.index.search(query[None], CANDIDATES), queries)
        whole = timed(decide, queries)  # its own passes: a search just made would have warmed the pages
        answers = [decide(query) for query in queries]
        exact = [judge.answer(number, *truth[number]) for number in range(len(queries))]
        agree = sum(a == (None if e is None else name_of(e)) for a, e in zip(answers, exact))
        named = sum(a is not None for a in answers)
    return {"ef_search": ef_search, "refine_factor": refine_factor, "threshold": round(rule.threshold, 4),
            "final_answer_agreement": round(agree / len(queries), 4), "named": named,
            **percentiles("search", engine), **percentiles("decision", whole)}


def timed(call, queries: np.ndarray) -> list[float]:
    """Seconds per query of `call`, one query at a time, after a first pass that warms the pages it walks."""
    samples = []
    for rep in range(2):
        for query in queries:
            start = time.perf_counter()
            call(query)
            if rep:
                samples.append(time.perf_counter() - start)
    return samples


def percentiles(name: str, samples: list[float]) -> dict:
    return {f"{name}_p50_ms": round(1000 * statistics.median(samples), 2),
            f"{name}_p99_ms": round(1000 * float(np.percentile(samples, 99)), 2)}


def replicas(url: str, queries: np.ndarray, writes: np.ndarray, seconds: float) -> dict:
    """Two searching replicas and one enrolling process at once."""
    with tempfile.TemporaryDirectory() as folder:
        np.save(f"{folder}/queries.npy", queries)
        np.save(f"{folder}/writes.npy", writes)
        roles = [("search", "queries"), ("search", "queries"), ("enroll", "writes")]
        processes = [subprocess.Popen([sys.executable, "-c", REPLICA, url, f"{folder}/home{i}", role, str(seconds),
                                       f"{folder}/{data}.npy"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
                     for i, (role, data) in enumerate(roles)]
        results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in processes]
    searches = [r for r in results if r["role"] == "search"]
    writer = next(r for r in results if r["role"] == "enroll")
    return {"seconds": seconds, "replicas": [{"decisions": r["done"], **percentiles("decision", r["samples"])}
                                             for r in searches],
            "enrolled": writer["done"], **percentiles("enroll", writer["samples"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bed_arguments(parser)
    parser.add_argument("--shared-buffers", nargs="+", default=["128MB", "1GB", "2GB"])
    parser.add_argument("--ef-search", type=int, nargs="+", default=[Settings().hnsw_ef_search])
    parser.add_argument("--refine-factors", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--pgdata", type=Path, default=Path("cache/pgvector-million"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    vectors, person, queries, _celeba, truth, judge = bed_from(args)
    server = Server(args.pgdata)
    server.shared_buffers(args.shared_buffers[0])
    home = Path(tempfile.mkdtemp())
    result = {"size": args.size, "queries": len(queries), "candidates": CANDIDATES,
              **load(server, vectors, person, home), **sizes(server, args.size), "rows": []}
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}), flush=True)
    url = database_url(server)
    for buffers in args.shared_buffers:
        server.shared_buffers(buffers)
        for ef_search in args.ef_search:
            for factor in args.refine_factors:
                row = {"shared_buffers": buffers, **single_client(url, home, queries, truth, judge, ef_search, factor)}
                print(json.dumps(row), flush=True)
                result["rows"].append(row)
                write_result(args.out, result, Settings().model_path, threads=0)
    pgvector.REFINE_FACTOR = PRODUCT_REFINE_FACTOR
    rng = np.random.default_rng(7)
    writes = vectors[rng.choice(len(vectors), 2000, replace=False)]  # enrolled again under new names
    result["replicas"] = {"shared_buffers": args.shared_buffers[-1], "refine_factor": PRODUCT_REFINE_FACTOR,
                          **replicas(url, queries, writes, args.seconds)}
    print(json.dumps(result["replicas"]), flush=True)
    write_result(args.out, result, Settings().model_path, threads=0)
    psql(server, "DELETE FROM identities WHERE name LIKE 'writer %'")  # the kept gallery stays as loaded


if __name__ == "__main__":
    main()
