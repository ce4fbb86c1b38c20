"""Health in plain words: each figure's reading, the sightings' trend, and the one way every figure is printed.

Distances are Euclidean between unit vectors, d = sqrt(2 - 2 cos): 0 for identical faces, sqrt(2) ~ 1.41 for
unrelated ones; each reading compares a figure with the threshold's distance (the cosine two typical faces have
at it). `readings` is for the enrolled faces alone (saying why a figure is undefined in a one-photo gallery); `memory_readings` for the figures
over enrolled faces + sightings, saying what they rest on and how automatic sightings flatter them.
"""

from __future__ import annotations

import math

from facerec.words.engines import search_index_text
from facerec.words.phrasing import plural, score_text


def figure_text(value: float | None) -> str:
    """A health figure as the page, the CLI and the readings print it: three decimals, or 'undefined'. Always from
    the unrounded value, so the table and the sentence beside it never differ in the last digit."""
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


def readings(cipa: float, distances: dict[str, float], threshold_distance: float, count: int,
             nearest_other: float = math.nan, twins: int = 0, people: int = 0) -> dict[str, str]:
    """Each figure in plain words (the figures are computed by `facerec.gallery.health`: `threshold_distance`, the
    threshold as a distance; `nearest_other`, the typical distance to the nearest other person; `twins` of
    `people` reach the threshold with theirs)."""
    shown = figure_text(threshold_distance)
    found: dict[str, str] = {}
    if math.isnan(cipa):
        found["closest_is_positive_accuracy"] = (
            "Undefined: no enrolled person has two or more photos, so no face has a same-person neighbour to "
            "find. Add a second photo of some people (Gallery tab, 'Add a photo to a person') to define it."
        )
    else:
        found["closest_is_positive_accuracy"] = (
            f"{cipa:.1%} of faces whose person has several photos have another photo of the same person as their "
            "nearest neighbour. Near 100% means the gallery separates people well; low values mean photos "
            "of one person sit closer to other people than to each other."
        )
    md = distances["MedianDistance"]
    found["MedianDistance"] = (
        "Undefined: fewer than two faces." if math.isnan(md) else
        f"Typical distance between any two faces: {figure_text(md)}. Unrelated faces sit near 1.41; the "
        f"threshold corresponds to distance {shown}."
    )
    mc = distances["MedianClosestDistance"]
    has_positives = not math.isnan(distances["MedianClosestPositiveDistance"])
    if math.isnan(mc):
        found["MedianClosestDistance"] = "Undefined: fewer than two faces."
    elif has_positives:
        # The nearest face is often the person's own other photo: that says nothing about look-alikes.
        found["MedianClosestDistance"] = (
            f"Typical distance from a face to its nearest other face: {figure_text(mc)}. For people with several "
            "photos that face is usually their own other photo, so see the nearest other person below for "
            "look-alikes.")
    else:
        found["MedianClosestDistance"] = (
            f"Typical distance from a face to its nearest other face (always another person here, as everyone "
            f"has one photo): {figure_text(mc)}. " + _look_alike_reading(mc, threshold_distance))
    positive = distances["MedianClosestPositiveDistance"]
    found["MedianClosestPositiveDistance"] = (
        _no_positives() if not has_positives else
        f"Typical distance from a face to the nearest other photo of the same person: {figure_text(positive)}. "
        + (f"Below the threshold distance {shown}: a person's photos usually match each other, so a "
           "new photo of them is usually recognised." if positive < threshold_distance else
           f"Above the threshold distance {shown}: a person's own photos often do not match each "
           "other, so a new photo of them may not be recognised."))
    gap = distances["MedianClosestVsClosestPositiveDistance"]
    found["MedianClosestVsClosestPositiveDistance"] = (
        _no_positives() if math.isnan(gap) else
        f"How much farther a person's own nearest photo is than their nearest face overall: typically "
        f"{figure_text(gap)}. 0 means the nearest face is usually the same person's.")
    found["NearestOtherPerson"] = (
        "Undefined: fewer than two people." if math.isnan(nearest_other) else
        f"Typical distance from a person to the nearest face of anyone else: {figure_text(nearest_other)}. "
        + (_look_alike_reading(nearest_other, threshold_distance) if not twins else
           f"{twins} of {people} people have a near-twin in the gallery: another person at or above "
           "the threshold (see the suspected duplicates)."))
    return found


def memory_readings(seen: dict, report) -> dict[str, str]:
    """The readings of the figures scored over enrolled faces + sightings (the same sentences as for enrolled
    faces, a sighting counting as another photo of its person), each saying what it rests on and its bias; `seen`:
    the report's `sightings` numbers; `report` gives the threshold and the nearest-other figures."""
    found = readings(_number(seen["closest_is_positive_accuracy"]),
                     {key: _number(value) for key, value in seen["median_distances"].items()},
                     report.threshold_distance,
                     seen["enrolled_faces"] + seen["sightings"], *_nearest_other(report))
    by_user = seen["sources"].get("confirmed", 0) + seen["sources"].get("corrected", 0)
    basis = (f"Over {plural(seen['enrolled_faces'], 'enrolled face')} and {plural(seen['sightings'], 'sighting')} "
             f"of {plural(seen['people_seen'], 'person', 'people')} (recent identifications kept as photos of their "
             f"person: {seen['sightings'] - by_user:,} named automatically, because they cleared the threshold, "
             f"which flatters these figures; {by_user:,} confirmed or corrected by a user).")
    found["closest_is_positive_accuracy"] += " " + basis
    for key in ("MedianDistance", "MedianClosestDistance", "MedianClosestPositiveDistance",
                "MedianClosestVsClosestPositiveDistance"):
        found[key] += f" (With {plural(seen['sightings'], 'sighting')}.)"
    return found


