"""Where a figure came from: the model file, the code, the processor, the threads and the day.

The same commit gave LFW one-shot 0.859 on one CPU and 0.810 on another, and nothing in the results said which
machine had measured what. Every results file (`facerec eval --json`, `benchmarks/*.py`) now carries this record,
and the model card refuses a results file measured on another model file.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import subprocess
from pathlib import Path

from facerec.cpu import describe_cpu

REPO_ROOT = Path(__file__).resolve().parents[1]


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file, read in 4 MiB blocks (index files can hold gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


# What measuring writes (results, the card, calibrations): a change there is not a change of the measuring code.
MEASUREMENT_OUTPUTS = (":(exclude)benchmarks/results", ":(exclude)models/*.json", ":(exclude)models/training")


def commit() -> str:
    """The checkout's commit, with '+changes' when tracked files other than measurement outputs differ from it;
    'unknown' outside git."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", *MEASUREMENT_OUTPUTS], capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def provenance(model_path: str | Path | None, threads: int | None, embedder=None) -> dict:
    """The record a results file carries. `threads`: the onnxruntime/BLAS threads the measurement used (0 = all
    cores); `embedder` (a `facerec.faces.embed.FaceEmbedder`): adds which path it ran (fused kernels or exact graph)."""
    import onnxruntime

    record = {"model_sha256": file_sha256(model_path) if model_path else None,
              "model_file": Path(model_path).name if model_path else None,
              "commit": commit(), "cpu": describe_cpu().to_dict(), "threads": threads,
              "onnxruntime": onnxruntime.__version__,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if embedder is not None:
        record["embedder"] = embedder.self_check.to_dict()
    return record


def write_result(path: str | Path, result: dict, model_path: str | Path | None, threads: int | None,
                 embedder=None) -> dict:
    """Write `result` as JSON to `path` with its `provenance` record; returns what was written."""
    result = {**result, "provenance": provenance(model_path, threads, embedder)}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(result, indent=1) + "\n")
    return result
