"""Each model pack's time a photo and a face on one thread, beside face_recognition's, on the same photos, one run.

    python benchmarks/pack_speed.py --data ../shared/data --photos 200 --out benchmarks/results/pack_speed.json

The photos: the first of every LFW person with 3 or more photos (never a one-shot evaluation person), taken evenly
across the alphabet. Each pack runs its own pipeline (`facerec.faces.pipeline.FacePipeline`, onnxruntime on one
thread; dlib is single-threaded): `detect` is its detector and landmarks on the photo, `embed` the alignment and
network(s) of every face found, per face. face_recognition (dlib's runtime, the peer) runs as its users call it:
`face_locations` (its default HOG detector, and `model="cnn"`, dlib's MMOD, which the public-domain pack also
uses) then `face_encodings` of the faces found, per face. Medians over photos are kept beside the means.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.faces.pipeline import FacePipeline  # noqa: E402
from facerec.packs.catalog import PACKS  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings, pack_file  # noqa: E402


def chosen_photos(lfw: Path, count: int) -> list[Path]:
    people = [photos[0] for _name, photos in sorted(list_identities(lfw).items()) if len(photos) >= 3]
    step = max(1, len(people) // count)
    return people[::step][:count]


def timed(records: list[tuple[float, float, int]]) -> dict:
    """Means and medians of (detect seconds, embed seconds, faces) per photo."""
    detect = np.array([r[0] for r in records]) * 1000
    embed = np.array([r[1] for r in records]) * 1000
    faces = np.array([r[2] for r in records])
    with_faces = faces > 0
    return {"photos": len(records), "faces": int(faces.sum()),
            "detect_ms_per_photo": round(float(detect.mean()), 2),
            "detect_ms_per_photo_median": round(float(np.median(detect)), 2),
            "embed_ms_per_face": round(float(embed.sum() / max(1, faces.sum())), 2),
            "embed_ms_per_face_median": round(float(np.median(embed[with_faces] / faces[with_faces])), 2)
            if with_faces.any() else None,
            "ms_per_photo": round(float((detect + embed).mean()), 2)}


def pack_run(name: str, photos: list[Path]) -> dict:
    pipeline = FacePipeline(Settings(model_path=pack_file(name), num_threads=1))
    warm = pipeline.read(photos[0])
    pipeline.embed(warm, pipeline.detect(warm))
    records = []
    for path in photos:
        photo = pipeline.read(path)
        started = time.perf_counter()
        faces = pipeline.detect(photo)
        detected = time.perf_counter()
        pipeline.embed(photo, list(faces))
        records.append((detected - started, time.perf_counter() - detected, len(faces)))
    return {**timed(records), "model_id": pipeline.embedder.model_id}


def peer_run(photos: list[Path], model: str) -> dict:
    import face_recognition

    records = []
    face_recognition.face_encodings(face_recognition.load_image_file(photos[0]))
    for path in photos:
        image = face_recognition.load_image_file(path)
        started = time.perf_counter()
        boxes = face_recognition.face_locations(image, model=model)
        detected = time.perf_counter()
        face_recognition.face_encodings(image, boxes)
        records.append((detected - started, time.perf_counter() - detected, len(boxes)))
    return timed(records)


def install_megabytes(name: str) -> dict:
    """The pack's own files under models/ and what its pip extra installs (dlib-bin's files), in MB."""
    from importlib.metadata import PackageNotFoundError, distribution

    pack = PACKS[name]
    models = pack_file(name).parent
    files = sum((models / part.file).stat().st_size for part in pack.parts if (models / part.file).is_file())
    extra = 0
    if pack.extra:
        try:
            extra = sum(f.size or 0 for f in distribution("dlib-bin").files or [])
        except PackageNotFoundError:
            extra = 0
    return {"files": round(files / 1e6, 1), "extra": round(extra / 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--photos", type=int, default=200)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    photos = chosen_photos(Path(args.data) / "lfw", args.photos)
    rows = {}
    for name in PACKS:
        rows[name] = pack_run(name, photos)
        print(name, rows[name], flush=True)
    for model in ("hog", "cnn"):
        rows[f"face_recognition_{model}"] = peer_run(photos, model)
        print(model, rows[f"face_recognition_{model}"], flush=True)
    peer = rows["face_recognition_hog"]
    ratios = {name: {"embed_per_face": round(peer["embed_ms_per_face"] / rows[name]["embed_ms_per_face"], 2),
                     "per_photo": round(peer["ms_per_photo"] / rows[name]["ms_per_photo"], 2)}
              for name in PACKS}
    write_result(args.out, {"what": "each pack's milliseconds a photo (detection) and a face (alignment and "
                                    "network), one thread, beside face_recognition's, same photos, one run",
                            "photos_from": "LFW: the first photo of people with 3+ photos, evenly spaced",
                            "rows": rows, "face_recognition_hog_over_pack": ratios,
                            "install_mb": {name: install_megabytes(name) for name in PACKS}}, None, 1)


if __name__ == "__main__":
    main()
