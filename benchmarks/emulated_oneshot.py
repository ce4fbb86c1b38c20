"""LFW one-shot rank-1 with the embedder on an emulated CPU (qemu-user), beside the same run on this CPU.

    apt-get install qemu-user
    python benchmarks/emulated_oneshot.py --cpu Haswell --workers 2 --out benchmarks/results/eval_lfw2_emulated_haswell.json

Why: the embedder's fused int8 kernels are what differ between processors (`facerec.faces.embedder_check`); detection and
alignment are fp32, the same on every CPU to rounding. So the protocol of `facerec eval ../shared/data/lfw
--max-per-identity 2` (seed 51: 779 people enrolled from one photo, their other photo queried, 1-NN) is run with
the CLI's own steps (`facerec.evaluation.embedding.embed_photos`: decode, detect, central face, align), the crops are
embedded by `FaceEmbedder` (flip, the shipped card's self-check included) once here and once under
`qemu-x86_64 -cpu MODEL` (Haswell: AVX2 + FMA, no AVX-512, no VNNI), and both are scored the same way. Emulation is
slow (~3 s per face with flip, one thread per worker): about 45 minutes with two workers. Speed under emulation
means nothing and is not reported.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.evaluation.embedding import embed_photos  # noqa: E402
from facerec.evaluation.oneshot import plan_protocol  # noqa: E402
from facerec.faces.pipeline import FacePipeline  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

# Runs under the emulator: FaceEmbedder (the shipped settings: flip, self-check) on one chunk of crops.
WORKER = """
import json, sys, numpy as np
from facerec.faces.embed import FaceEmbedder
from facerec.settings import Settings
embedder = FaceEmbedder(Settings().model_path, num_threads=1)
np.save(sys.argv[2], embedder.embed(np.load(sys.argv[1])))
print(json.dumps(embedder.self_check.to_dict()), flush=True)
"""


class CropRecorder:
    """Stands in for the embedder inside `embed_photos`: keeps the aligned crops, returns placeholders."""

    def __init__(self) -> None:
        self.crops: list[np.ndarray] = []

    def embed(self, faces: np.ndarray) -> np.ndarray:
        self.crops.extend(faces)
        return np.zeros((len(faces), 512), np.float32)


def protocol_crops(lfw: Path) -> tuple[np.ndarray, int, int]:
    """(crops [2N, 112, 112, 3]: the N enrolled photos then their N queries, N, detection failures)."""
    enrolled, queries, _ = plan_protocol(lfw, 2, False, 51)
    query_of = dict(queries)
    paths = [enrolled[name] for name in enrolled] + [query_of[name] for name in enrolled]
    pipeline = FacePipeline(Settings())
    recorder = CropRecorder()
    pipeline.embedder = recorder
    photos = embed_photos(pipeline, paths)
    return np.stack(recorder.crops), len(enrolled), len(photos.detection_failures)


def emulated_embeddings(crops: np.ndarray, cpu: str, workers: int) -> tuple[np.ndarray, list[dict]]:
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        raise SystemExit("qemu-x86_64 not found: apt-get install qemu-user")
    environment = {**os.environ, "OMP_NUM_THREADS": "1",
                   "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])}
    with tempfile.TemporaryDirectory(prefix="facerec-emulated-") as folder:
        running = []
        for i, chunk in enumerate(np.array_split(crops, workers)):
            np.save(Path(folder) / f"in{i}.npy", chunk)
            running.append(subprocess.Popen(
                [qemu, "-cpu", cpu, os.path.realpath(sys.executable), "-c", WORKER, str(Path(folder) / f"in{i}.npy"),
                 str(Path(folder) / f"out{i}.npy")], env=environment, stdout=subprocess.PIPE, text=True))
        checks = []
        for process in running:
            output, _ = process.communicate()
            if process.returncode != 0:
                raise SystemExit(f"the emulated embedder failed (exit {process.returncode})")
            checks.append(__import__("json").loads(output.strip().splitlines()[-1]))
        return np.concatenate([np.load(Path(folder) / f"out{i}.npy") for i in range(workers)]), checks


def rank1(embeddings: np.ndarray, people: int) -> float:
    """1-NN over the enrolled photos (rows :people) for the queries (rows people:), as `facerec eval` ranks."""
    best = (embeddings[people:] @ embeddings[:people].T).argmax(axis=1)
    return float(np.mean(best == np.arange(people)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--cpu", default="Haswell", help="qemu's CPU model (qemu-x86_64 -cpu help)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    crops, people, failures = protocol_crops(Path(args.data) / "lfw")
    native_embedder = FaceEmbedder(Settings().model_path, num_threads=1)
    native = native_embedder.embed(crops)
    emulated, checks = emulated_embeddings(crops, args.cpu, args.workers)
    cosines = (native * emulated).sum(axis=1)
    result = {"protocol": "LFW one-shot, 779 people with exactly 2 photos (seed 51), no distractors; the CLI's "
                          "detection and alignment here, the embedder (flip) on each CPU",
              "people": people, "queries": people, "detection_failures": failures,
              "emulated": {"qemu_cpu": args.cpu, "rank1": rank1(emulated, people),
                           # qemu-user shows the host's /proc/cpuinfo: the check's own CPU line names the host
                           "self_check": {**checks[0], "cpu": f"qemu-user -cpu {args.cpu} (emulated)"}},
              "this_cpu": {"rank1": rank1(native, people), "self_check": native_embedder.self_check.to_dict()},
              "cosine_emulated_vs_this_cpu": {"min": float(cosines.min()), "median": float(np.median(cosines))}}
    print(result)
    write_result(args.out, result, Settings().model_path, threads=1, embedder=native_embedder)


if __name__ == "__main__":
    main()
