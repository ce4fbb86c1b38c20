"""Where the embedder's time goes on this CPU: onnxruntime's own per-node profile of the shipped model, one thread.

    python benchmarks/op_profile.py --out benchmarks/results/op_profile_<cpu>.json     # ~1 min

Why: the speed against the peer is a ratio of two libraries on one CPU; when it falls short (2.2x on an AVX2-only
EPYC, where int8 convolutions add pairs of products in 16 bits), this says what a faster model must cut. It runs
the app's own input (a batch of 2: the face and its mirror, as flip test-time augmentation does) on random
pixels (the time of a convolution does not depend on the values), and reports the share of each operator type
and of each stage of the ResNet18 trunk (`features.N` in the exported graph: 0 the stem, 4-7 the four stages).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

RUNS = 30


def profile(model_path: Path, runs: int = RUNS) -> dict:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_profiling = True
    scratch = tempfile.mkdtemp(prefix="op_profile-")
    options.profile_file_prefix = str(Path(scratch) / "profile")
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    batch = np.random.default_rng(0).uniform(-1, 1, (2, 3, 112, 112)).astype(np.float32)
    for _ in range(3):
        session.run(None, {name: batch})
    started = time.perf_counter()
    for _ in range(runs):
        session.run(None, {name: batch})
    ms_per_face = 1000 * (time.perf_counter() - started) / runs
    profile_file = Path(session.end_profiling())
    events = json.loads(profile_file.read_text())
    profile_file.unlink()
    Path(scratch).rmdir()
    by_operator, by_stage = collections.Counter(), collections.Counter()
    for event in events:
        if event.get("cat") != "Node":
            continue
        by_operator[event["args"].get("op_name", "?")] += event["dur"]
        stage = re.search(r"features\.(\d+)/", event["name"])
        by_stage[f"features.{stage.group(1)}" if stage else "head and the rest"] += event["dur"]
    total = sum(by_operator.values())
    return {"ms_per_face_with_flip_1_thread": round(ms_per_face, 2), "runs": runs,
            "share_by_operator": {op: round(t / total, 4) for op, t in by_operator.most_common()},
            "share_by_stage": {stage: round(t / total, 4) for stage, t in sorted(by_stage.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    model = Settings().model_path
    result = profile(model)
    print(json.dumps(result, indent=1))
    write_result(args.out, result, model, threads=1)


if __name__ == "__main__":
    main()
