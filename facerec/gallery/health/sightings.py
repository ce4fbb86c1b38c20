"""Health over the faces the gallery actually sees: enrolled faces plus the sightings memory.

The embedding metrics are run with `cross_batch_memory_size` = enrolled faces + sightings: the enrolled faces go in
as the first batch, the sightings after them in arrival order, and the update that fills the memory scores all of
it (the spec's cross-batch memory). A sighting's positive is its person's enrolled face(s) or another sighting of
them, so ClosestIsPositiveAccuracy and the four MedianDistances are defined in a one-photo gallery.

Three readings come with them:
- **Trend**: the same figures per UTC day when the sightings span several days, else per block of sightings, each
  window scored with the enrolled faces; a MedianClosestPositiveDistance rising by `DRIFT` or more from the first
  window to the last says the faces seen have drifted from their enrollments.
- **Weak enrollments**: per person, the median similarity of their sightings to their enrolled face(s), now. Weak:
  within `WEAK_MARGIN` of the threshold in force (their next photo may not clear it), or, with at least
  `COHESION_MIN_SIGHTINGS` sightings, sightings that agree with each other by `COHESION_GAP` more than with the
  enrollment (the enrollment photo is unlike how they look now).
- **Bias, said plainly**: automatic sightings already cleared the threshold, so they flatter the figures; the
  report counts those a user confirmed or corrected, which do not.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from facerec.metrics import MEDIAN_KEYS, ClosestIsPositiveAccuracy, MedianDistances
from facerec.storage.sightings import SightingRows

BATCH = 500  # sightings per metric update
DRIFT = 0.05  # rise of MedianClosestPositiveDistance (Euclidean, unit vectors) that counts as drift
WEAK_MARGIN = 0.05  # cosine above the threshold in force within which a person's sightings are at risk
COHESION_MIN_SIGHTINGS = 3
COHESION_GAP = 0.15
TREND_BLOCKS = 8
MIN_BLOCK = 20  # sightings per block at least: a median of fewer moves by chance as much as a drift
MAX_DAYS = 30


@dataclass
class SightingsHealth:
    sightings: int
    people_seen: int
    enrolled_faces: int
    capacity: int
    sources: dict[str, int]
    closest_is_positive_accuracy: float
    median_distances: dict[str, float]
    trend: list[dict] = field(default_factory=list)
    trend_unit: str = ""
    weak_enrollments: list[dict] = field(default_factory=list)
    people: list[dict] = field(default_factory=list)  # every person seen: sightings, median similarity, cohesion

    def to_dict(self) -> dict:
        return {"sightings": self.sightings, "people_seen": self.people_seen, "enrolled_faces": self.enrolled_faces,
                "capacity": self.capacity, "sources": self.sources,
                "closest_is_positive_accuracy": _clean(self.closest_is_positive_accuracy),
                "median_distances": {k: _clean(v) for k, v in self.median_distances.items()},
                "trend_unit": self.trend_unit, "trend": self.trend, "drift": DRIFT, "min_block": MIN_BLOCK,
                "weak_enrollments": self.weak_enrollments, "people": self.people}


def sightings_health(enrolled: np.ndarray, enrolled_ids: np.ndarray, rows: SightingRows, names: dict[int, str],
                     threshold: float, capacity: int) -> SightingsHealth:
    """The figures over enrolled faces [N, D] (their identity ids [N]) and the sightings `rows` of those people."""
    cipa, medians = _scored(enrolled, enrolled_ids, rows.embeddings, rows.identity_ids)
    report = SightingsHealth(
        sightings=len(rows), people_seen=len(set(rows.identity_ids.tolist())), enrolled_faces=len(enrolled_ids),
        capacity=capacity, sources=dict(Counter(rows.sources)), closest_is_positive_accuracy=cipa,
        median_distances=medians)
    report.trend_unit, report.trend = _trend(enrolled, enrolled_ids, rows)
    report.people = _people(enrolled, enrolled_ids, rows, names, threshold)
    report.weak_enrollments = [person for person in report.people if person["weak"]]
    return report


def _scored(enrolled, enrolled_ids, seen, seen_ids) -> tuple[float, dict[str, float]]:
    """The spec's metrics with a cross-batch memory of exactly enrolled + seen rows: scored once, when full."""
    size = len(enrolled_ids) + len(seen_ids)
    accuracy, medians = ClosestIsPositiveAccuracy(size), MedianDistances(size)
    batches = [(enrolled, enrolled_ids)] + [(seen[s : s + BATCH], seen_ids[s : s + BATCH])
                                            for s in range(0, len(seen_ids), BATCH)]
    for embeddings, labels in batches:
        if len(labels):
            accuracy.update(embeddings, labels)
            medians.update(embeddings, labels)
    return accuracy.compute(), dict(medians.compute())


