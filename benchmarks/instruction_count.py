"""Instructions per face, facerec vs face_recognition (dlib), counted by valgrind on its AVX2 CPU (no AVX-512).

    python benchmarks/instruction_count.py --out benchmarks/results/instruction_count.json [--model OTHER.onnx]

Why: a real AVX2-only machine is not always at hand, and an emulator's timing means nothing. valgrind executes real
instructions and reports a CPU without AVX-512 (so onnxruntime picks the same AVX2 int8 kernels an AVX2-only machine
runs, those without VNNI), and callgrind counts the instructions each library executes to embed a face: a proxy
for the speed ratio there, not a measurement of it (an int8 multiply-add and an fp32 FMA instruction take about the
same time on current x86 cores, but not exactly). The count is the difference between embedding `--faces` + 1 and
one face, in one process per library, so start-up and model loading cancel out. The faces: aligned LFW crops of the
first photos of the first people, facerec's own detection handing face_recognition the same boxes, as
`benchmarks/peer.py` does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

# Run under valgrind: embed the first `count` photos' central faces with one library, one thread, flip as shipped.
WORKER = """
import os, sys
os.environ["OMP_NUM_THREADS"] = "1"
sys.path.insert(0, sys.argv[4])
from pathlib import Path
import numpy as np
from facerec.faces.align import align_face
from facerec.faces.choice import central_face
from facerec.faces.pipeline import FacePipeline
from facerec.settings import Settings
library, count, photos = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")[: int(sys.argv[2])]
pipeline = FacePipeline(Settings(num_threads=1, model_path=Path(sys.argv[5])))
faces = []
for path in photos:
    photo = pipeline.read(path)
    faces.append((photo, central_face(pipeline.detect(photo), photo.pixels.shape)))
if library == "facerec":
    pipeline.embedder.self_check  # the check runs before the counted part, as it runs once per process
    pipeline.embedder.embed(np.zeros((1, 112, 112, 3), np.uint8))  # sessions built outside the counted part
else:
    import face_recognition
    face_recognition.face_encodings(faces[0][0].pixels, known_face_locations=[(0, 50, 50, 0)])
for photo, face in faces:
    if library == "facerec":
        pipeline.embedder.embed(align_face(photo.pixels, face.landmarks)[None])
    else:
        x1, y1, x2, y2 = (int(round(v)) for v in face.box)
        face_recognition.face_encodings(photo.pixels, known_face_locations=[(y1, x2, y2, x1)])
"""


def instructions(library: str, count: int, photos: list[str], folder: Path, model: Path) -> int:
    """Instructions executed by one worker process embedding `count` faces (valgrind's callgrind total)."""
    out = folder / f"callgrind.{library}.{count}"
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", WORKER,
                    library, str(count), ",".join(photos), str(ROOT), str(model)], env=environment, check=True,
                   capture_output=True, timeout=3600)
    summary = re.search(r"^summary:\s+(\d+)", out.read_text(errors="replace"), re.M)
    return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--faces", type=int, default=5)
    parser.add_argument("--model", type=Path, help="the ONNX embedder to count (default: the shipped model)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    model = args.model or Settings().model_path
    lfw = Path(args.data) / "lfw"
    photos = [str(sorted((lfw / person).iterdir())[0]) for person in sorted(os.listdir(lfw))[: args.faces + 1]]
    counts = {}
    with tempfile.TemporaryDirectory(prefix="facerec-callgrind-") as folder:
        for library in ("facerec", "face_recognition"):
            many, one = (instructions(library, n, photos, Path(folder), model) for n in (args.faces + 1, 1))
            counts[library] = (many - one) / args.faces
    result = {"faces": args.faces, "instructions_per_face": counts,
              "ratio_face_recognition_over_facerec": counts["face_recognition"] / counts["facerec"],
              "cpu_as_valgrind_reports_it": "x86-64 with AVX2 and FMA, no AVX-512 (valgrind 3.19 hides it)",
              "note": "an estimate of the speed ratio on an AVX2-only CPU, not a timing"}
    print(json.dumps(result, indent=1))
    write_result(args.out, result, model, threads=1)


if __name__ == "__main__":
    main()