def _look_alike_reading(distance: float, threshold_distance: float) -> str:
    shown = figure_text(threshold_distance)
    if distance > threshold_distance:
        return f"Well above the threshold distance {shown}: different people are clearly distinct."
    return (f"Below the threshold distance {shown}: many people have a near-twin in the gallery "
            "(see the suspected duplicates).")


def _no_positives() -> str:
    return "Undefined: needs people with at least two photos (a one-photo-per-person gallery has no positives)."


def trend_reading(trend: list[dict], unit: str, drift: float, min_block: int) -> str:
    """The sightings' trend in one sentence: drifting (the median distance rose by `drift` or more), improving or
    steady; a trend needs two windows, each a day or a block of at least `min_block` sightings."""
    key = "MedianClosestPositiveDistance"
    points = [(t["window"], t[key]) for t in trend if t[key] is not None]
    if len(points) < 2:
        return ("Not enough sightings for a trend yet: it needs two windows (days, or blocks of at least "
                f"{min_block} sightings).")
    (first_window, first), (last_window, last) = points[0], points[-1]
    per = "day" if unit == "day" else "block of sightings"
    change = last - first
    if change >= drift:
        return (f"Drifting: faces seen now sit farther from their people's enrollments than at first "
                f"(MedianClosestPositiveDistance {first:.3f} in {first_window} -> {last:.3f} in {last_window}, per "
                f"{per}). A new camera, different light, or enrollment photos growing out of date do this; the weak "
                "enrollments below say whose photo to replace.")
    if change <= -drift:
        return (f"Improving: faces seen now sit closer to their enrollments than at first ({first:.3f} -> "
                f"{last:.3f}, per {per}).")
    return (f"Steady: faces seen sit as close to their enrollments as at first (MedianClosestPositiveDistance "
            f"{first:.3f} -> {last:.3f}, per {per}; a rise of {drift} or more would be drift).")


def pair_text(pair: dict) -> str:
    """One confusable pair as every interface prints it: "Tony Blair ~ Alan Ball (similarity 0.334)" (their
    cosine, named as what it is: the threshold users see is a score)."""
    return f"{pair['a']} ~ {pair['b']} (similarity {figure_text(pair['similarity'])})"


def on_cosines(score_threshold: float | None, cosine: float) -> bool:
    """Whether the gallery decides on raw cosines (a model calibrated on them): its threshold is the cosine itself."""
    return score_threshold is None or abs(score_threshold - cosine) < 1e-9


def threshold_words(score_threshold: float | None, cosine: float) -> str:
    """The threshold as Identify and Verify show it (one number users see), with the cosine similarity two
    typical faces have at it, which Health's figures are read against (#64 row 4: Health said "match threshold
    0.530" where Identify said "Score threshold 4.32" for the same decision)."""
    if on_cosines(score_threshold, cosine):
        return f"similarity threshold {figure_text(cosine)}"
    return f"score threshold {score_text(score_threshold)} (two faces at a cosine similarity of {figure_text(cosine)})"


CLOSEST_SHOWN = 3  # pairs listed when none is close to the threshold: the closest few, as such


def confusable_pairs_in_words(pairs: list[dict], threshold: float) -> tuple[str, list[dict]]:
    """(heading, the pairs to show) for the report's confusable pairs (cosines) and `threshold` (the cosine two
    typical faces must reach): "Most confusable pairs" only when some pair is close to the threshold (its
    `near_threshold`); else "No two people are close to the threshold (a cosine similarity of 0.487); ..." over the
    closest few, so pairs far below it are never called confusable. ("", []) when there are none."""
    if not pairs:
        return "", []
    near = sum(bool(pair.get("near_threshold")) for pair in pairs)
    if near:
        return (f"Most confusable pairs by cosine similarity ({near:,} close to the threshold's similarity "
                f"{figure_text(threshold)}):", pairs)
    return (f"No two people are close to the threshold (a cosine similarity of {figure_text(threshold)}); the "
            "closest pairs by similarity:", pairs[:CLOSEST_SHOWN])


def confusable_pairs_line(pairs: list[dict], threshold: float) -> str:
    """The confusable pairs in one line for the terminal (empty when there are none)."""
    heading, shown = confusable_pairs_in_words(pairs, threshold)
    return f"{heading} " + "; ".join(pair_text(pair) for pair in shown) if shown else ""


def health_in_words(report) -> dict:
    """`report` (a `facerec.gallery.health.HealthReport`) as every interface shows it: its numbers, with each
    figure's reading (`readings`) and the sightings' trend (`sightings.trend_reading`)."""
    data = report.to_dict()
    alone = report.enrolled_only or {"closest_is_positive_accuracy": report.closest_is_positive_accuracy,
                                     "median_distances": report.median_distances}
    data["readings"] = readings(alone["closest_is_positive_accuracy"], alone["median_distances"],
                                report.threshold_distance, report.faces, *_nearest_other(report))
    if data["search_index"]:
        data["readings"]["search_index"] = search_index_text(data["search_index"])
    memory = data["sightings"]
    if memory.get("sightings"):
        data["readings"].update(memory_readings(memory, report))
        memory["trend_reading"] = trend_reading(memory["trend"], memory["trend_unit"], memory["drift"],
                                                memory["min_block"])
    return data


def _nearest_other(report) -> tuple[float, int, int]:
    return report.nearest_other_person, report.near_twins, len(report.nearest_other_similarities)


def _number(value) -> float:
    """A figure as the report's dict carries it (None for undefined) back to a float (NaN for undefined)."""
    return math.nan if value is None else float(value)
