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


def operating_point(genuine: np.ndarray, impostor: np.ndarray, threshold: float) -> tuple[float, float]:
    """(FAR, TAR) at `threshold` (accept when similarity >= threshold)."""
    far = float(np.mean(impostor >= threshold)) if len(impostor) else float("nan")
    tar = float(np.mean(genuine >= threshold)) if len(genuine) else float("nan")
    return far, tar


def roc_det_figure(genuine, impostor, threshold: float | None = None, threshold_label: str = "policy threshold"):
    """ROC (TAR against FAR) and DET (FRR against FAR) on log axes, with the operating point at `threshold`.

    A rate of zero cannot sit on a log axis: zeros are drawn at half of one error in the number of pairs (the
    dotted floor, labelled), so a perfect score still shows its curve and operating point instead of an empty
    panel."""
    plt = _pyplot()
    genuine, impostor = np.asarray(genuine, np.float64), np.asarray(impostor, np.float64)
    far, tar = roc_points(genuine, impostor)
    frr = 1 - tar
    far_floor, frr_floor = 0.5 / max(1, len(impostor)), 0.5 / max(1, len(genuine))
    figure, (roc, det) = plt.subplots(1, 2, figsize=(10, 4))
    roc.semilogx(np.maximum(far, far_floor), tar)
    roc.set_xlabel("false accept rate")
    roc.set_ylabel("true accept rate")
    roc.set_title("ROC")
    roc.set_ylim(max(0.0, min(0.9, float(tar.min(initial=1.0)) - 0.05)), 1.005)
    det.loglog(np.maximum(far, far_floor), np.maximum(frr, frr_floor))
    det.set_xlabel("false accept rate")
    det.set_ylabel("false reject rate")
    det.set_title("DET")
    det.axhline(frr_floor, color="grey", linestyle=":", linewidth=1,
                label=f"no false rejects (drawn at 1/{2 * max(1, len(genuine)):,})")
    for axis in (roc, det):
        axis.axvline(far_floor, color="grey", linestyle="--", linewidth=1,
                     label=f"no false accepts (drawn at 1/{2 * max(1, len(impostor)):,})")
        axis.grid(True, which="both", alpha=0.3)
    if threshold is not None and len(genuine) and len(impostor):
        point_far, point_tar = operating_point(genuine, impostor, threshold)
        text = (f"{threshold_label} {threshold:.3f}: FAR {_rate(point_far, len(impostor))}, "
                f"TAR {point_tar:.3f}")
        roc.plot([max(point_far, far_floor)], [point_tar], "o", color="crimson", label=text, zorder=3)
        det.plot([max(point_far, far_floor)], [max(1 - point_tar, frr_floor)], "o", color="crimson", label=text,
                 zorder=3)
    roc.legend(loc="lower right", fontsize=8)
    det.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    plt.close(figure)
    return figure


def _rate(rate: float, pairs: int) -> str:
    """A measured rate: '0 of N' when no error was seen, else short scientific notation."""
    from facerec.words.phrasing import rate_text

    return f"0 of {pairs:,}" if rate == 0 else rate_text(rate)


def plot_roc(genuine, impostor, path: Path, threshold: float | None = None,
             threshold_label: str = "policy threshold") -> None:
    roc_det_figure(genuine, impostor, threshold, threshold_label).savefig(path, dpi=110)


