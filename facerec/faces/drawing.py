"""Pictures for people: detected faces drawn on the photo (numbered), health and policy plots."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from facerec.faces.detect import DetectedFace, rescaled
from facerec.faces.image import shrunk
from facerec.messages import percent_text

KNOWN, UNKNOWN, NEUTRAL = (40, 200, 80), (230, 60, 60), (60, 140, 255)


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


LABEL_SHARE = 26  # a label's font size, as a share of the photo's longer side


Box = tuple[float, float, float, float]


def annotate(pixels: np.ndarray, faces: list[DetectedFace], labels: list[str] | None = None,
             colours: list[tuple[int, int, int]] | None = None, landmarks: bool = False,
             max_side: int | None = None, scale: float = 1.0) -> np.ndarray:
    """The photo with a box (and label) per face; label defaults to the face's index. Labels never cover each
    other (`label_layout`). `scale`: of `pixels` against the coordinates the faces are given in (a photo shrunk
    while decoding, `Photo.scale`). With `max_side`, drawn on a copy shrunk to it (what a page shows), never on a
    full-size copy of a large photo."""
    if max_side:
        pixels, shrink = shrunk(pixels, max_side)
        scale *= shrink
    if scale != 1.0:
        faces = [rescaled(face, scale) for face in faces]
    image = Image.fromarray(pixels).convert("RGB")
    draw = ImageDraw.Draw(image)
    width = max(2, max(image.size) // 300)
    labels = labels or [f"#{number}" for number in range(len(faces))]
    for number, face in enumerate(faces):
        draw.rectangle(list(face.box), outline=colours[number] if colours else NEUTRAL, width=width)
    for number, (text, box, font) in enumerate(label_layout(image.size, faces, labels, width)):
        colour = colours[number] if colours else NEUTRAL
        draw.rectangle(list(box), fill=colour)
        draw.text((box[0] + width, box[1]), text, fill=(255, 255, 255), font=font)
        if landmarks:
            for x, y in faces[number].landmarks:
                draw.ellipse([x - width, y - width, x + width, y + width], fill=colour)
    return np.asarray(image)


def label_layout(size: tuple[int, int], faces: list[DetectedFace], labels: list[str],
                 width: int = 2) -> list[tuple[str, Box, ImageFont.ImageFont]]:
    """Where each face's label goes: (the text drawn, its rectangle, its font), inside the picture and overlapping
    no other label.

    Labels scale with the photo, so they stay readable however small the page shows it (at 1/26 of the photo's
    longer side a label is ~13 px high on a 360 px-wide phone screen). Each label tries, in turn: above its box,
    below it, inside its top edge; a label that fits nowhere is shortened to its number ("#2"; the table beside
    the picture names it), then set in a smaller font, then stacked where it meets nothing. Wide photos of
    people side by side are where full labels collided ("#2 Serena Williams 0.930" over "#1 unknown")."""
    image_width, image_height = size
    placed: list[Box] = []
    layout = []
    base = max(14, max(size) // LABEL_SHARE)
    for number, (face, label) in enumerate(zip(faces, labels)):
        choice = None
        for text, font_size in ((label, base), (f"#{number}", base), (f"#{number}", max(10, base * 2 // 3))):
            font = _font(font_size)
            for box in _label_spots(face.box, _text_size(font, text), width, image_width, image_height):
                if not any(_overlap(box, other) for other in placed):
                    choice = (text, box, font)
                    break
            if choice:
                break
        if choice is None:  # nowhere free near the face: the first free row from the top, at the face's left
            font = _font(max(10, base * 2 // 3))
            text = f"#{number}"
            text_width, text_height = _text_size(font, text)
            left = max(0.0, min(face.box[0], image_width - text_width - 2 * width))
            top = 0.0
            box = (left, top, left + text_width + 2 * width, top + text_height + 2 * width)
            while any(_overlap(box, other) for other in placed) and box[3] < image_height:
                top = max(other[3] for other in placed if _overlap(box, other)) + 1
                box = (left, top, box[2], top + text_height + 2 * width)
            choice = (text, box, font)
        placed.append(choice[1])
        layout.append(choice)
    return layout


def _text_size(font, text: str) -> tuple[float, float]:
    left, top, right, bottom = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox((0, 0), text, font=font)
    return right - left, bottom - top


def _label_spots(face: Box, text: tuple[float, float], width: int, image_width: int, image_height: int):
    """Candidate rectangles for a label of `text` (width, height) next to a face box: above, below, inside."""
    x1, y1, x2, y2 = face
    box_width, box_height = text[0] + 2 * width, text[1] + 2 * width
    left = max(0.0, min(x1, image_width - box_width))  # inside the picture: moved left, never cut
    for top in (y1 - box_height - width, y2 + width, y1 + width):
        if 0 <= top and top + box_height <= image_height and box_width <= image_width:
            yield (left, top, left + box_width, top + box_height)


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


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
    figure, axis = plt.subplots(figsize=(6, 3.5))
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
    # Below the axes, never over the curves (inside, it covered the true-match rate's fall).
    axis.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=8, frameon=False)
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
