"""dlib's MMOD face detector as facerec runs it (ONNX, `facerec.packs.dlib_mmod`) against dlib's own runtime.

    python benchmarks/dlib_mmod_agreement.py --data ../shared/data --photos 1000 --out benchmarks/results/dlib_mmod_agreement.json

The photos: LFW photos of people with 3 or more photos (never a one-shot evaluation person), evenly spaced, as
they are (250x250). Both detect at dlib's own settings (no upsampling, threshold 0) on one thread, one after the
other on each photo: the share of photos with exactly the same boxes, the largest difference of any detection's
confidence, and the milliseconds a photo of each.
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
from facerec.packs.dlib_files import dlib_model_folder  # noqa: E402
from facerec.packs.dlib_mmod import Settings, convert, detections, tiled_tensor  # noqa: E402
from facerec.provenance import write_result  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--photos", type=int, default=1000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import dlib
    import onnxruntime as ort

    photos = [p for _n, ps in sorted(list_identities(Path(args.data) / "lfw").items()) if len(ps) >= 3 for p in ps]
    photos = photos[:: max(1, len(photos) // args.photos)][: args.photos]
    source = dlib_model_folder() / "mmod_human_face_detector.dat"
    with tempfile.TemporaryDirectory() as folder:
        graph = convert(source, Path(folder) / "mmod.onnx")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    settings = Settings.of(session.get_modelmeta().custom_metadata_map)
    theirs_net = dlib.cnn_face_detection_model_v1(str(source))
    same, differences, faces = 0, [], 0
    seconds = {"facerec_onnx": 0.0, "dlib": 0.0}
    for path in photos:
        image = np.asarray(Image.open(path).convert("RGB"))
        started = time.perf_counter()
        pyramid, levels = tiled_tensor(image, settings)
        ours = detections(session.run(None, {"pyramid": pyramid})[0], levels, settings)
        seconds["facerec_onnx"] += time.perf_counter() - started
        started = time.perf_counter()
        theirs = [((d.rect.left(), d.rect.top(), d.rect.right(), d.rect.bottom()), d.confidence)
                  for d in theirs_net(image, 0)]
        seconds["dlib"] += time.perf_counter() - started
        faces += len(theirs)
        if [box for box, _ in ours] == [box for box, _ in theirs]:
            same += 1
            differences += [abs(a - b) for (_x, a), (_y, b) in zip(ours, theirs)]
    ms = {name: round(value / len(photos) * 1000, 2) for name, value in seconds.items()}
    result = {"what": "dlib's MMOD detector in onnxruntime (facerec) against dlib's own runtime, same photos",
              "photos": len(photos), "faces_dlib": faces, "photos_with_the_same_boxes": same,
              "largest_confidence_difference": float(max(differences)) if differences else None,
              "ms_per_photo_one_thread": ms, "speedup": round(ms["dlib"] / ms["facerec_onnx"], 1),
              "photos_from": "LFW, people with 3+ photos, evenly spaced, 250x250 as they are"}
    write_result(args.out, result, None, 1)
    print(result)


if __name__ == "__main__":
    main()
