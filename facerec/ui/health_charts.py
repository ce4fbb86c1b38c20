"""The Health tab's charts (matplotlib figures): nearest-other-person similarities against the threshold, the
threshold as the gallery grows, and the sightings' trend. Drawn from the numbers `facerec.gallery.health` gives."""

from __future__ import annotations

import numpy as np

from facerec.words.phrasing import percent_text


def similarity_histogram(similarities: list[float], threshold: float, title: str):
    """A matplotlib figure: nearest-other-identity similarities against the threshold (as the cosine two typical
    faces have at it: the histogram is of cosines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(6, 3))
    if similarities:
        # Edged bars, so neighbouring bins read as separate counts.
        axis.hist(similarities, bins=np.linspace(-0.5, 1.0, 61), color="#4c8bf5", edgecolor="#1e3a8a",
                  linewidth=0.8)
    axis.axvline(threshold, color="crimson", linestyle="--", label=f"the threshold, as a similarity ({threshold:.3f})")
    axis.set_xlabel("cosine similarity to the nearest other person")
    axis.set_ylabel("people")
    axis.yaxis.set_major_locator(MaxNLocator(integer=True))  # whole people: never a tick at 0.5
    axis.set_title(title)
    # Below the plot: inside it, at 390 px the legend covered the bars it explains (#64 row 9)
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False, fontsize="small")
    figure.tight_layout()
    plt.close(figure)
    return figure


def policy_growth_plot(rows: list, current_faces: int):
    """A matplotlib figure: the threshold in force (left axis) and the expected true-match rate (right axis)
    against the number of enrolled faces (log scale), with the current gallery marked. `rows` are
    `ThresholdInForce` values from `ThresholdPolicy.growth`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r.comparisons for r in rows]
    figure, axis = plt.subplots(figsize=(6, 3.5))
    what = "similarity threshold" if rows and rows[0].on_cosines else "score threshold"  # as Identify says it
    axis.semilogx(sizes, [r.threshold for r in rows], color="crimson", label=what)
    axis.set_xlabel("enrolled faces")
    axis.set_ylabel(what, color="crimson")
    rates = [r.true_match_rate for r in rows]
    if all(rate is not None for rate in rates):
        other = axis.twinx()
        other.semilogx(sizes, rates, color="#4c8bf5", linestyle="--", label="expected true-match rate")
        other.set_ylabel("expected true-match rate", color="#4c8bf5")
        other.set_ylim(0, 1)
    axis.axvline(max(1, current_faces), color="grey", linestyle=":", label=f"this gallery ({current_faces:,})")
    target = rows[0].target_fpir if rows else None
    axis.set_title("Threshold as the gallery grows" + (f" (stranger-match rate {percent_text(target)})"
                                                        if target else ""))
    handles = [h for ax in figure.axes for h in ax.get_legend_handles_labels()[0]]
    # Below the axes, never over the curves (inside, it covered the true-match rate's fall).
    axis.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8, frameon=False)
    figure.tight_layout()
    plt.close(figure)
    return figure


def sightings_trend_plot(trend: list[dict], unit: str, threshold: float):
    """A matplotlib figure: per window of sightings (a day, or a block of them), MedianClosestPositiveDistance
    (left axis, with the threshold's distance) and ClosestIsPositiveAccuracy (right axis). `trend` as
    `facerec.gallery.health.sightings` gives it; a rising distance is drift."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    positions = list(range(len(trend)))
    figure, axis = plt.subplots(figsize=(6, 3.4))
    distance = [np.nan if t["MedianClosestPositiveDistance"] is None else t["MedianClosestPositiveDistance"]
                for t in trend]
    axis.plot(positions, distance, marker="o", color="#4c8bf5", label="MedianClosestPositiveDistance")
    axis.axhline(np.sqrt(max(0.0, 2 - 2 * threshold)), color="crimson", linestyle="--",
                 label=f"threshold distance ({threshold:.3f} similarity)")
    axis.set_ylabel("distance to own person")
    axis.set_ylim(0, 1.45)
    other = axis.twinx()
    accuracy = [np.nan if t["closest_is_positive_accuracy"] is None else t["closest_is_positive_accuracy"]
                for t in trend]
    other.plot(positions, accuracy, marker="s", color="#16a34a", linestyle=":", label="ClosestIsPositiveAccuracy")
    other.set_ylim(0, 1.05)
    other.set_ylabel("ClosestIsPositiveAccuracy")
    axis.set_xticks(positions, [t["window"] for t in trend], rotation=30 if len(trend) > 6 else 0, fontsize=8)
    axis.set_xlabel("day (UTC)" if unit == "day" else "sightings, in arrival order")
    axis.set_title("Faces seen, against their enrollments")
    handles = [h for ax in figure.axes for h in ax.get_legend_handles_labels()[0]]
    # below the axes, never over the lines (#64 row 9: "best" still covered the plot on a phone)
    axis.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, fontsize=7, frameon=False)
    figure.tight_layout()
    plt.close(figure)
    return figure
