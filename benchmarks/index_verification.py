"""What opening a saved index costs now that every vector is compared with the database (#48 row 11).

    python benchmarks/index_verification.py --out benchmarks/results/index_verification.json

A SQLite gallery of `--faces` faces (random unit vectors: the cost depends on the count, not on the faces) with
its saved index of each kind: the time to open it (load, replay, and the comparison of every vector with the
database's), the comparison alone, and a rebuild from the database (what opening costs without a saved index, or
with one the database cannot vouch for). Median of `--repeats`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.storage import Store  # noqa: E402
from facerec.vectors import index_integrity  # noqa: E402
from facerec.vectors.faiss import open_faiss_index  # noqa: E402

MODEL_ID = "benchmark"
BATCH = 20_000


def fill(store: Store, count: int, seed: int = 0) -> None:
    """`count` faces of `count` people, in batches of BATCH per write."""
    rng = np.random.default_rng(seed)
    now = datetime.now(timezone.utc)
    for start in range(0, count, BATCH):
        size = min(BATCH, count - start)
        vectors = rng.standard_normal((size, 512)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with store.transaction() as session:
            people = store.people.create(session, [{"name": f"person {start + i}"} for i in range(size)], now)
            store.faces.add_many(session, [
                {"identity_id": people[f"person {start + i}"], "embedding": vector, "model_id": MODEL_ID,
                 "photo_sha256": f"{start + i:064d}", "box": [0, 0, 1, 1], "landmarks": [[0, 0]] * 5,
                 "crop_jpeg": None, "cohort_mean": 0.0, "cohort_sd": 1.0} for i, vector in enumerate(vectors)], now)


def seconds(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def measure(folder: Path, store: Store, kind: str, repeats: int) -> dict:
    index = open_faiss_index(folder, store, MODEL_ID, kind)  # no saved index yet: built from the database
    rebuild = [seconds(lambda: index.rebuild(store)) for _ in range(repeats)]
    index.close(store)
    opened, compared = [], []
    for _ in range(repeats):
        holder = {}
        opened.append(seconds(lambda: holder.setdefault("index", open_faiss_index(folder, store, MODEL_ID, kind))))
        reopened = holder["index"]
        assert reopened.notice is None, reopened.notice  # loaded, not rebuilt
        compared.append(seconds(lambda: index_integrity.check_against_database(
            reopened.engine.ids(), reopened.engine.vectors, store)))
        reopened.close(store)  # nothing changed: not saved again
    return {"kind": kind, "open_s": round(statistics.median(opened), 3),
            "vector_check_s": round(statistics.median(compared), 3),
            "rebuild_s": round(statistics.median(rebuild), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="benchmarks/results/index_verification.json")
    parser.add_argument("--faces", type=int, default=100_000)
    parser.add_argument("--kinds", default="flat,flat16")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        store = Store(f"sqlite:///{folder / 'gallery.db'}")
        try:
            fill(store, args.faces)
            kinds = [measure(folder, store, kind, args.repeats) for kind in args.kinds.split(",")]
        finally:
            store.dispose()
        database_mb = round((folder / "gallery.db").stat().st_size / 2**20, 1)
    result = {"faces": args.faces, "database_mb": database_mb, "repeats": args.repeats, "kinds": kinds,
              "note": "open_s includes vector_check_s; rebuild_s is what opening costs when the index is rebuilt"}
    written = write_result(args.out, result, Settings().model_path, None)
    print({k: v for k, v in written.items() if k != "provenance"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
