"""Fit the enrollment quality score (`facerec.faces.quality`) for the shipped model on held-out CelebA identities.

    python scripts/calibrate_quality.py [--data ../shared/data] [--model models/facerec-r18-arcface.onnx]

Held-out identities only (`facerec.datasets.folders.held_out_identities`: never trained on, never LFW). Each of their
photos is enrolled three ways: as it is, shrunk (the face drawn at 12-80% of the crop's resolution and restored,
as a small face in a photo would be) and blurred (a 5x5 binomial filter applied 1-4 times). Each enrollment stands
alone for its person beside the first photo of every other held-out person; the outcome is the share of the
person's other photos whose nearest enrolled face is theirs (rank-1, the one-shot protocol's measure). Rank-1, not
"named at the threshold": the threshold in force rises with the gallery and the accepted stranger-match rate, and
the score should say how good the photo is, not how strict one gallery is (a photo that is ranked first less often
is also named less often, at any threshold). The
fit (binomial logistic regression over size, pose, sharpness, stability), the score under which a photo counts as
low (that of the worst `facerec.faces.quality.score.LOW_SHARE` of the photos as they are) and a table of predicted vs observed
recognition by score band go to `<model>.quality.json`, next to the model, with the model's sha256.

The face's landmarks in a crop come from running the detector on the crop (the alignment keeps how far the nose
sits from the middle of the eyes); a crop with no detection takes the template's. Eye distance: the template's
(the CelebA photos' own faces are at least that big), times the shrink factor.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from facerec.faces.align import ARCFACE_TEMPLATE  # noqa: E402
from facerec.faces.choice import central_face  # noqa: E402
from facerec.datasets.folders import held_out as held_out_split, list_identities  # noqa: E402
from facerec.evaluation.calibrate_model import card_split  # noqa: E402
from facerec.faces.pack_parts import Detector, detector_for, embedder_for  # noqa: E402
from facerec.faces.quality.calibration import fitted_model, one_shot_outcomes  # noqa: E402
from facerec.faces.quality.features import binomial_blur, measure  # noqa: E402
from facerec.faces.quality.score import FEATURES, LOW_SHARE, design_row  # noqa: E402
from facerec.settings import Settings  # noqa: E402

SEED = 0
VERSIONS = ("as is", "shrunk", "blurred")


def degraded(crop: np.ndarray, version: str, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """(the crop as that version enrolls it, its scale of the eye distance)."""
    if version == "shrunk":
        scale = float(rng.uniform(0.12, 0.8))
        side = max(8, round(112 * scale))
        small = Image.fromarray(crop).resize((side, side), Image.BILINEAR)
        return np.asarray(small.resize((112, 112), Image.BILINEAR)), side / 112
    if version == "blurred":
        for _ in range(int(rng.integers(1, 5))):
            crop = binomial_blur(crop)
        return crop, 1.0
    return crop, 1.0


def crop_landmarks(detector: Detector, crop: np.ndarray) -> np.ndarray:
    face = central_face(detector.detect(crop), crop.shape)
    return ARCFACE_TEMPLATE.astype(np.float32) if face is None else face.landmarks


def calibration_table(scores: np.ndarray, successes: np.ndarray, trials: np.ndarray) -> list[dict]:
    """Predicted vs observed recognition in score bands (a calibrated score agrees)."""
    rows = []
    for low, high in ((0, 0.2), (0.2, 0.4), (0.4, 0.5), (0.5, 0.6), (0.6, 0.8), (0.8, 1.01)):
        band = (scores >= low) & (scores < high) & (trials > 0)
        if band.any():
            rows.append({"score": f"{low:.1f}-{min(high, 1):.1f}", "enrollments": int(band.sum()),
                         "mean_score": round(float(scores[band].mean()), 3),
                         "observed": round(float(successes[band].sum() / trials[band].sum()), 3)})
    return rows


def measure_all(embedder, detector, crops, labels, queries, anchors, started):
    """(design rows, versions, successes, trials) of every enrollment: each photo in each of `VERSIONS`, enrolled
    alone beside the anchors (the first photo of every other person), its person's other photos searched for
    (rank-1: a threshold of -1, which every cosine clears)."""
    rng = np.random.default_rng(SEED)
    rows, enrolled, enrolled_labels, enrolled_from, kinds = [], [], [], [], []
    for index, crop in enumerate(crops):
        landmarks = crop_landmarks(detector, crop)
        for version in VERSIONS:
            image, scale = degraded(crop, version, rng)
            rows.append(design_row(measure(embedder, image, landmarks, photo_scale=scale)))
            enrolled.append(image)
            enrolled_labels.append(labels[index])
            enrolled_from.append(index)
            kinds.append(version)
        if index % 200 == 0:
            print(f"{index}/{len(crops)} photos, {time.perf_counter() - started:.0f} s", flush=True)
    enrolled_embeddings = embedder.embed(np.stack(enrolled))
    successes, trials = one_shot_outcomes(enrolled_embeddings, np.array(enrolled_labels), queries[anchors],
                                          labels[anchors], queries, labels, -1.0, np.array(enrolled_from))
    return np.array(rows), np.array(kinds), successes, trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--model", type=Path, default=Settings().model_path)
    parser.add_argument("--cache", default="cache", help="where the measured features are kept, per model")
    args = parser.parse_args()
    started = time.perf_counter()
    identities = list_identities(Path(args.data) / "celeba112")
    # The model's calibration identities (its card's held-out split): never the ones its training chose on.
    held_out = sorted(held_out_split(identities, card_split(args.model.with_suffix(".json"))).calibration)
    paths = [p for name in held_out for p in identities[name]]
    labels = np.array([held_out.index(p.parent.name) for p in paths])
    embedder, detector = embedder_for(args.model), detector_for(Settings(model_path=args.model))
    measured = Path(args.cache) / f"quality_calibration_{embedder.sha256[:12]}.npz"
    if measured.is_file():  # this model's features and outcomes, measured before: refit without measuring again
        saved = np.load(measured)
        rows, kinds, successes, trials = saved["rows"], saved["kinds"], saved["successes"], saved["trials"]
    else:
        crops = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in paths])
        queries = embedder.embed(crops)
        anchors = np.array([int(np.flatnonzero(labels == i)[0]) for i in range(len(held_out))])
        rows, kinds, successes, trials = measure_all(embedder, detector, crops, labels, queries, anchors, started)
        measured.parent.mkdir(parents=True, exist_ok=True)
        np.savez(measured, rows=rows, kinds=kinds, successes=successes, trials=trials)
    source = {"script": "scripts/calibrate_quality.py", "identities": len(held_out), "photos": len(paths),
              "enrollments": len(rows), "versions": list(VERSIONS), "gallery_faces": len(held_out),
              "outcome": "rank-1 of the person's other photos in a one-shot gallery of the held-out people",
              "seed": SEED, "low_score_rule": f"the score of the worst {LOW_SHARE:.0%} of the held-out photos as they are",
              "model_file": args.model.name, "seconds": round(time.perf_counter() - started, 1)}
    model = fitted_model(rows, successes, trials, rows[kinds == "as is"], embedder.sha256, source)
    scores = model.predict(rows)
    source["low_score"] = round(model.low_score, 4)
    source["calibration"] = calibration_table(scores, successes, trials)
    source["observed_by_version"] = {v: round(float(successes[kinds == v].sum() / trials[kinds == v].sum()), 3)
                                     for v in VERSIONS}
    source["flagged_low"] = {v: round(float(np.mean(scores[kinds == v] < model.low_score)), 3) for v in VERSIONS}
    source["typical_design_row"] = dict(zip(FEATURES, np.round(model.typical, 4).tolist()))
    out = args.model.with_suffix(".quality.json")
    out.write_text(json.dumps(model.to_dict(), indent=1) + "\n")
    print(json.dumps(source, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
