"""facerec vs a peer, `face_recognition` (dlib's ResNet), on the LFW one-shot protocol, in one run.

    pip install --no-deps dlib-bin face_recognition_models face_recognition "setuptools<81"   # benchmark only
    python benchmarks/peer.py --data ../shared/data --out runs/peer.json
    python benchmarks/peer.py --data ../shared/data --pairs --out runs/peer_pairs.json   # LFW pairs, 10-fold

Both embedders see the same faces: facerec's RetinaFace finds the face nearest the image centre in each photo,
and its box is handed to face_recognition as the known face location (face_recognition then aligns with its own
5-point shape model, as it does in normal use). Rank-1 is 1-NN over the 779 enrolled photos (cosine for facerec,
Euclidean for dlib, each library's own metric). Timing is the embedding of one detected face, one photo at a time,
with one thread for both (`OMP_NUM_THREADS=1`), plus the shared detection time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.faces.align import align_face  # noqa: E402
from facerec.faces.choice import central_face  # noqa: E402
from facerec.evaluation.oneshot import plan_protocol  # noqa: E402
from facerec.faces.pipeline import FacePipeline  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def rank1(gallery: np.ndarray, queries: np.ndarray, euclidean: bool) -> float:
    if euclidean:
        distances = ((queries[:, None, :] - gallery[None, :, :]) ** 2).sum(-1)
        best = distances.argmin(axis=1)
    else:
        best = (queries @ gallery.T).argmax(axis=1)
    return float(np.mean(best == np.arange(len(queries))))


def embed_both(photos: list[Path]):
    """(facerec embeddings, dlib embeddings, timing, facerec's embedder) of the central face of each photo."""
    import face_recognition

    pipeline = FacePipeline(Settings(num_threads=1))
    ours, theirs = [], []
    timing = {"detect": 0.0, "facerec_embed": 0.0, "dlib_embed": 0.0}
    for path in photos:
        photo = pipeline.read(path)
        start = time.perf_counter()
        face = central_face(pipeline.detect(photo), photo.pixels.shape)
        timing["detect"] += time.perf_counter() - start
        start = time.perf_counter()
        ours.append(pipeline.embedder.embed(align_face(photo.pixels, face.landmarks)[None])[0])
        timing["facerec_embed"] += time.perf_counter() - start
        x1, y1, x2, y2 = (int(round(v)) for v in face.box)
        start = time.perf_counter()
        theirs.append(face_recognition.face_encodings(photo.pixels, known_face_locations=[(y1, x2, y2, x1)])[0])
        timing["dlib_embed"] += time.perf_counter() - start
    return np.array(ours), np.array(theirs), timing, pipeline.embedder


def pairs_accuracy(embeddings: np.ndarray, row: dict, pairs, folds: int, euclidean: bool) -> dict:
    """10-fold accuracy with facerec's own fold procedure; scores are negated distances for dlib."""
    from facerec.evaluation.pairs import best_threshold

    if euclidean:
        scores = np.array([-np.linalg.norm(embeddings[row[a]] - embeddings[row[b]]) for a, b, _ in pairs])
    else:
        scores = np.array([float(embeddings[row[a]] @ embeddings[row[b]]) for a, b, _ in pairs])
    same = np.array([s for _, _, s in pairs])
    fold_of = np.repeat(np.arange(folds), len(pairs) // folds)
    accuracies = []
    for fold in range(folds):
        threshold = best_threshold(scores[fold_of != fold], same[fold_of != fold])
        accuracies.append(float(np.mean((scores[fold_of == fold] >= threshold) == same[fold_of == fold])))
    return {"accuracy_mean": float(np.mean(accuracies)), "accuracy_std": float(np.std(accuracies))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--pairs", action="store_true", help="LFW pairs (10-fold) instead of one-shot")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.pairs:
        from facerec.evaluation.pairs import read_pairs

        pairs, folds = read_pairs(Path(args.data) / "protocols" / "lfw_pairs.txt", Path(args.data) / "lfw")
        photos = sorted({p for a, b, _ in pairs for p in (a, b)})
        ours, theirs, timing, embedder = embed_both(photos)
        row = {p: i for i, p in enumerate(photos)}
        result = {"protocol": "LFW pairs, 10-fold", "photos": len(photos),
                  "facerec": pairs_accuracy(ours, row, pairs, folds, euclidean=False),
                  "face_recognition": pairs_accuracy(theirs, row, pairs, folds, euclidean=True),
                  "ms_per_face_embed": {"facerec": 1000 * timing["facerec_embed"] / len(photos),
                                        "face_recognition": 1000 * timing["dlib_embed"] / len(photos)}}
        result["speed_ratio_facerec_over_face_recognition"] = (result["ms_per_face_embed"]["face_recognition"]
                                                               / result["ms_per_face_embed"]["facerec"])
        print(json.dumps(result, indent=1))
        if args.out:
            write_result(args.out, result, Settings().model_path, threads=1, embedder=embedder)
        return
    enrolled, queries, _ = plan_protocol(Path(args.data) / "lfw", 2, False, 51)
    names = list(enrolled)
    query_of = {name: path for name, path in queries}
    photos = [enrolled[n] for n in names] + [query_of[n] for n in names]
    ours, theirs, timing, embedder = embed_both(photos)
    half = len(names)
    count = len(photos)
    result = {
        "protocol": "LFW one-shot, 779 people with exactly 2 photos (seed 51), no distractors",
        "facerec": {"rank1": rank1(ours[:half], ours[half:], euclidean=False),
                    "ms_per_face_embed": 1000 * timing["facerec_embed"] / count,
                    "ms_per_photo_end_to_end": 1000 * (timing["detect"] + timing["facerec_embed"]) / count},
        "face_recognition": {"rank1": rank1(theirs[:half], theirs[half:], euclidean=True),
                             "ms_per_face_embed": 1000 * timing["dlib_embed"] / count,
                             "ms_per_photo_end_to_end": 1000 * (timing["detect"] + timing["dlib_embed"]) / count},
        "shared_detection_ms_per_photo": 1000 * timing["detect"] / count,
        "threads": 1,
    }
    for side in ("facerec", "face_recognition"):
        result[side]["faces_per_s"] = 1000 / result[side]["ms_per_face_embed"]
    result["facerec"]["settings"] = {"flip_tta": Settings().flip_tta, "model": Settings().model_path.name}
    result["speed_ratio_facerec_over_face_recognition"] = (result["face_recognition"]["ms_per_face_embed"]
                                                           / result["facerec"]["ms_per_face_embed"])
    print(json.dumps(result, indent=1))
    if args.out:
        write_result(args.out, result, Settings().model_path, threads=1, embedder=embedder)


if __name__ == "__main__":
    main()
