"""Speed of each stage on this machine, and end to end (photo -> identities).

    python benchmarks/speed.py --data ../shared/data --threads 1 --out runs/speed_1thread.json
    python benchmarks/speed.py --data ../shared/data --threads 0 --out runs/speed.json   # 0 = all cores

Figures: detection ms per 250x250 LFW photo and per 1280x960 photo, alignment ms per face, embedding faces/s at
batch 1 and 32 (with and without flip test-time augmentation), and identify ms per photo on a 100-person gallery.
Each figure is the median over repeated runs after a warm-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.faces.align import align_face  # noqa: E402
from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.faces.detect import FaceDetector  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.faces.image import load_image  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402


def timed(function, repeats: int) -> float:
    """Median seconds of `repeats` calls after one warm-up call."""
    function()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (0 = all cores)")
    parser.add_argument("--out")
    args = parser.parse_args()
    lfw = list_identities(Path(args.data) / "lfw")
    photos = [p for ps in list(lfw.values())[:200] for p in ps][:40]
    small = load_image(photos[0])
    canvas = Image.new("RGB", (1280, 960), (90, 90, 90))
    canvas.paste(Image.fromarray(small).resize((500, 500)), (390, 230))
    large = np.asarray(canvas)
    detector = FaceDetector(num_threads=args.threads)
    face = detector.detect(small)[0]
    results = {"threads": args.threads or "all"}
    results["detect_ms_250x250"] = 1000 * timed(lambda: detector.detect(small), 30)
    results["detect_ms_1280x960"] = 1000 * timed(lambda: detector.detect(large), 10)
    results["align_ms_per_face"] = 1000 * timed(lambda: align_face(small, face.landmarks), 50)
    crops = np.stack([align_face(load_image(p), detector.detect(load_image(p))[0].landmarks) for p in photos[:32]])
    model = Settings().model_path
    for tta in (False, True):
        embedder = FaceEmbedder(model, flip_tta=tta, batch_size=32, num_threads=args.threads)
        suffix = "_flip_tta" if tta else ""
        results[f"embed_faces_per_s_batch1{suffix}"] = 1 / timed(lambda: embedder.embed(crops[:1]), 20)
        results[f"embed_faces_per_s_batch32{suffix}"] = 32 / timed(lambda: embedder.embed(crops), 3)
    with tempfile.TemporaryDirectory() as home:
        gallery = Gallery(Settings(home=Path(home), num_threads=args.threads))
        for name, paths in list(lfw.items())[:100]:
            parts_of(gallery).enrollment.add_embeddings([{"name": name, "embedding": np.random.default_rng(len(name)).normal(size=512)
                                     .astype(np.float32) / 22.6}])
        query = gallery.services().photos.read(photos[1])
        results["identify_ms_per_photo_end_to_end"] = 1000 * timed(lambda: gallery.identify(photos[1]), 10)
        results["identify_ms_per_decoded_photo"] = 1000 * timed(lambda: gallery.identify(query), 10)
        gallery.close()
    results = {k: round(v, 2) if isinstance(v, float) else v for k, v in results.items()}
    print(json.dumps(results, indent=1))
    if args.out:
        write_result(args.out, results, model, threads=args.threads)


if __name__ == "__main__":
    main()
