"""Pictures for people: detected faces drawn on the photo (numbered), health and policy plots."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from facerec.faces.detect import DetectedFace
from facerec.messages import percent_text

KNOWN, UNKNOWN, NEUTRAL = (40, 200, 80), (230, 60, 60), (60, 140, 255)


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


LABEL_SHARE = 26  # a label's font size, as a share of the photo's longer side


def annotate(pixels: np.ndarray, faces: list[DetectedFace], labels: list[str] | None = None,
             colours: list[tuple[int, int, int]] | None = None, landmarks: bool = False) -> np.ndarray:
    """The photo with a box (and label) per face; label defaults to the face's index."""
    image = Image.fromarray(pixels).convert("RGB")
    draw = ImageDraw.Draw(image)
    side = max(image.size)
    width = max(2, side // 300)
    # Labels scale with the photo, so they stay readable however small the page shows it: at 1/26 of the photo's
    # longer side a label is ~13 px high on a 360 px-wide phone screen (#31 item 8).
    font = _font(max(14, side // LABEL_SHARE))
    for number, face in enumerate(faces):
        colour = colours[number] if colours else NEUTRAL
        label = labels[number] if labels else f"#{number}"
        x1, y1, x2, y2 = face.box
        draw.rectangle([x1, y1, x2, y2], outline=colour, width=width)
        text_box = draw.textbbox((x1, y1), label, font=font)
        text_width, text_height = text_box[2] - text_box[0], text_box[3] - text_box[1]
        top = y1 - text_height - 2 * width if y1 - text_height - 2 * width > 0 else y2 + width
        # Inside the picture: a label that would run off the right edge moves left, never cut.
        left = max(0, min(x1, image.width - text_width - 2 * width))
        draw.rectangle([left, top, left + text_width + 2 * width, top + text_height + 2 * width], fill=colour)
        draw.text((left + width, top), label, fill=(255, 255, 255), font=font)
        if landmarks:
            for x, y in face.landmarks:
                draw.ellipse([x - width, y - width, x + width, y + width], fill=colour)
    return np.asarray(image)


def similarity_histogram(similarities: list[float], threshold: float, title: str):
    """A matplotlib figure: nearest-other-identity similarities against the match threshold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(6, 3))
    if similarities:
        # Edged bars, so neighbouring bins read as separate counts.
        axis.hist(similarities, bins=np.linspace(-0.5, 1.0, 61), color="#4c8bf5", edgecolor="#1e3a8a",
                  linewidth=0.8)
    axis.axvline(threshold, color="crimson", linestyle="--", label=f"match threshold {threshold:.3f}")
    axis.set_xlabel("cosine similarity to the nearest other person")
    axis.set_ylabel("people")
    axis.yaxis.set_major_locator(MaxNLocator(integer=True))  # whole people: never a tick at 0.5
    axis.set_title(title)
    axis.legend(loc="upper left")
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
    figure, axis = plt.subplots(figsize=(6, 3))
    axis.semilogx(sizes, [r.threshold for r in rows], color="crimson", label="similarity threshold")
    axis.set_xlabel("enrolled faces")
    axis.set_ylabel("similarity threshold", color="crimson")
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
    axis.legend(handles=handles, loc="lower right", fontsize=8)
    figure.tight_layout()
    plt.close(figure)
    return figure


def sightings_trend_plot(trend: list[dict], unit: str, threshold: float):
    """A matplotlib figure: per window of sightings (a day, or a block of them), MedianClosestPositiveDistance
    (left axis, with the threshold's distance) and ClosestIsPositiveAccuracy (right axis). `trend` as
    `facerec.gallery.sightings_health` gives it; a rising distance is drift."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    positions = list(range(len(trend)))
    figure, axis = plt.subplots(figsize=(6, 3))
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
    axis.legend(handles=handles, loc="best", fontsize=7)
    figure.tight_layout()
    plt.close(figure)
    return figure
