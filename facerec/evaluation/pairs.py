"""LFW-style verification: 10-fold accuracy over a pairs file (`10 300` header; `name i j` same-person lines and
`name1 i name2 j` different-person lines; image `<name>/<name>_<i:04d>.jpg`). For each fold the threshold that
maximises accuracy on the other nine folds is applied to it; the mean and standard deviation are reported."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from facerec.errors import InvalidArgument
from facerec.faces.pipeline import FacePipeline
from facerec.provenance import provenance
from facerec.evaluation.embedding import embed_photos
from facerec.openset.model_card import policy_for


@dataclass
class PairsResult:
    figures: dict
    same: np.ndarray = field(repr=False)
    similarities: np.ndarray = field(repr=False)


def read_pairs(pairs_file: str | Path, data_dir: str | Path) -> tuple[list[tuple[Path, Path, bool]], int]:
    """([(photo a, photo b, same person)], number of folds)."""
    lines = Path(pairs_file).read_text().split("\n")
    folds, per_fold = (int(v) for v in lines[0].split()[:2])
    data_dir = Path(data_dir)

    def photo(name: str, number: str) -> Path:
        return data_dir / name / f"{name}_{int(number):04d}.jpg"

    pairs = []
    for line in lines[1:]:
        parts = line.split()
        if len(parts) == 3:
            pairs.append((photo(parts[0], parts[1]), photo(parts[0], parts[2]), True))
        elif len(parts) == 4:
            pairs.append((photo(parts[0], parts[1]), photo(parts[2], parts[3]), False))
    if len(pairs) != folds * per_fold * 2:
        raise InvalidArgument(f"expected {folds * per_fold * 2} pairs in {pairs_file}, read {len(pairs)}")
    return pairs, folds


def best_threshold(similarities: np.ndarray, same: np.ndarray) -> float:
    candidates = np.unique(similarities)
    accuracies = [np.mean((similarities >= t) == same) for t in candidates]
    return float(candidates[int(np.argmax(accuracies))])


def evaluate_pairs(pairs_file: str | Path, data_dir: str | Path, pipeline: FacePipeline,
                   progress=None) -> PairsResult:
    pairs, folds = read_pairs(pairs_file, data_dir)
    unique = sorted({p for a, b, _ in pairs for p in (a, b)})
    photos = embed_photos(pipeline, unique, progress)
    row = {p: i for i, p in enumerate(unique)}
    similarities = np.array([float(photos.embeddings[row[a]] @ photos.embeddings[row[b]]) for a, b, _ in pairs])
    same = np.array([s for _, _, s in pairs])
    fold_of = np.repeat(np.arange(folds), len(pairs) // folds)
    accuracies, thresholds = [], []
    for fold in range(folds):
        train, test = fold_of != fold, fold_of == fold
        threshold = best_threshold(similarities[train], same[train])
        thresholds.append(threshold)
        accuracies.append(float(np.mean((similarities[test] >= threshold) == same[test])))
    from facerec.evaluation.oneshot import training_overlap

    policy = policy_for(pipeline.settings, pipeline.embedder.sha256)
    figures = {"accuracy_mean": float(np.mean(accuracies)), "accuracy_std": float(np.std(accuracies)),
               "fold_accuracies": accuracies, "thresholds": thresholds, "pairs": len(pairs),
               "policy_threshold": policy.for_verification().threshold,
               "training_overlap": training_overlap(sorted({p.parent.name for p in unique}),
                                                    pipeline.settings.model_card()),
               "photos": len(unique), "detection_failures": len(photos.detection_failures),
               "unreadable": len(photos.unreadable), "seconds": round(photos.seconds, 2),
               "photos_per_second": round(photos.photos_per_second, 2),
               "provenance": provenance(pipeline.settings.model_path, pipeline.settings.num_threads,
                                        pipeline.embedder)}
    return PairsResult(figures, same, similarities)
