"""Calibrate the threshold for pooled evidence (`facerec.openset.pooled`) and write `<model>.video.json`.

    python scripts/calibrate_video.py [--data ../shared/data] [--model models/facerec-r18-arcface.onnx]

On the calibration identities of the model card's held-out split (celeba112, never trained on, never LFW: the people
the card's FAR curve comes from), two kinds of pooled probe are made: (1) each photo as a synthetic track, `VIEWS`
views as a video gives them (the aligned crop shifted, turned, scaled by a few per cent, blurred, shrunk and restored,
darkened, recompressed) pooled with equal weights; (2) each person's photos in disjoint groups of `GROUP` pooled
(the most independent views a track could hold). Their cohort-normalised scores against every other person's photos
are stranger scores of tracks; the same photos unpooled give a photo's. The shift is the largest difference of the
two tails over `FAR_GRID`, 0 at least (`shift_for`). Deterministic (fixed seed). The embeddings of the views are
cached in cache/video_views_<model>.npz for reruns.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from facerec.evaluation.calibrate_model import card_split, cached_embeddings, held_out_photos  # noqa: E402
from facerec.faces.pack_parts import Embedder, embedder_for  # noqa: E402
from facerec.openset.cohort import Cohort, cohort_path, normalised  # noqa: E402
from facerec.openset.pooled import FAR_GRID, shift_for  # noqa: E402
from facerec.provenance import provenance  # noqa: E402

VIEWS = 4
GROUP = 3
SEED = 50


def video_views(crop: np.ndarray, rng: np.random.Generator, count: int = VIEWS) -> np.ndarray:
    """[count, 112, 112, 3] uint8: the aligned crop as a video's frames give it (re-detected landmarks move it by
    a pixel or two and a few degrees; motion blurs; a face far away is small; light changes; the codec compresses)."""
    import cv2

    views = []
    for _ in range(count):
        angle, scale = rng.uniform(-4, 4), rng.uniform(0.95, 1.05)
        matrix = cv2.getRotationMatrix2D((56 + rng.uniform(-2, 2), 56 + rng.uniform(-2, 2)), angle, scale)
        view = cv2.warpAffine(crop, matrix, (112, 112), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
        if rng.random() < 0.5:
            view = cv2.GaussianBlur(view, (0, 0), rng.uniform(0.5, 1.5))
        if rng.random() < 0.5:
            side = int(rng.uniform(40, 80))
            view = cv2.resize(cv2.resize(view, (side, side), interpolation=cv2.INTER_AREA), (112, 112),
                              interpolation=cv2.INTER_LINEAR)
        view = np.clip(view.astype(np.float32) * rng.uniform(0.6, 1.15) + rng.uniform(-15, 15), 0, 255).astype(np.uint8)
        ok, encoded = cv2.imencode(".jpg", view, [cv2.IMWRITE_JPEG_QUALITY, int(rng.uniform(40, 85))])
        views.append(cv2.imdecode(encoded, cv2.IMREAD_UNCHANGED) if ok else view)
    return np.stack(views)


def view_embeddings(embedder: Embedder, paths: list[Path], cache: Path) -> np.ndarray:
    """[N, VIEWS, 512] unit embeddings of each photo's video views (cached per model file and photo list)."""
    keys = np.array([f"{p.parent.name}/{p.name}" for p in paths])
    if cache.is_file():
        with np.load(cache) as saved:
            if str(saved["model_sha256"]) == embedder.sha256 and saved["paths"].tolist() == keys.tolist():
                return saved["embeddings"]
    rng = np.random.default_rng(SEED)
    out = np.zeros((len(paths), VIEWS, 512), np.float32)
    for start in range(0, len(paths), 32):
        batch = [video_views(np.asarray(Image.open(p).convert("RGB")), rng) for p in paths[start:start + 32]]
        out[start:start + len(batch)] = embedder.embed(np.concatenate(batch)).reshape(len(batch), VIEWS, 512)
        print(f"\rviews embedded: {start + len(batch)}/{len(paths)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, embeddings=out, paths=keys, model_sha256=embedder.sha256)
    return out


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def stranger_scores(cohort: Cohort, probes: np.ndarray, probe_labels: np.ndarray, faces: np.ndarray,
                    labels: np.ndarray) -> np.ndarray:
    """Normalised scores of every probe against every face of another person."""
    scores = normalised(probes @ faces.T, cohort.statistics(probes), cohort.statistics(faces))
    return scores[probe_labels[:, None] != labels[None, :]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--model", default=str(ROOT / "models" / "facerec-r18-arcface.onnx"))
    parser.add_argument("--cache", default=str(ROOT / "cache"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    model = Path(args.model)
    card = json.loads(model.with_suffix(".json").read_text())
    split = card_split(model.with_suffix(".json"))
    paths, labels = held_out_photos(args.data, split=split)
    embedder = embedder_for(model)
    cohort = Cohort.load(cohort_path(model), card["cohort"]["sha256"])
    cache = Path(args.cache)
    singles = cached_embeddings(embedder, paths, cache / f"calibration_embeddings_{embedder.sha256[:12]}.npz")
    views = view_embeddings(embedder, paths, cache / f"video_views_{embedder.sha256[:12]}.npz")
    single = stranger_scores(cohort, singles, labels, singles, labels)
    tracks = stranger_scores(cohort, unit(views.sum(axis=1)), labels, singles, labels)
    groups, group_labels = [], []
    for name in np.unique(labels):
        rows = np.flatnonzero(labels == name)
        for start in range(0, len(rows) - GROUP + 1, GROUP):
            groups.append(singles[rows[start:start + GROUP]].sum(axis=0))
            group_labels.append(name)
    grouped = stranger_scores(cohort, unit(np.array(groups)), np.array(group_labels), singles, labels)
    shift_tracks, rows_tracks = shift_for(single, tracks)
    shift_groups, rows_groups = shift_for(single, grouped)
    result = {
        "shift": round(max(shift_tracks, shift_groups), 4), "model_sha256": embedder.sha256,
        "source": {"data": f"celeba112: the card's calibration identities (held-out split '{split}'), never LFW",
                   "identities": int(len(np.unique(labels))), "photos": len(paths), "views_per_track": VIEWS,
                   "photos_per_group": GROUP, "far_grid": list(FAR_GRID),
                   "stranger_pairs": {"photos": int(single.size), "tracks": int(tracks.size),
                                      "groups": int(grouped.size)},
                   "tracks_of_views": rows_tracks, "groups_of_photos": rows_groups,
                   "seconds": round(time.perf_counter() - started, 1), **provenance(model, 0, embedder)},
    }
    out = model.with_suffix(".video.json")
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"shift {result['shift']} (views {shift_tracks:.4f}, groups {shift_groups:.4f}); wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