def _windows(rows: SightingRows) -> tuple[str, list[np.ndarray]]:
    """('day', row indices per UTC day, the latest MAX_DAYS) when the sightings span several days, else
    ('sightings', blocks of about a TREND_BLOCKS-th of them, at least MIN_BLOCK each)."""
    days = [moment.date().isoformat() for moment in rows.seen_at]
    if len(set(days)) >= 2:
        order = sorted(set(days))[-MAX_DAYS:]
        return "day", [np.flatnonzero(np.array(days) == day) for day in order]
    block = max(MIN_BLOCK, math.ceil(len(rows) / TREND_BLOCKS))
    return "sightings", [np.arange(s, min(s + block, len(rows))) for s in range(0, len(rows), block)]


def _trend(enrolled, enrolled_ids, rows: SightingRows) -> tuple[str, list[dict]]:
    if not len(rows):
        return "", []
    unit, windows = _windows(rows)
    trend = []
    for number, window in enumerate(windows):
        cipa, medians = _scored(enrolled, enrolled_ids, rows.embeddings[window], rows.identity_ids[window])
        trend.append({"window": rows.seen_at[window[0]].date().isoformat() if unit == "day"
                      else f"{window[0] + 1}-{window[-1] + 1}", "index": number, "sightings": len(window),
                      "first_seen": rows.seen_at[window[0]].isoformat(timespec="seconds"),
                      "last_seen": rows.seen_at[window[-1]].isoformat(timespec="seconds"),
                      "closest_is_positive_accuracy": _clean(cipa),
                      **{key: _clean(medians[key]) for key in MEDIAN_KEYS}})
    return unit, trend


def _people(enrolled, enrolled_ids, rows: SightingRows, names: dict[int, str], threshold: float) -> list[dict]:
    """Per person seen: their sightings' median similarity to their enrolled faces (best face each), and how
    much their sightings agree with each other; weakest first."""
    people = []
    for identity in sorted(set(rows.identity_ids.tolist())):
        own = enrolled[enrolled_ids == identity]
        seen = rows.embeddings[rows.identity_ids == identity]
        if not len(own):
            continue
        to_enrollment = float(np.median(np.max(seen @ own.T, axis=1)))
        cohesion = None
        if len(seen) >= 2:
            pairs = seen @ seen.T
            cohesion = float(np.median(pairs[np.triu_indices(len(seen), 1)]))
        reasons = []
        if to_enrollment < threshold:
            reasons.append(f"their sightings match their enrollment at {to_enrollment:.3f}, below the threshold "
                           f"{threshold:.3f}: a new photo of them is likely to go unrecognised")
        elif to_enrollment < threshold + WEAK_MARGIN:
            reasons.append(f"their sightings match their enrollment at {to_enrollment:.3f}, within {WEAK_MARGIN} of "
                           f"the threshold {threshold:.3f}: a new photo of them may go unrecognised")
        if cohesion is not None and len(seen) >= COHESION_MIN_SIGHTINGS and cohesion - to_enrollment >= COHESION_GAP:
            reasons.append(f"their sightings agree with each other ({cohesion:.3f}) far more than with their "
                           f"enrollment ({to_enrollment:.3f}): the enrollment photo is unlike how they look now")
        people.append({"identity_id": identity, "name": names.get(identity, str(identity)),
                       "sightings": int(len(seen)), "median_similarity": round(to_enrollment, 4),
                       "cohesion": None if cohesion is None else round(cohesion, 4), "weak": bool(reasons),
                       "reasons": reasons})
    return sorted(people, key=lambda p: p["median_similarity"])


def _clean(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), 4)
