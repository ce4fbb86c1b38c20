"""LFW one-shot with public-domain parts only: dlib's HOG detector, its 5-point landmarks, its chip, and its ResNet
run as facerec's ONNX conversion (`facerec.packs.dlib_resnet`), with and without the mirrored chip averaged in.

    python benchmarks/public_domain_oneshot.py --data ../shared/data --out benchmarks/results/public_domain_oneshot.json

The protocol of `../shared/data/README.md`: the 779 people with exactly two photos, the enrolled photo drawn with
seed 51, the other searched; a second run adds the 4,069 one-photo people as distractors. Every photo goes through
the HOG detector with one upsampling, then two where it found nothing; the face nearest the centre is taken. A
photo where neither finds a face is a miss (a query without a face is a wrong answer; an enrolled photo without
one leaves that person unfindable), so the figures are of the whole public-domain front end, not only its network.
Ranked by Euclidean distance of raw descriptors (dlib's own metric) and by cosine of descriptors centred on the
gallery's mean (facerec's); photos are embedded by two worker processes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from multiprocessing import Pool
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.evaluation.oneshot import plan_protocol  # noqa: E402
from facerec.packs.dlib_files import dlib_model_folder  # noqa: E402
from facerec.packs.dlib_resnet import convert  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from dlib_onnx_agreement import central  # noqa: E402

_worker = None


def _start(onnx_file: str) -> None:
    global _worker
    import dlib
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    _worker = (dlib, dlib.get_frontal_face_detector(),
               dlib.shape_predictor(str(dlib_model_folder() / "shape_predictor_5_face_landmarks.dat")),
               ort.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"]))


def _describe(path: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(descriptor, descriptor of the mirrored chip) of the face nearest the centre, or None without a face."""
    dlib, detector, predictor, session = _worker
    image = np.asarray(Image.open(path).convert("RGB"))
    boxes = detector(image, 1) or detector(image, 2)
    if not boxes:
        return None
    box = central(boxes, image.shape[1], image.shape[0])
    chip = np.asarray(dlib.get_face_chip(image, predictor(image, box), size=150, padding=0.25))
    batch = np.stack([chip, chip[:, ::-1]]).transpose(0, 3, 1, 2).astype(np.float32)
    plain, mirrored = session.run(None, {"images": np.ascontiguousarray(batch)})[0]
    return plain, mirrored


def rank1(gallery: list, queries: list, flip: bool, metric: str) -> float:
    """Rank-1 over queries; a gallery photo without a face never matches, a query without one is wrong."""
    def vector(found):
        if found is None:
            return None
        return (found[0] + found[1]) / 2 if flip else found[0]

    gallery_vectors = [vector(f) for f in gallery]
    present = [i for i, v in enumerate(gallery_vectors) if v is not None]
    matrix = np.stack([gallery_vectors[i] for i in present]).astype(np.float64)
    mean = matrix.mean(axis=0)
    if metric == "cosine":
        centred = matrix - mean
        centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    right = 0
    for index, found in enumerate(queries):
        query = vector(found)
        if query is None:
            continue
        if metric == "euclidean":
            best = int(np.argmin(((matrix - query) ** 2).sum(axis=1)))
        else:
            q = query - mean
            best = int(np.argmax(centred @ (q / np.linalg.norm(q))))
        right += present[best] == index
    return right / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    lfw = Path(args.data) / "lfw"
    enrolled, queries, extra = plan_protocol(lfw, 2, True, 51)
    names = list(enrolled)
    paths = [str(enrolled[n]) for n in names] + [str(p) for _, p in queries] + [str(extra[n]) for n in extra]
    onnx_file = convert(dlib_model_folder() / "dlib_face_recognition_resnet_model_v1.dat",
                        Path(tempfile.mkdtemp()) / "dlib_resnet.onnx")
    with Pool(args.workers, _start, (str(onnx_file),)) as pool:
        found = pool.map(_describe, paths, chunksize=32)
    people = len(names)
    gallery, asked, distractors = found[:people], found[people : 2 * people], found[2 * people :]
    figures = {}
    for flip in (False, True):
        for metric in ("euclidean", "cosine"):
            key = f"{metric}{'_flip' if flip else ''}"
            figures[key] = {"one_shot_rank1": round(rank1(gallery, asked, flip, metric), 4),
                            f"one_shot_rank1_with_{len(distractors)}_distractors":
                                round(rank1(gallery + distractors, asked, flip, metric), 4)}
    result = {
        "what": "LFW one-shot with public-domain parts only: dlib HOG + 5-point landmarks + chip + dlib's ResNet "
                "as facerec's ONNX conversion",
        "people": people, "distractors": len(distractors),
        "no_face_found": {"enrolled": sum(f is None for f in gallery), "queries": sum(f is None for f in asked),
                          "distractors": sum(f is None for f in distractors)},
        "figures": figures,
        "front_end": "dlib.get_frontal_face_detector (1 upsampling, then 2), face nearest the centre, "
                     "shape_predictor_5_face_landmarks, get_face_chip(150, padding 0.25)",
    }
    written = write_result(args.out, result, onnx_file, 1)
    print({k: written[k] for k in ("no_face_found", "figures")})


if __name__ == "__main__":
    main()
