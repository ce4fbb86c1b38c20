"""Gallery health: how well the enrolled faces separate, read off the spec's embedding metrics.

Distances are Euclidean between unit vectors, so d = sqrt(2 - 2 cos): 0 for identical faces, sqrt(2) ~ 1.41 for
unrelated (orthogonal) ones. The report says in plain words what each figure means, and why a figure is
undefined (a one-photo-per-person gallery has no positives).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .metrics import ClosestIsPositiveAccuracy, MedianDistances


@dataclass
class HealthReport:
    identities: int
    faces: int
    threshold: float
    closest_is_positive_accuracy: float
    median_distances: dict[str, float]
    readings: dict[str, str]
    confusable_pairs: list[dict] = field(default_factory=list)
    suspected_duplicates: list[dict] = field(default_factory=list)
    nearest_other_similarities: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    threshold_policy: dict = field(default_factory=dict)  # the threshold in force and its expected FPIR
    policy_growth: list[dict] = field(default_factory=list)  # threshold and true-match rate vs gallery size

    def to_dict(self) -> dict:
        def clean(value: float) -> float | None:
            return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(value, 4)

        return {
            "identities": self.identities, "faces": self.faces, "threshold": round(self.threshold, 4),
            "closest_is_positive_accuracy": clean(self.closest_is_positive_accuracy),
            "median_distances": {k: clean(v) for k, v in self.median_distances.items()},
            "readings": self.readings, "confusable_pairs": self.confusable_pairs,
            "suspected_duplicates": self.suspected_duplicates,
            "nearest_other_similarities": [round(s, 4) for s in self.nearest_other_similarities],
            "notes": self.notes, "threshold_policy": self.threshold_policy, "policy_growth": self.policy_growth,
        }


def similarity_to_distance(similarity: float) -> float:
    return math.sqrt(max(0.0, 2.0 - 2.0 * similarity))


def gallery_health(embeddings: np.ndarray, identity_ids: np.ndarray, names: dict[int, str],
                   threshold: float, top_pairs: int = 10) -> HealthReport:
    """Health of a gallery from its face embeddings [N, D] (unit length) and the identity id of each face."""
    identity_ids = np.asarray(identity_ids, dtype=np.int64)
    count = len(identity_ids)
    accuracy, medians = ClosestIsPositiveAccuracy(), MedianDistances()
    if count:
        accuracy.update(embeddings, identity_ids)
        medians.update(embeddings, identity_ids)
    median_result = medians.compute()
    cipa, distances = accuracy.compute(), dict(median_result)
    notes = [median_result.note] if median_result.note else []
    pairs, nearest = _cross_identity_pairs(embeddings, identity_ids, names)
    report = HealthReport(
        identities=len(set(identity_ids.tolist())), faces=count, threshold=threshold,
        closest_is_positive_accuracy=cipa, median_distances=distances,
        readings=_readings(cipa, distances, threshold, count, nearest),
        confusable_pairs=pairs[:top_pairs],
        suspected_duplicates=[p for p in pairs if p["similarity"] >= threshold],
        nearest_other_similarities=nearest, notes=notes,
    )
    return report


def _cross_identity_pairs(embeddings: np.ndarray, identity_ids: np.ndarray, names: dict[int, str]):
    """Most similar pair of faces for each pair of identities (highest first), and for every identity the
    similarity of its nearest other identity."""
    unique = sorted(set(identity_ids.tolist()))
    if len(unique) < 2:
        return [], []
    best_pair: dict[tuple[int, int], float] = {}
    nearest: dict[int, float] = {}
    block = 1024
    for start in range(0, len(identity_ids), block):
        sims = embeddings[start : start + block] @ embeddings.T
        rows = identity_ids[start : start + block]
        sims[rows[:, None] == identity_ids[None, :]] = -np.inf
        best_cols = np.argsort(-sims, axis=1)[:, :5]
        for r, cols in enumerate(best_cols):
            a = int(rows[r])
            for c in cols:
                value = float(sims[r, c])
                if not np.isfinite(value):
                    continue
                b = int(identity_ids[c])
                key = (min(a, b), max(a, b))
                best_pair[key] = max(best_pair.get(key, -1.0), value)
                nearest[a] = max(nearest.get(a, -1.0), value)
    pairs = [{"a": names[a], "b": names[b], "a_id": a, "b_id": b, "similarity": round(s, 4)}
             for (a, b), s in sorted(best_pair.items(), key=lambda kv: -kv[1])]
    return pairs, [nearest[i] for i in unique if i in nearest]


def figure_text(value: float | None) -> str:
    """A health figure as the page, the CLI and the readings print it: three decimals, or 'undefined'. Always from
    the unrounded value, so the table and the sentence beside it never differ in the last digit."""
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


def nearest_other_person_distance(nearest_other_similarities: list[float]) -> float:
    """Median, over people, of the distance from a person's faces to the nearest face of anyone else (NaN with
    fewer than two people): how close the gallery's closest look-alikes are, leaving a person's own photos out."""
    if not nearest_other_similarities:
        return float("nan")
    return similarity_to_distance(float(np.median(nearest_other_similarities)))


def _readings(cipa: float, distances: dict[str, float], threshold: float, count: int,
              nearest_others: list[float] | None = None) -> dict[str, str]:
    """Each figure in plain words; `nearest_others`: per person, the similarity of their nearest other person."""
    nearest_others = nearest_others or []
    nearest_other = nearest_other_person_distance(nearest_others)
    threshold_distance = figure_text(similarity_to_distance(threshold))
    readings: dict[str, str] = {}
    if math.isnan(cipa):
        readings["closest_is_positive_accuracy"] = (
            "Undefined: no enrolled person has two or more photos, so no face has a same-person neighbour to "
            "find. Add a second photo of some people (Gallery tab, 'Add a photo to a person') to define it."
        )
    else:
        readings["closest_is_positive_accuracy"] = (
            f"{cipa:.1%} of faces whose person has several photos have another photo of the same person as their "
            "nearest neighbour. Near 100% means the gallery separates people well; low values mean photos "
            "of one person sit closer to other people than to each other."
        )
    md = distances["MedianDistance"]
    readings["MedianDistance"] = (
        "Undefined: fewer than two faces." if math.isnan(md) else
        f"Typical distance between any two faces: {figure_text(md)}. Unrelated faces sit near 1.41; the match "
        f"threshold corresponds to distance {threshold_distance}."
    )
    mc = distances["MedianClosestDistance"]
    has_positives = not math.isnan(distances["MedianClosestPositiveDistance"])
    if math.isnan(mc):
        readings["MedianClosestDistance"] = "Undefined: fewer than two faces."
    elif has_positives:
        # The nearest face is often the person's own other photo: that says nothing about look-alikes.
        readings["MedianClosestDistance"] = (
            f"Typical distance from a face to its nearest other face: {figure_text(mc)}. For people with several "
            "photos that face is usually their own other photo, so see the nearest other person below for "
            "look-alikes.")
    else:
        readings["MedianClosestDistance"] = (
            f"Typical distance from a face to its nearest other face (always another person here, as everyone "
            f"has one photo): {figure_text(mc)}. " + _look_alike_reading(mc, threshold, threshold_distance))
    positive = distances["MedianClosestPositiveDistance"]
    readings["MedianClosestPositiveDistance"] = (
        _no_positives() if not has_positives else
        f"Typical distance from a face to the nearest other photo of the same person: {figure_text(positive)}. "
        + (f"Below the threshold distance {threshold_distance}: a person's photos usually match each other, so a "
           "new photo of them is usually recognised." if positive < similarity_to_distance(threshold) else
           f"Above the threshold distance {threshold_distance}: a person's own photos often do not match each "
           "other, so a new photo of them may not be recognised."))
    gap = distances["MedianClosestVsClosestPositiveDistance"]
    readings["MedianClosestVsClosestPositiveDistance"] = (
        _no_positives() if math.isnan(gap) else
        f"How much farther a person's own nearest photo is than their nearest face overall: typically "
        f"{figure_text(gap)}. 0 means the nearest face is usually the same person's.")
    twins = sum(similarity >= threshold for similarity in nearest_others)
    readings["NearestOtherPerson"] = (
        "Undefined: fewer than two people." if math.isnan(nearest_other) else
        f"Typical distance from a person to the nearest face of anyone else: {figure_text(nearest_other)}. "
        + (_look_alike_reading(nearest_other, threshold, threshold_distance) if not twins else
           f"{twins} of {len(nearest_others)} people have a near-twin in the gallery: another person at or above "
           "the match threshold (see the suspected duplicates)."))
    return readings


def _look_alike_reading(distance: float, threshold: float, threshold_distance: str) -> str:
    if distance > similarity_to_distance(threshold):
        return f"Well above the threshold distance {threshold_distance}: different people are clearly distinct."
    return (f"Below the threshold distance {threshold_distance}: many people have a near-twin in the gallery "
            "(see the suspected duplicates).")


def _no_positives() -> str:
    return "Undefined: needs people with at least two photos (a one-photo-per-person gallery has no positives)."
