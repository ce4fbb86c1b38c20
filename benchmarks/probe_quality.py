"""Would answering "too poor a face to tell" for the lowest-quality probe faces pay? Measured on held-out identities.

    python benchmarks/probe_quality.py --data ../shared/data --out benchmarks/results/probe_quality.json

The held-out CelebA identities of the model card's split (never trained on, never LFW), each photo searched three
ways as `scripts/calibrate_quality.py` enrolls it (as it is, shrunk, blurred: the same seeded degradations, so its
cached quality features are reused), through the enrollment quality score (`facerec.faces.quality`) of the probe
face. Gallery: the first photo of every held-out person, as it is. Mated searches: every other photo of a person
against the whole gallery; non-mated searches: every photo of a person against the gallery without that person
(leave-one-out). Decisions use the normalised score and the threshold in force for that gallery at the default
accepted stranger-match rate (the policy's rule, as identify applies it).

The rule under test refuses to name any probe whose quality score is under the model's `low_score`. It is compared
with what the same drop in FPIR costs when bought the plain way, by a stricter threshold: the rule wins only when
it keeps more true matches (DIR) than a threshold raised until the non-mated searches are named as rarely as under
the rule.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from calibrate_quality import SEED, VERSIONS, degraded  # noqa: E402

from facerec.datasets.folders import held_out as held_out_split, list_identities  # noqa: E402
from facerec.evaluation.calibrate_model import card_split  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.faces.quality.score import QualityModel  # noqa: E402
from facerec.openset.cohort import normalised  # noqa: E402
from facerec.openset.model_card import policy_for, scorer_for  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def outcomes(scores: np.ndarray, probe_labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(best score against the gallery, whether it is the probe's own person, best score with the probe's own
    person left out) of each probe; `scores` [probes, gallery people], gallery person i = label i."""
    best = scores.max(axis=1)
    right = scores.argmax(axis=1) == probe_labels
    others = scores.copy()
    others[np.arange(len(others)), probe_labels] = -np.inf
    return best, right, others.max(axis=1)


def rates(threshold: float, best: np.ndarray, right: np.ndarray, stranger_best: np.ndarray,
          refused: np.ndarray, mated: np.ndarray) -> dict:
    named_right = right & (best >= threshold) & ~refused
    named_stranger = (stranger_best >= threshold) & ~refused
    return {"dir": float(named_right[mated].mean()), "fpir": float(named_stranger.mean()),
            "refused_share": float(refused.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--cache", default="cache")
    parser.add_argument("--out")
    args = parser.parse_args()
    started = time.perf_counter()
    settings = Settings.from_env()
    model_path = settings.model_path
    identities = list_identities(Path(args.data) / "celeba112")
    held_out = sorted(held_out_split(identities, card_split(model_path.with_suffix(".json"))).calibration)
    paths = [p for name in held_out for p in identities[name]]
    labels = np.array([held_out.index(p.parent.name) for p in paths])
    embedder = FaceEmbedder(model_path)
    cached = Path(args.cache) / f"quality_calibration_{embedder.sha256[:12]}.npz"
    if not cached.is_file():
        raise SystemExit(f"{cached} is missing: run `python scripts/calibrate_quality.py` first (it measures the "
                         "quality features this benchmark reuses)")
    rows = np.load(cached)["rows"]
    quality = QualityModel.load(model_path.with_suffix(".quality.json"))
    crops = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in paths])
    rng = np.random.default_rng(SEED)  # the same draws, in the same order, as calibrate_quality.measure_all
    probes, probe_labels, kinds, photo = [], [], [], []
    for index, crop in enumerate(crops):
        for version in VERSIONS:
            image, _ = degraded(crop, version, rng)
            probes.append(image)
            probe_labels.append(labels[index])
            kinds.append(version)
            photo.append(index)
    if len(probes) != len(rows):
        raise SystemExit(f"{cached} holds {len(rows)} probes, not {len(probes)}: measured on other photos")
    probe_labels, kinds, photo = np.array(probe_labels), np.array(kinds), np.array(photo)
    gallery_rows = np.array([int(np.flatnonzero(labels == i)[0]) for i in range(len(held_out))])
    policy = policy_for(settings)
    scorer = scorer_for(settings, policy)
    gallery = embedder.embed(crops[gallery_rows])
    embeddings = embedder.embed(np.stack(probes))
    scores = normalised(embeddings @ gallery.T, scorer.statistics(embeddings), scorer.statistics(gallery))
    best, right, stranger_best = outcomes(scores, probe_labels)
    mated = ~np.isin(photo, gallery_rows)  # a gallery photo is not searched as its own mate
    threshold = policy.for_gallery(len(held_out)).threshold
    quality_scores = quality.predict(rows)
    low = quality_scores < quality.low_score
    nobody_refused = np.zeros(len(probes), bool)
    plain = rates(threshold, best, right, stranger_best, nobody_refused, mated)
    rule = rates(threshold, best, right, stranger_best, low, mated)
    # The plain way to the rule's FPIR: the lowest threshold at which non-mated searches are named as rarely.
    candidates = np.sort(stranger_best[stranger_best >= threshold])
    stricter = threshold
    for value in candidates:
        if float((stranger_best >= value).mean()) <= rule["fpir"]:
            stricter = float(value)
            break
    else:
        stricter = float(candidates[-1]) + 1e-9 if len(candidates) else threshold
    same_fpir = rates(stricter, best, right, stranger_best, nobody_refused, mated)
    by_version = {v: {"low_share": float(low[kinds == v].mean()),
                      "plain": rates(threshold, best[kinds == v], right[kinds == v], stranger_best[kinds == v],
                                     nobody_refused[kinds == v], mated[kinds == v]),
                      "rule": rates(threshold, best[kinds == v], right[kinds == v], stranger_best[kinds == v],
                                    low[kinds == v], mated[kinds == v])}
                  for v in VERSIONS}
    wins = rule["dir"] > same_fpir["dir"] and rule["fpir"] < plain["fpir"]
    result = {"command": "python " + " ".join(sys.argv), "identities": len(held_out), "photos": len(paths),
              "probes": len(probes), "mated_searches": int(mated.sum()), "non_mated_searches": len(probes),
              "versions": list(VERSIONS), "score": scorer.scale, "fpir_target": policy.fpir,
              "threshold": threshold, "low_score": quality.low_score,
              "plain": plain, "refuse_low_quality": rule,
              "stricter_threshold_same_fpir": {"threshold": stricter, **same_fpir},
              "by_version": by_version, "rule_wins": bool(wins),
              "seconds": round(time.perf_counter() - started, 1)}
    print(result)
    if args.out:
        write_result(args.out, result, model_path, threads=0)


if __name__ == "__main__":
    main()
