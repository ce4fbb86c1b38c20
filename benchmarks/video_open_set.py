"""#50: a stranger's track at the default rate (FPIR per track) and an enrolled person's (DIR per track), beside the
same views decided one frame at a time, on LFW people the pooled calibration never saw.

    python benchmarks/video_open_set.py [--cache ../main/cache/lfw] [--strangers 1000] [--people 500] \
        --out benchmarks/results/video_open_set.json

Gallery: LFW people with at least 3 photos, each enrolled with their first photo (aligned-face cache, the same
crops identify makes). Tracks: a synthetic track is one photo made into `VIEWS` video views
(`scripts/calibrate_video.py`'s `video_views`: shifted, turned, blurred, shrunk, darkened, recompressed) pooled with
equal weights; the strangers are LFW's one-photo people (never enrolled, never used to calibrate), the mated tracks
are each enrolled person's second photo. A track is decided once, at the threshold for pooled evidence
(`VideoSearch.rule`: the gallery's threshold in force plus the calibrated shift); a frame is each view alone at a
photo's threshold. FPIR per track: the share of stranger tracks given a name; per frame: the share of stranger
views given one. DIR: the share of mated tracks (views) named as their person. Seeded: the same people and views.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from calibrate_video import VIEWS, video_views  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402

SEED = 7


def decided(gallery: Gallery, embeddings: np.ndarray, threshold: float) -> list[str | None]:
    return [c[0].name if c and c[0].score >= threshold else None for c in parts_of(gallery).searching.search(embeddings, top_k=1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=str(ROOT.parent / "main" / "cache" / "lfw"))
    parser.add_argument("--strangers", type=int, default=1000)
    parser.add_argument("--people", type=int, default=500, help="mated tracks (enrolled people asked about)")
    parser.add_argument("--out", default="benchmarks/results/video_open_set.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cache = Path(args.cache)
    with open(cache / "manifest.tsv", newline="") as handle:
        rows = [(int(r["row"]), r["identity"]) for r in csv.DictReader(handle, delimiter="\t")]
    faces = np.load(cache / "faces.npy", mmap_mode="r")
    by_person: dict[str, list[int]] = {}
    for row, person in rows:
        by_person.setdefault(person, []).append(row)
    enrolled = sorted(p for p, r in by_person.items() if len(r) >= 3)
    singles = sorted(p for p, r in by_person.items() if len(r) == 1)
    rng = np.random.default_rng(SEED)
    strangers = sorted(rng.choice(singles, min(args.strangers, len(singles)), replace=False))
    asked = sorted(rng.choice(enrolled, min(args.people, len(enrolled)), replace=False))
    with tempfile.TemporaryDirectory() as home, Gallery.open(home=home) as gallery:
        embed = parts_of(gallery).pipeline.embedder.embed
        parts_of(gallery).enrollment.add_embeddings([{"name": p, "embedding": e} for p, e in
                                zip(enrolled, embed(np.stack([faces[by_person[p][0]] for p in enrolled])))])
        views_rng = np.random.default_rng(SEED)

        def views_of(rows_: list[int]) -> np.ndarray:
            crops = np.concatenate([video_views(np.asarray(faces[r]), views_rng) for r in rows_])
            return embed(crops).reshape(len(rows_), VIEWS, -1)

        stranger_views = views_of([by_person[p][0] for p in strangers])
        mated_views = views_of([by_person[p][1] for p in asked])
        track_rule, _default = parts_of(gallery).videos.rule()
        photo_rule = gallery.services().thresholds.in_force()

        def pooled(views: np.ndarray) -> np.ndarray:
            total = views.sum(axis=1)
            return total / np.linalg.norm(total, axis=1, keepdims=True)

        def rates(views: np.ndarray, truth: list[str] | None) -> dict:
            tracks = decided(gallery, pooled(views), track_rule.threshold)
            frames = decided(gallery, views.reshape(-1, views.shape[-1]), photo_rule.threshold)
            frame_truth = None if truth is None else [t for t in truth for _ in range(views.shape[1])]
            if truth is None:
                return {"tracks": len(tracks), "tracks_named": sum(n is not None for n in tracks),
                        "fpir_per_track": float(np.mean([n is not None for n in tracks])),
                        "frames": len(frames), "frames_named": sum(n is not None for n in frames),
                        "fpir_per_frame": float(np.mean([n is not None for n in frames]))}
            return {"tracks": len(tracks), "dir_per_track": float(np.mean([n == t for n, t in zip(tracks, truth)])),
                    "frames": len(frames),
                    "dir_per_frame": float(np.mean([n == t for n, t in zip(frames, frame_truth)]))}

        result = {"strangers": rates(stranger_views, None), "mated": rates(mated_views, list(asked)),
                  "gallery_people": len(enrolled), "views_per_track": VIEWS,
                  "target_fpir": track_rule.target_fpir, "track_threshold": round(track_rule.threshold, 4),
                  "photo_threshold": round(photo_rule.threshold, 4), "pooled_shift": round(parts_of(gallery).videos._calibration.shift, 4),
                  "data": "LFW aligned-face cache: gallery = people with >= 3 photos (first photo), strangers = "
                          "one-photo people, mated = enrolled people's second photo; never used to calibrate",
                  "seconds": round(time.perf_counter() - started, 1), "load_average": os.getloadavg(),
                  "command": "python " + " ".join(sys.argv)}
        write_result(args.out, result, gallery.services().settings.model_path, 0, parts_of(gallery).pipeline.embedder)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
