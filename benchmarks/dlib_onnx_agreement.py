"""dlib's face ResNet as facerec's ONNX conversion against dlib's own runtime: same faces, one run, one thread.

    pip install --no-deps face_recognition "setuptools<81"     # the peer, for its timing only (train extra has dlib)
    python benchmarks/dlib_onnx_agreement.py --data ../shared/data --faces 1000 \
        --out benchmarks/results/dlib_onnx_agreement.json

Each LFW photo (people with 3 or more photos, name then file order: no evaluation person is read) goes through
dlib's own front end as `face_recognition` runs it: the HOG detector (one upsampling), the face nearest the
centre, the 5-point shape predictor. Then, on that shape:
- dlib: `compute_face_descriptor(image, shape)` (no jitter, padding 0.25): dlib's chip and its network;
- facerec: `dlib.get_face_chip(image, shape, 150, 0.25)` (the same chip) and the converted graph in onnxruntime
  (`facerec.packs.dlib_resnet`), fp32, the graph's optimisations on;
- face_recognition: `face_encodings(image, [box])`, the peer's public call (shape predictor + descriptor), when it
  is installed.
The cosine and the largest absolute difference of the raw 128-d descriptors are reported (min / median / max),
with ms per face of each path, interleaved face by face so load on the machine hits all alike.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.packs.dlib_resnet import convert  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.packs.dlib_files import dlib_model_folder  # noqa: E402


def training_people_photos(lfw: Path) -> list[Path]:
    """LFW photos of people with 3 or more photos (never the one-shot evaluation people), name then file order."""
    return [photo for name, photos in sorted(list_identities(lfw).items()) if len(photos) >= 3 for photo in photos]


def central(boxes, width: int, height: int):
    """The dlib rectangle nearest the photo's centre (the face a one-face photo means)."""
    return min(boxes, key=lambda b: ((b.left() + b.right()) / 2 - width / 2) ** 2
               + ((b.top() + b.bottom()) / 2 - height / 2) ** 2)


def summary(values: list[float]) -> dict:
    array = np.asarray(values, np.float64)
    return {"min": float(array.min()), "median": float(np.median(array)), "max": float(array.max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--faces", type=int, default=1000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import dlib
    import onnxruntime as ort

    folder = dlib_model_folder()
    network_file = folder / "dlib_face_recognition_resnet_model_v1.dat"
    onnx_file = convert(network_file, Path(tempfile.mkdtemp()) / "dlib_resnet.onnx")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
    detector = dlib.get_frontal_face_detector()
    predictor = dlib.shape_predictor(str(folder / "shape_predictor_5_face_landmarks.dat"))
    network = dlib.face_recognition_model_v1(str(network_file))
    try:
        import face_recognition
    except ImportError:
        face_recognition = None

    cosines, differences = [], []
    seconds = {"dlib_descriptor": 0.0, "facerec_chip": 0.0, "facerec_onnx": 0.0, "face_recognition_encoding": 0.0}
    photos_read = 0
    for path in training_people_photos(Path(args.data) / "lfw"):
        if len(cosines) >= args.faces:
            break
        image = np.asarray(Image.open(path).convert("RGB"))
        photos_read += 1
        boxes = detector(image, 1)
        if not boxes:
            continue
        box = central(boxes, image.shape[1], image.shape[0])
        shape = predictor(image, box)
        start = time.perf_counter()
        theirs = np.asarray(network.compute_face_descriptor(image, shape), np.float64)
        seconds["dlib_descriptor"] += time.perf_counter() - start
        start = time.perf_counter()
        chip = np.asarray(dlib.get_face_chip(image, shape, size=150, padding=0.25))
        seconds["facerec_chip"] += time.perf_counter() - start
        start = time.perf_counter()
        ours = session.run(None, {"images": chip.transpose(2, 0, 1)[None].astype(np.float32)})[0][0].astype(np.float64)
        seconds["facerec_onnx"] += time.perf_counter() - start
        if face_recognition is not None:
            location = [(box.top(), box.right(), box.bottom(), box.left())]
            start = time.perf_counter()
            face_recognition.face_encodings(image, location)
            seconds["face_recognition_encoding"] += time.perf_counter() - start
        cosines.append(float(ours @ theirs / np.linalg.norm(ours) / np.linalg.norm(theirs)))
        differences.append(float(np.abs(ours - theirs).max()))

    faces = len(cosines)
    ms = {name: round(1000 * total / faces, 3) for name, total in seconds.items()}
    if face_recognition is None:
        ms.pop("face_recognition_encoding")
    ms["facerec_chip_and_onnx"] = round(ms["facerec_chip"] + ms["facerec_onnx"], 3)
    result = {
        "what": "dlib's face ResNet: facerec's ONNX conversion vs dlib's own runtime, same faces and shapes",
        "faces": faces, "photos_read": photos_read,
        "photos": "LFW people with 3 or more photos, name then file order (no one-shot evaluation person)",
        "front_end": "dlib HOG detector (1 upsampling), face nearest the centre, 5-point shape predictor",
        "cosine": summary(cosines), "max_abs_difference": summary(differences),
        "ms_per_face_one_thread": ms,
        "speedup_descriptor": round(ms["dlib_descriptor"] / ms["facerec_chip_and_onnx"], 2),
        "dlib": dlib.__version__, "onnx_sha256_note": "the graph is rebuilt from dlib's file on every run",
    }
    written = write_result(args.out, result, onnx_file, 1)
    print({k: written[k] for k in ("faces", "cosine", "max_abs_difference", "ms_per_face_one_thread")})


if __name__ == "__main__":
    main()
