"""Every model pack gives the same answers on an AVX2 CPU without AVX-512 or VNNI (#61): each pack's whole path
(its detector, landmarks, alignment, network(s), the self-check) on LFW photos here and under qemu-user's Haswell
without TSX (or natively, when this machine is such a CPU), compared face by face: the same face found, the
embeddings within MIN_COSINE.

What differs between CPUs is onnxruntime's kernels, which it picks from CPUID: the emulation runs those (every
network, facerec's and dlib's detector and ResNet, is run by onnxruntime). dlib's own code (the public-domain and
fused packs' landmarks and chip) is compiled for AVX without FMA or AVX-512 and has no CPU dispatch of its own
(`objdump -d _dlib_pybind11*.so | grep -c zmm`: 0), so it runs the same instructions on every AVX2 CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import emulated_cpu
from facerec.packs.catalog import PACKS
from ci_environment import in_ci

# Haswell (AVX2, FMA; no AVX-512, no VNNI) without TSX, which qemu cannot emulate (as Intel's microcode now ships them):
CPU_MODEL = "Haswell-noTSX"
PHOTOS = 3  # the first photo of the first three LFW people (about a minute a pack under emulation)
MIN_COSINE = 0.999

WORKER = """
import sys, numpy as np
from facerec.faces.choice import central_face
from facerec.faces.pipeline import FacePipeline
from facerec.settings import Settings, pack_file
pack, out, photos = sys.argv[1], sys.argv[2], sys.argv[3:]
pipeline = FacePipeline(Settings(model_path=pack_file(pack), num_threads=1))
boxes, vectors = [], []
for path in photos:
    photo = pipeline.read(path)
    face = central_face(pipeline.detect(photo), photo.pixels.shape)
    boxes.append(face.box)
    vectors.append(pipeline.embed(photo, [face])[1][0])
np.savez(out, boxes=np.array(boxes), vectors=np.array(vectors))
"""


def pack_answers(pack: str, photos: list[Path], out: Path, emulated: bool) -> tuple[np.ndarray, np.ndarray]:
    """(boxes [N, 4], embeddings [N, 512]) of the central face of each photo, by the pack's whole path."""
    environment = {**os.environ, "OMP_NUM_THREADS": "1",
                   "PYTHONPATH": os.pathsep.join([str(emulated_cpu.REPO_ROOT), sysconfig.get_paths()["purelib"]])}
    emulator = [emulated_cpu.QEMU, "-cpu", CPU_MODEL] if emulated else []
    subprocess.run([*emulator, os.path.realpath(sys.executable), "-c", WORKER, pack, str(out), *map(str, photos)],
                   env=environment, check=True, capture_output=True, timeout=900, cwd=emulated_cpu.REPO_ROOT)
    with np.load(out) as saved:
        return saved["boxes"], saved["vectors"]


@pytest.mark.parametrize("pack", list(PACKS))
def test_every_pack_embeds_alike_on_an_avx2_cpu(pack: str, lfw: Path, tmp_path: Path) -> None:
    native = emulated_cpu.native_or_emulated(in_ci())
    photos = [sorted((lfw / name).iterdir())[0] for name in sorted(p.name for p in lfw.iterdir())[:PHOTOS]]
    boxes_here, here = pack_answers(pack, photos, tmp_path / "here.npz", emulated=False)
    boxes_there, there = pack_answers(pack, photos, tmp_path / "there.npz", emulated=not native)
    assert np.abs(boxes_here - boxes_there).max() <= 1.0, (pack, boxes_here, boxes_there)
    cosines = (here * there).sum(axis=1)
    assert cosines.min() >= MIN_COSINE, (pack, cosines)
