"""Gallery health: how well the enrolled faces separate, read off the spec's embedding metrics.

Distances are Euclidean between unit vectors, so d = sqrt(2 - 2 cos): 0 for identical faces, sqrt(2) ~ 1.41 for
unrelated (orthogonal) ones. The report says in plain words what each figure means, and why a figure is
undefined (a one-photo-per-person gallery has no positives).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..metrics import ClosestIsPositiveAccuracy, MedianDistances

if TYPE_CHECKING:
    from . import Gallery


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


def gallery_report(gallery: Gallery, top_pairs: int = 10) -> HealthReport:
    """`Gallery.health`: the report over every enrolled face, at the threshold in force."""
    store = gallery.store
    face_ids, embeddings = store.embeddings()
    labels = store.face_labels()
    identity_ids = np.array([labels[int(f)][0] for f in face_ids], dtype=np.int64)
    names = {identity: name for identity, name in labels.values()}
    rule = gallery.threshold_in_force(with_people=True)
    report = gallery_health(embeddings, identity_ids, names, rule.threshold, top_pairs)
    report.threshold_policy = rule.to_dict()
    report.policy_growth = [{"faces": r.comparisons, "threshold": round(r.threshold, 4),
                             "expected_fpir": r.expected_fpir, "true_match_rate": r.true_match_rate}
                            for r in gallery.policy.growth()]
    return report


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
        readings=_readings(cipa, distances, threshold, count),
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


def _readings(cipa: float, distances: dict[str, float], threshold: float, count: int) -> dict[str, str]:
    threshold_distance = similarity_to_distance(threshold)
    readings: dict[str, str] = {}
    if math.isnan(cipa):
        readings["closest_is_positive_accuracy"] = (
            "Undefined: no enrolled person has two or more photos, so no face has a same-person neighbour to "
            "find. Add a second photo of some people (Gallery tab, 'add photo') to define it."
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
        f"Typical distance between any two faces: {md:.3f} (unrelated faces sit near 1.41; the match threshold "
        f"corresponds to distance {threshold_distance:.3f})."
    )
    mc = distances["MedianClosestDistance"]
    readings["MedianClosestDistance"] = (
        "Undefined: fewer than two faces." if math.isnan(mc) else
        f"Typical distance from a face to its nearest other face: {mc:.3f}. "
        + ("Well above the threshold distance: neighbours are clearly distinct."
           if mc > threshold_distance else "Below the threshold distance: many faces have a near-twin in the gallery.")
    )
    for key, text in (("MedianClosestPositiveDistance", "to the nearest other photo of the same person"),
                      ("MedianClosestVsClosestPositiveDistance",
                       "extra distance to reach the same person's nearest photo beyond the nearest face (0 = the "
                       "nearest face is the same person)")):
        value = distances[key]
        readings[key] = (
            "Undefined: needs people with at least two photos (a one-photo-per-person gallery has no positives)."
            if math.isnan(value) else f"Median distance {text}: {value:.3f}."
        )
    return readings
