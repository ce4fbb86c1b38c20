"""Fit the enrollment quality score (`facerec.faces.quality`) for the shipped model on held-out CelebA identities.

    python scripts/calibrate_quality.py [--data ../shared/data] [--model models/facerec-r18-arcface.onnx]

Held-out identities only (`facerec.datasets.folders.held_out_identities`: never trained on, never LFW). Each of their
photos is enrolled three ways: as it is, shrunk (the face drawn at 12-80% of the crop's resolution and restored,
as a small face in a photo would be), blurred (a 5x5 binomial filter applied 1-4 times), blurred heavily (a Gaussian
of sigma 1.5-4 px on the crop: a photo blurred with radius 5, or an out-of-focus one), grey (a black-and-white
photo) and badly exposed (gamma 0.35-0.6 or 1.8-3: under- or over-exposed). Each enrollment stands
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
from facerec.faces.quality.score import FEATURES, LEGACY_FEATURES, LOW_SHARE, design_row  # noqa: E402
from facerec.settings import Settings  # noqa: E402

SEED = 0
VERSIONS = ("as is", "shrunk", "blurred", "blurred heavily", "grey", "exposure")
FOLDS = 2  # agreement is read out of fold: fitted on half the identities, read on the other half


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
    if version == "blurred heavily":
        from PIL import ImageFilter

        sigma = float(rng.uniform(1.5, 4.0))
        return np.asarray(Image.fromarray(crop).filter(ImageFilter.GaussianBlur(sigma))), 1.0
    if version == "grey":
        grey = np.asarray(Image.fromarray(crop).convert("L"))
        return np.repeat(grey[:, :, None], 3, axis=2), 1.0
    if version == "exposure":
        gamma = float(rng.uniform(0.35, 0.6) if rng.random() < 0.5 else rng.uniform(1.8, 3.0))
        return np.clip(255.0 * (crop / 255.0) ** gamma, 0, 255).astype(np.uint8), 1.0
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
    rows, legacy, enrolled, enrolled_labels, enrolled_from, kinds = [], [], [], [], [], []
    for index, crop in enumerate(crops):
        landmarks = crop_landmarks(detector, crop)
        for version in VERSIONS:
            image, scale = degraded(crop, version, rng)
            features = measure(embedder, image, landmarks, photo_scale=scale)
            rows.append(design_row(features))
            legacy.append(design_row(features, LEGACY_FEATURES))  # what a calibration made before reads
            enrolled.append(image)
            enrolled_labels.append(labels[index])
            enrolled_from.append(index)
            kinds.append(version)
        if index % 200 == 0:
            print(f"{index}/{len(crops)} photos, {time.perf_counter() - started:.0f} s", flush=True)
    enrolled_embeddings = embedder.embed(np.stack(enrolled))
    successes, trials = one_shot_outcomes(enrolled_embeddings, np.array(enrolled_labels), queries[anchors],
                                          labels[anchors], queries, labels, -1.0, np.array(enrolled_from))
    return np.array(rows), np.array(legacy), np.array(kinds), successes, trials


def previous_model(path: Path, sha256: str):
    """The calibration shipped before this run, when it was fitted for this model (its agreement is the "before")."""
    from facerec.faces.quality.score import QualityModel

    if not path.is_file():
        return None
    model = QualityModel.load(path)
    return model if model.model_sha256 == sha256 else None


def agreement(rows, legacy, kinds, successes, trials, identity_of, before, sha256: str, source: dict) -> dict:
    """How well the score agrees with later recognition, on identities it was not fitted on: for each of `FOLDS`
    halves of the identities, a model fitted on the others predicts its enrollments; per version, the mean score
    against the share observed, and the Brier-like mean squared error of score vs observed share per enrollment.
    `before` (the calibration shipped before, fitted on all of them with fewer versions, on `legacy` rows when it
    reads the features made before) is read the same way."""
    keep = trials > 0
    observed = np.where(keep, successes / np.maximum(trials, 1), np.nan)
    out_of_fold = np.full(len(rows), np.nan)
    fold = identity_of % FOLDS
    for k in range(FOLDS):
        train = (fold != k) & keep
        model = fitted_model(rows[train], successes[train], trials[train], rows[train & (kinds == "as is")], sha256,
                             dict(source))
        out_of_fold[fold == k] = model.predict(rows[fold == k])

    def read(scores) -> dict:
        table = {}
        for version in VERSIONS:
            mine = (kinds == version) & keep
            table[version] = {"enrollments": int(mine.sum()), "mean_score": round(float(np.mean(scores[mine])), 3),
                              "observed": round(float(successes[mine].sum() / trials[mine].sum()), 3),
                              "squared_error": round(float(np.mean((scores[mine] - observed[mine]) ** 2)), 4)}
        table["all"] = {"squared_error": round(float(np.nanmean((scores[keep] - observed[keep]) ** 2)), 4)}
        return table

    found = {"after (refitted with every version, read out of fold)": read(out_of_fold),
             "rule": f"{FOLDS} folds by identity; squared error of the score against the share of the person's "
                     "other photos recognised, per enrollment"}
    if before is not None:
        found["before (the calibration shipped before, fitted on as is, shrunk and blurred)"] = read(before.predict(
            legacy if before.features == LEGACY_FEATURES else rows))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--model", type=Path, default=Settings().model_path)
    parser.add_argument("--cache", default="cache", help="where the measured features are kept, per model")
    parser.add_argument("--identities", type=int, default=None, help="only the first N held-out identities (to try "
                        "the script; nothing is cached)")
    parser.add_argument("--out", type=Path, default=None, help="default: <model>.quality.json, next to the model")
    args = parser.parse_args()
    started = time.perf_counter()
    identities = list_identities(Path(args.data) / "celeba112")
    # The model's calibration identities (its card's held-out split): never the ones its training chose on.
    held_out = sorted(held_out_split(identities, card_split(args.model.with_suffix(".json"))).calibration)
    held_out = held_out[:args.identities] if args.identities else held_out
    paths = [p for name in held_out for p in identities[name]]
    labels = np.array([held_out.index(p.parent.name) for p in paths])
    embedder, detector = embedder_for(args.model), detector_for(Settings(model_path=args.model))
    measured = Path(args.cache) / f"quality_calibration_{embedder.sha256[:12]}_{len(VERSIONS)}versions_{len(FEATURES)}features.npz"
    if measured.is_file() and not args.identities:  # this model's features and outcomes, measured before: refit without measuring again
        saved = np.load(measured)
        rows, legacy, kinds = saved["rows"], saved["legacy"], saved["kinds"]
        successes, trials = saved["successes"], saved["trials"]
    else:
        crops = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in paths])
        queries = embedder.embed(crops)
        anchors = np.array([int(np.flatnonzero(labels == i)[0]) for i in range(len(held_out))])
        rows, legacy, kinds, successes, trials = measure_all(embedder, detector, crops, labels, queries, anchors,
                                                             started)
        if not args.identities:
            measured.parent.mkdir(parents=True, exist_ok=True)
            np.savez(measured, rows=rows, legacy=legacy, kinds=kinds, successes=successes, trials=trials)
    source = {"script": "scripts/calibrate_quality.py", "identities": len(held_out), "photos": len(paths),
              "enrollments": len(rows), "versions": list(VERSIONS), "gallery_faces": len(held_out),
              "outcome": "rank-1 of the person's other photos in a one-shot gallery of the held-out people",
              "seed": SEED, "low_score_rule": f"the score of the worst {LOW_SHARE:.0%} of the held-out photos as they are",
              "model_file": args.model.name, "seconds": round(time.perf_counter() - started, 1)}
    identity_of = np.repeat(labels, len(VERSIONS))  # measure_all's rows: each photo's versions in turn
    before = previous_model(args.model.with_suffix(".quality.json"), embedder.sha256)
    source["agreement"] = agreement(rows, legacy, kinds, successes, trials, identity_of, before, embedder.sha256,
                                    source)
    model = fitted_model(rows, successes, trials, rows[kinds == "as is"], embedder.sha256, source)
    scores = model.predict(rows)
    source["low_score"] = round(model.low_score, 4)
    source["calibration"] = calibration_table(scores, successes, trials)
    source["observed_by_version"] = {v: round(float(successes[kinds == v].sum() / trials[kinds == v].sum()), 3)
                                     for v in VERSIONS}
    source["flagged_low"] = {v: round(float(np.mean(scores[kinds == v] < model.low_score)), 3) for v in VERSIONS}
    source["typical_design_row"] = dict(zip(model.features, np.round(model.typical, 4).tolist()))
    out = args.out or args.model.with_suffix(".quality.json")
    out.write_text(json.dumps(model.to_dict(), indent=1) + "\n")
    print(json.dumps(source, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
