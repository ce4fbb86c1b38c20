"""`--report DIR`: PNG plots (CMC, ROC/DET, genuine vs impostor histograms with the threshold), the JSON
figures, and a short markdown summary with the worst confusions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_json(figures: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(_jsonable(figures), indent=1))


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def roc_points(genuine: np.ndarray, impostor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FAR, TAR) over every threshold, for a log-scale ROC/DET plot."""
    thresholds = np.unique(np.concatenate([genuine, impostor]))[::-1]
    impostor_sorted, genuine_sorted = np.sort(impostor), np.sort(genuine)
    far = 1 - np.searchsorted(impostor_sorted, thresholds, side="left") / max(1, len(impostor))
    tar = 1 - np.searchsorted(genuine_sorted, thresholds, side="left") / max(1, len(genuine))
    return far, tar


def plot_similarity_histograms(genuine, impostor, threshold: float, path: Path, title: str) -> None:
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4))
    bins = np.linspace(-0.5, 1.0, 76)
    axis.hist(impostor, bins=bins, density=True, alpha=0.6, label=f"impostor ({len(impostor):,})")
    axis.hist(genuine, bins=bins, density=True, alpha=0.6, label=f"genuine ({len(genuine):,})")
    axis.axvline(threshold, color="black", linestyle="--", label=f"threshold {threshold:.3f}")
    axis.set_xlabel("cosine similarity")
    axis.set_ylabel("density")
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_roc(genuine, impostor, path: Path) -> None:
    plt = _pyplot()
    far, tar = roc_points(genuine, impostor)
    figure, (roc, det) = plt.subplots(1, 2, figsize=(10, 4))
    keep = far > 0
    roc.semilogx(far[keep], tar[keep])
    roc.set_xlabel("false accept rate")
    roc.set_ylabel("true accept rate")
    roc.set_title("ROC")
    roc.grid(True, which="both", alpha=0.3)
    frr = 1 - tar
    keep = (far > 0) & (frr > 0)
    det.loglog(far[keep], frr[keep])
    det.set_xlabel("false accept rate")
    det.set_ylabel("false reject rate")
    det.set_title("DET")
    det.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_cmc(cmc: np.ndarray, path: Path) -> None:
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    ranks = np.arange(1, len(cmc) + 1)
    axis.plot(ranks, cmc, marker="o")
    axis.set_xticks(ranks)
    axis.set_xlabel("rank")
    axis.set_ylabel("identification rate")
    axis.set_title("CMC")
    axis.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_one_shot_report(result, out_dir: str | Path, command: str) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = result.figures
    write_json(figures, out_dir / "eval.json")
    plot_cmc(result.cmc, out_dir / "cmc.png")
    plot_roc(result.genuine, result.impostor, out_dir / "roc_det.png")
    plot_similarity_histograms(result.genuine, result.impostor, figures["gallery_threshold"],
                               out_dir / "similarities.png", "query vs enrolled similarities")
    lines = [
        "# facerec one-shot evaluation", "", f"Command: `{command}`", "",
        "| figure | value |", "|---|---|",
        f"| identities (enrolled with a query) | {figures['n_identities']} |",
        f"| distractors | {figures['n_distractors']} |",
        f"| queries | {figures['n_queries']} |",
        f"| rank-1 | {figures['rank1']:.4f} |",
        f"| rank-5 | {figures['rank5']:.4f} |",
        f"| TAR @ FAR 1e-3 | {figures['tar_at_far']['1e-3']['tar']:.4f} |",
        f"| TAR @ FAR 1e-2 | {figures['tar_at_far']['1e-2']['tar']:.4f} |",
        f"| ClosestIsPositiveAccuracy | {_fmt(figures['closest_is_positive_accuracy'])} |",
        f"| detection failures | {figures['detection_failures']} |",
        f"| photos/s (end to end) | {figures['photos_per_second']:.2f} |",
        "", "Plots: `cmc.png`, `roc_det.png`, `similarities.png`.", "",
        "## Worst confusions (wrong rank-1 match, highest similarity first)", "",
        "| query | truth | matched | similarity |", "|---|---|---|---|",
    ]
    lines += [f"| {Path(c['query']).name} | {c['truth']} | {c['matched']} | {c['similarity']:.3f} |"
              for c in result.confusions[:20]]
    (out_dir / "summary.md").write_text("\n".join(lines) + "\n")
    return out_dir


def write_pairs_report(result, out_dir: str | Path, command: str) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = result.figures
    write_json(figures, out_dir / "eval_pairs.json")
    genuine, impostor = result.similarities[result.same], result.similarities[~result.same]
    plot_roc(genuine, impostor, out_dir / "roc_det.png")
    plot_similarity_histograms(genuine, impostor, float(np.mean(figures["thresholds"])),
                               out_dir / "similarities.png", "pair similarities")
    (out_dir / "summary.md").write_text(
        f"# facerec pair verification\n\nCommand: `{command}`\n\n"
        f"10-fold accuracy: {figures['accuracy_mean']:.4f} +- {figures['accuracy_std']:.4f} "
        f"over {figures['pairs']} pairs ({figures['detection_failures']} detection failures).\n"
    )
    return out_dir


def _fmt(value) -> str:
    return "undefined" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"