def cmc_figure(cmc: np.ndarray):
    """Identification rate by rank. The y axis ends at 1 (a rate cannot exceed it) and starts a little below the
    lowest value, so a perfect curve sits on the top edge instead of in a 0.96-1.04 band."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    ranks = np.arange(1, len(cmc) + 1)
    axis.plot(ranks, cmc, marker="o", clip_on=False)
    axis.set_xticks(ranks)
    lowest = float(np.min(cmc)) if len(cmc) else 1.0
    axis.set_ylim(max(0.0, min(0.9, np.floor((lowest - 0.05) * 20) / 20)), 1.0)
    axis.set_xlabel("rank")
    axis.set_ylabel("identification rate")
    axis.set_title("CMC")
    axis.grid(True, alpha=0.3)
    figure.tight_layout()
    plt.close(figure)
    return figure


def plot_cmc(cmc: np.ndarray, path: Path) -> None:
    cmc_figure(cmc).savefig(path, dpi=110)


def write_one_shot_report(result, out_dir: str | Path, command: str) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = result.figures
    write_json(figures, out_dir / "eval.json")
    plot_cmc(result.cmc, out_dir / "cmc.png")
    plot_roc(result.genuine, result.impostor, out_dir / "roc_det.png", figures["gallery_threshold"],
             "gallery threshold")
    plot_similarity_histograms(result.genuine, result.impostor, figures["gallery_threshold"],
                               out_dir / "similarities.png", "query vs enrolled similarities")
    lines = [
        "# facerec one-shot evaluation", "", f"Command: `{command}`", "",
        *[line for warning in report_warnings(figures) for line in (f"**Warning:** {warning}.", "")],
        "| figure | value |", "|---|---|",
        f"| identities (enrolled with a query) | {figures['n_identities']} |",
        f"| distractors | {figures['n_distractors']} |",
        f"| people in the gallery | {figures['n_gallery']} |",
        f"| queries | {figures['n_queries']} |",
        f"| rank-1 | {figures['rank1']:.4f} |",
        f"| rank-5 | {figures['rank5']:.4f} |",
        f"| TAR @ FAR 1e-5 | {figures['tar_at_far']['1e-5']['tar']:.4f} |",
        f"| TAR @ FAR 1e-4 | {figures['tar_at_far']['1e-4']['tar']:.4f} |",
        f"| TAR @ FAR 1e-3 | {figures['tar_at_far']['1e-3']['tar']:.4f} |",
        f"| TAR @ FAR 1e-2 | {figures['tar_at_far']['1e-2']['tar']:.4f} |",
        f"| ClosestIsPositiveAccuracy | {_fmt(figures['closest_is_positive_accuracy'])} |",
        f"| detection failures | {figures['detection_failures']} |",
        f"| photos/s (end to end) | {figures['photos_per_second']:.2f} |",
        "", "Plots: `cmc.png`, `roc_det.png` (the dot: the gallery's threshold), `similarities.png`.", "",
        "## Worst confusions (wrong rank-1 match, highest similarity first)", "",
    ]
    if result.confusions:
        lines += ["| query | truth | matched | similarity |", "|---|---|---|---|"]
        lines += [f"| {Path(c['query']).name} | {c['truth']} | {c['matched']} | {c['similarity']:.3f} |"
                  for c in result.confusions[:20]]
    else:  # an empty table under the heading read as a missing one
        lines.append("None: every query's rank-1 match was the right person.")
    (out_dir / "summary.md").write_text("\n".join(lines) + "\n")
    return out_dir


def write_pairs_report(result, out_dir: str | Path, command: str) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = result.figures
    write_json(figures, out_dir / "eval_pairs.json")
    genuine, impostor = result.similarities[result.same], result.similarities[~result.same]
    plot_roc(genuine, impostor, out_dir / "roc_det.png", figures.get("policy_threshold"),
             "verification threshold")
    plot_similarity_histograms(genuine, impostor, float(np.mean(figures["thresholds"])),
                               out_dir / "similarities.png", "pair similarities")
    warnings = "".join(f"**Warning:** {warning}.\n\n" for warning in report_warnings(figures))
    (out_dir / "summary.md").write_text(
        f"# facerec pair verification\n\nCommand: `{command}`\n\n{warnings}"
        f"10-fold accuracy: {figures['accuracy_mean']:.4f} +- {figures['accuracy_std']:.4f} "
        f"over {figures['pairs']} pairs ({figures['detection_failures']} detection failures).\n"
    )
    return out_dir


def report_warnings(figures: dict) -> list[str]:
    """The warnings a summary opens with: training people among the evaluated, figures from too few searches."""
    from facerec.evaluation.open_set import warnings as open_set_warnings

    found = [(figures.get("training_overlap") or {}).get("warning")]
    found += open_set_warnings(figures.get("open_set") or {})
    return [warning for warning in found if warning]


def _fmt(value) -> str:
    return "undefined" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"
