"""Run Python under an emulated CPU without AVX-512 or VNNI (not a test module): Debian's qemu-user, `-cpu Haswell`
(AVX2 + FMA, as many servers and laptops still are).

onnxruntime picks its int8 kernels from CPUID, so under this emulation it runs the very kernels an AVX2-only
machine runs (the ones that saturate with 8-bit weights), slowly: ~1.6 s per face for the fused int8 graph.

    embeddings = fused_embeddings({"shipped": model_path}, {"lfw": crops})   # {"shipped/lfw": [N, 512]}

On a machine that is itself such a CPU (`host_is_one`), the same worker runs natively instead: the same kernels, on
real hardware, in seconds rather than minutes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

from facerec.cpu import describe_cpu

QEMU = shutil.which("qemu-x86_64")
CPU_MODEL = "Haswell"
REPO_ROOT = Path(__file__).resolve().parents[1]

# Runs under the emulator: every model's fused session (onnxruntime's default optimisations, one thread) on every
# input set, single view, saved to an npz as "<model>/<inputs>".
WORKER = """
import sys, numpy as np, onnxruntime as ort
models, inputs, out = sys.argv[1].split(","), np.load(sys.argv[2]), sys.argv[3]
print(" ".join(ort.get_available_providers()), flush=True)
results = {}
for spec in models:
    name, path = spec.split("=", 1)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for key in inputs.files:
        batch = inputs[key].transpose(0, 3, 1, 2).astype(np.float32)
        results[name + "/" + key] = np.concatenate(
            [session.run(None, {"images": batch[i:i + 8]})[0] for i in range(0, len(batch), 8)])
np.savez(out, **results)
"""


def available() -> bool:
    return QEMU is not None


def host_is_one() -> bool:
    """Whether this machine is itself an AVX2 CPU without AVX-512 and without VNNI (onnxruntime then picks the very
    kernels the emulation would)."""
    cpu = describe_cpu()
    return cpu.has("avx2") and not cpu.has("avx512f") and cpu.int8_dot_product == "no VNNI (16-bit pair sums)"


def fused_embeddings(models: dict[str, Path], inputs: dict[str, np.ndarray], timeout: int = 900,
                     native: bool = False) -> dict:
    """{f"{model}/{inputs}": unit embeddings [N, 512]} from each model's fused session on the emulated CPU (or, with
    `native`, on this one: meant for `host_is_one()` machines). One worker per model, all at once: each runs one
    thread, so on two cores two models take the time of one."""
    with tempfile.TemporaryDirectory(prefix="facerec-qemu-") as folder:
        np.savez(Path(folder) / "inputs.npz", **inputs)
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), sysconfig.get_paths()["purelib"]]),
                       "OMP_NUM_THREADS": "1"}
        python = os.path.realpath(sys.executable)  # the interpreter itself: qemu-user runs one binary, no venv shim
        emulator = [] if native else [QEMU, "-cpu", CPU_MODEL]
        inputs_file, outputs = Path(folder) / "inputs.npz", {name: Path(folder) / f"{name}.npz" for name in models}
        workers = [subprocess.Popen([*emulator, python, "-c", WORKER, f"{name}={path}", str(inputs_file),
                                     str(outputs[name])], env=environment, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE) for name, path in models.items()]
        try:
            for worker in workers:
                _stdout, stderr = worker.communicate(timeout=timeout)
                if worker.returncode:
                    raise subprocess.CalledProcessError(worker.returncode, worker.args, stderr=stderr)
        finally:
            for worker in workers:
                worker.kill()
        found = {}
        for out in outputs.values():
            with np.load(out) as saved:
                found.update({key: saved[key] / np.linalg.norm(saved[key], axis=1, keepdims=True)
                              for key in saved.files})
        return found


def native_or_emulated(in_ci: bool) -> bool:
    """Whether the AVX2-only runs go natively (this machine is such a CPU); skips the test when neither that nor
    qemu-user is at hand, and fails it under CI, where qemu-user must be."""
    import pytest

    native = host_is_one()
    if not native and not available():
        message = "qemu-user is not installed (apt-get install qemu-user), so no AVX2-only CPU can be emulated"
        if in_ci:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return native
