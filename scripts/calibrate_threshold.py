"""Calibrate the shipped model's thresholds on the held-out validation identities of celeba112.

    python scripts/calibrate_threshold.py --data ../shared/data --out runs/calibration.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.calibrate import calibrate  # noqa: E402
from facerec.dataset import held_out_identities, list_identities  # noqa: E402
from facerec.embed import FaceEmbedder  # noqa: E402
from facerec.settings import default_model_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--model", default=str(default_model_path()))
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    celeba = list_identities(Path(args.data) / "celeba112")
    held_out = sorted(held_out_identities(celeba))
    paths = [p for name in held_out for p in celeba[name]]
    labels = np.array([held_out.index(p.parent.name) for p in paths])
    crops = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in paths])
    started = time.perf_counter()
    embeddings = FaceEmbedder(args.model).embed(crops)
    result = {"identities": len(held_out), "photos": len(paths), "embed_seconds": time.perf_counter() - started,
              **calibrate(embeddings, labels)}
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
