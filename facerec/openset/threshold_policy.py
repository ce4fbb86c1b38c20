"""The threshold policy: one rule, in the user's terms, for every decision that compares faces.

The user chooses the stranger-match rate they accept: the false-positive identification rate (FPIR), the share of
people who are NOT enrolled whom identify would wrongly give a name (default 1%). A stranger is compared with
every enrolled person, so with a per-comparison false-accept rate FAR(t) at threshold t and N independent chances

    FPIR(t) ~= 1 - (1 - FAR(t)) ** N

and the threshold in force is the t at which this equals the chosen rate: it rises as the gallery grows. N counts
people, not faces: a person with k photos is k ** exponent chances (`facerec.openset.per_person`, measured on
held-out people: ~0.9, so 5 photos are ~4.3 chances; one photo each, N is the number of people). Different
people are treated as independent; strangers who resemble many people at once make the true FPIR lower, never
higher. Identify and the enrollment look-alike check use the current gallery's N; verification compares two
photos once (N = 1), so its FPIR is the per-comparison FAR. A user may pin a raw similarity threshold instead;
its expected FPIR is still reported. The policy returns numbers (`ThresholdInForce`); the interfaces put them in
words (`facerec.words.threshold`).

A gallery of at least a few hundred people also measures its own stranger tail (`facerec.openset.population_tail`):
its faces of different people are stranger comparisons from the user's own population. Where that tail is
heavier than the card's (the user's people look more alike than the calibration's), the threshold is the higher
one, and the expected rates are the higher of the two estimates: the card is never trusted beyond what the
gallery itself shows.

FAR(t) and the genuine acceptance rate come from the model card's calibration (`facerec-train calibrate`). A card
without it falls back, with a warning, to its older `far_curve` (extrapolated below its last point) or to its
fixed FAR 1e-3 threshold.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from facerec.words import card_warnings
from facerec.openset.cohort import COSINE
from facerec.openset.per_person import PhotoCounts, effective_comparisons
from facerec.openset.population_tail import PopulationTail
from facerec.openset.stranger_tail import TailFit

DEFAULT_FPIR = 0.01
NEVER = 1e-15  # a rate below this (beyond the end of a bounded tail: 0) is reported as this: "never"


@dataclass(frozen=True)
class ScoreCalibration:
    """FAR (and genuine acceptance) as functions of the score threshold, from a model card: a raw cosine, or a
    cohort-normalised score (`scale`, as the card's calibration says).

    `cosines` (the scores, by their old name) ascending; `log_far` (log10 FAR, descending) and the optional
    interval and `tar` rows match them.
    Between rows values are interpolated linearly in log10 FAR; beyond the last rows the end slope continues.
    Where the card keeps its fitted tail (`tail`), FAR and thresholds in the tail come from the fit itself
    (`facerec.openset.stranger_tail.TailFit`, the estimator that made the rows), not from between its rows.
    """

    cosines: np.ndarray
    log_far: np.ndarray
    log_far_low: np.ndarray | None = None
    log_far_high: np.ndarray | None = None
    tar: np.ndarray | None = None
    warning: str | None = None
    fixed_threshold: float | None = None  # only when the card has no FAR curve at all
    photo_exponent: float | None = None  # k photos of one person count as k ** this (`facerec.openset.per_person`)
    tail: TailFit | None = None  # the card's fitted stranger tail, read above its cut-off
    scale: str = COSINE  # what the thresholds are: raw cosines, or AS_NORM scores (`facerec.openset.cohort`)

    @property
    def ceiling(self) -> float:
        """No score passes it: 1 for cosines, none for normalised scores."""
        return math.inf if self.normalised else 1.0

    @property
    def normalised(self) -> bool:
        return self.scale != COSINE

    @classmethod
    def from_card(cls, card: dict, model_sha256: str | None = None) -> "ScoreCalibration":
        calibration = card.get("calibration") or {}
        if calibration.get("version", 0) >= 2 and calibration.get("curve"):
            rows = calibration["curve"]
            intervals = all("far_interval" in r for r in rows)
            warnings = []
            if model_sha256 and calibration.get("model_sha256") not in (None, model_sha256):
                warnings.append(card_warnings.for_another_model())
            if calibration.get("partial"):
                warnings.append(card_warnings.partial(calibration.get("identities")))
            per_person = calibration.get("photos_per_person") or {}
            tail = calibration.get("tail") or {}
            fitted = TailFit.from_dict(tail) if {"threshold", "rate", "shape", "scale"} <= set(tail) else None
            return cls._of([r["score"] if "score" in r else r["cosine"] for r in rows], [r["far"] for r in rows],
                           [r["far_interval"][0] for r in rows] if intervals else None,
                           [r["far_interval"][1] for r in rows] if intervals else None,
                           [r["tar"] for r in rows] if all("tar" in r for r in rows) else None,
                           "; ".join(warnings) or None, per_person.get("exponent"), fitted,
                           calibration.get("score", COSINE))
        curve = card.get("far_curve") or []
        if len(curve) >= 2:
            lowest = min(far for _, far in curve)
            return cls._of([c for c, _ in curve], [far for _, far in curve],
                           warning=card_warnings.no_tail(lowest))
        fixed = float(card.get("thresholds", {}).get("far_1e-3", {}).get("cosine", 0.5))
        return cls(np.array([fixed]), np.array([-3.0]), fixed_threshold=fixed,
                   warning=card_warnings.no_curve(fixed))

    @classmethod
    def _of(cls, cosines, fars, far_low=None, far_high=None, tar=None, warning=None,
            photo_exponent: float | None = None, tail: TailFit | None = None,
            scale: str = COSINE) -> "ScoreCalibration":
        cosines = np.asarray(cosines, np.float64)
        order = np.argsort(cosines, kind="stable")
        cosines, unique = np.unique(cosines[order], return_index=True)
        pick = order[unique]

        def logs(values):
            # Rates below 1e-15 (a bootstrap tail that ends before t gives 0) are all "never", for display.
            return None if values is None else np.log10(np.maximum(np.asarray(values, np.float64)[pick], NEVER))

        return cls(cosines, logs(fars), logs(far_low), logs(far_high),
                   None if tar is None else np.asarray(tar, np.float64)[pick], warning,
                   photo_exponent=None if photo_exponent is None else float(photo_exponent), tail=tail, scale=scale)

    @property
    def lowest_far(self) -> float:
        return float(10 ** self.log_far.min())

    def far(self, threshold: float) -> float | None:
        """Per-comparison false-accept rate at `threshold` (None without a curve)."""
        if self.fixed_threshold is not None:
            return None
        if self.tail is not None and threshold > self.tail.threshold:
            return max(float(self.tail.far(threshold)), NEVER)
        return min(1.0, float(10 ** _interp(threshold, self.cosines, self.log_far)))

    def far_interval(self, threshold: float) -> tuple[float, float] | None:
        if self.log_far_low is None or self.fixed_threshold is not None:
            return None
        return (min(1.0, float(10 ** _interp(threshold, self.cosines, self.log_far_low))),
                min(1.0, float(10 ** _interp(threshold, self.cosines, self.log_far_high))))

    def threshold_at_far(self, far: float) -> float:
        """The cosine threshold whose per-comparison false-accept rate is `far`."""
        if self.fixed_threshold is not None:
            return self.fixed_threshold
        if self.tail is not None and far < self.tail.rate:
            return float(self.tail.threshold_at_far(far))
        return min(self.ceiling, float(_interp(math.log10(far), self.log_far[::-1], self.cosines[::-1])))

    def true_match_rate(self, threshold: float) -> float | None:
        """Share of genuine pairs (two photos of one held-out person) at or above `threshold`."""
        if self.tar is None or self.fixed_threshold is not None:
            return None
        return float(np.clip(np.interp(threshold, self.cosines, self.tar), 0.0, 1.0))


@dataclass(frozen=True)
class ThresholdInForce:
    """The threshold one decision used, and what it means for the gallery it was used on.

    `comparisons`: the faces a stranger is compared with (the gallery's enrolled faces, possibly 0; 1 for
    verification). `effective_comparisons`: the independent chances those are worth, counted over people (a person
    with k photos counts k ** exponent, `facerec.openset.per_person`); the rates are computed from it.
    `expected_fpir`: the expected stranger-match rate at this threshold for this gallery (for verification, the
    per-comparison false-accept rate); None when the model card cannot tell.
    """

    threshold: float
    comparisons: int
    target_fpir: float | None  # the accepted rate it was derived from; None when pinned
    expected_fpir: float | None
    expected_fpir_interval: tuple[float, float] | None
    far: float | None
    true_match_rate: float | None
    pinned: bool
    verification: bool = False
    people: int | None = None
    warning: str | None = None
    population: PopulationTail | None = None  # the gallery's own stranger tail, where it was measured
    raised_from: float | None = None  # the card's threshold, where the gallery's own tail raised it
    extrapolated_far: float | None = None  # the per-comparison FAR needed, where below the calibrated range
    lowest_calibrated_far: float | None = None
    effective_comparisons: float | None = None  # None: the face count (one photo each, or no per-person rule)
    scale: str = COSINE  # what `threshold` is: a raw cosine, or an AS_NORM score (`facerec.openset.cohort`)

    @property
    def on_cosines(self) -> bool:
        """The threshold is a raw cosine (a model calibrated on cosines), not a cohort-normalised score."""
        return self.scale == COSINE

    def to_dict(self) -> dict:
        data = asdict(self)
        data["population"] = None if self.population is None else self.population.to_dict()
        data["raised_from"] = None if self.raised_from is None else round(self.raised_from, 4)
        data["threshold"] = round(self.threshold, 4)
        for key in ("target_fpir", "expected_fpir", "far", "true_match_rate"):
            data[key] = None if data[key] is None else float(f"{data[key]:.4g}")
        if self.expected_fpir_interval is not None:
            data["expected_fpir_interval"] = [float(f"{v:.3g}") for v in self.expected_fpir_interval]
        if self.effective_comparisons is not None:
            data["effective_comparisons"] = round(self.effective_comparisons, 1)
        data["rule"] = ("verification: one comparison, FPIR = per-comparison FAR" if self.verification else
                        "FPIR = 1 - (1 - FAR(threshold)) ** effective comparisons (sum over people of "
                        "photos ** exponent; enrolled faces when one photo each)")
        return data


class ThresholdPolicy:
    """Derives the threshold in force from the accepted stranger-match rate (or a pinned threshold)."""

    def __init__(self, calibration: ScoreCalibration, fpir: float = DEFAULT_FPIR,
                 pinned_threshold: float | None = None) -> None:
        _check_rate(fpir)
        self.calibration = calibration
        self.fpir = float(fpir)
        self.pinned_threshold = None if pinned_threshold is None else _check_pin(float(pinned_threshold), calibration)

    @classmethod
    def from_card(cls, card: dict, fpir: float = DEFAULT_FPIR, pinned_threshold: float | None = None,
                  model_sha256: str | None = None) -> "ThresholdPolicy":
        return cls(ScoreCalibration.from_card(card, model_sha256), fpir, pinned_threshold)

    def for_gallery(self, faces: int, people: int | None = None, fpir: float | None = None,
                    threshold: float | None = None, population: PopulationTail | None = None,
                    photo_counts: PhotoCounts | None = None) -> ThresholdInForce:
        """The threshold for searching (or checking a new face against) a gallery of `faces` enrolled faces.
        `fpir` / `threshold` override the policy's rate / pinned threshold for this one decision; `population`
        is the gallery's own stranger tail, where it has been measured; `photo_counts` how many photos the
        enrolled people have (the policy counts people: `facerec.openset.per_person`; without them, faces)."""
        effective = effective_comparisons(photo_counts, int(faces), self.calibration.photo_exponent)
        return self._decide(int(faces), people, fpir, threshold, verification=False, population=population,
                            effective=effective)

    def for_verification(self, fpir: float | None = None, threshold: float | None = None,
                         population: PopulationTail | None = None) -> ThresholdInForce:
        """The threshold for comparing two photos (one comparison: the accepted rate is the per-comparison FAR)."""
        return self._decide(1, None, fpir, threshold, verification=True, population=population)

    def growth(self, sizes=None, fpir: float | None = None) -> list[ThresholdInForce]:
        """The threshold in force (and expected true-match rate) as the gallery grows: 1 ... 1,000,000 faces."""
        sizes = sizes or [int(v) for v in np.unique(np.round(np.logspace(0, 6, 25)))]
        return [self.for_gallery(n, fpir=fpir) for n in sizes]

    def _decide(self, comparisons: int, people, fpir, threshold, verification: bool,
                population: PopulationTail | None = None, effective: float | None = None) -> ThresholdInForce:
        calibration = self.calibration
        chances = float(comparisons) if effective is None else effective
        threshold = self.pinned_threshold if threshold is None and fpir is None else threshold
        if threshold is not None:
            threshold = _check_pin(float(threshold), calibration)
        pinned = threshold is not None or calibration.fixed_threshold is not None
        population = None if calibration.fixed_threshold is not None else population
        raised_from, extrapolated = None, None
        if threshold is None:
            target = self.fpir if fpir is None else _check_rate(fpir)
            # Per comparison, from the FPIR over N comparisons (an empty gallery gets the one-face threshold).
            far = -math.expm1(math.log1p(-target) / max(1.0, chances))
            threshold = calibration.threshold_at_far(far)
            if calibration.fixed_threshold is None and far < calibration.lowest_far:
                extrapolated = far  # below the calibrated range
            own = population.threshold_at_far(far) if population is not None else None
            if own is not None and own > threshold:
                raised_from, threshold = threshold, own
        else:
            target = None
        far = calibration.far(threshold)
        interval = calibration.far_interval(threshold)
        own_far = population.far(threshold) if population is not None and far is not None else None
        if own_far is not None and own_far > far:  # the gallery's own estimate is the less optimistic one
            far = own_far
            interval = None if interval is None else (min(interval[0], own_far), max(interval[1], own_far))
        return ThresholdInForce(
            threshold=float(threshold), comparisons=comparisons, target_fpir=None if pinned else target,
            expected_fpir=None if far is None else _fpir(far, chances),
            expected_fpir_interval=None if interval is None else tuple(_fpir(f, chances) for f in interval),
            far=far, true_match_rate=calibration.true_match_rate(threshold), pinned=pinned,
            verification=verification, people=people, warning=calibration.warning, population=population,
            raised_from=raised_from, extrapolated_far=extrapolated,
            lowest_calibrated_far=None if calibration.fixed_threshold is not None else calibration.lowest_far,
            effective_comparisons=None if effective is None or effective == comparisons else effective,
            scale=calibration.scale)


def _fpir(far: float, comparisons: float) -> float:
    """Chance that at least one of `comparisons` independent impostor comparisons is accepted."""
    return -math.expm1(comparisons * math.log1p(-min(far, 1 - 1e-16)))


def _check_rate(fpir: float) -> float:
    from facerec.errors import InvalidArgument

    if not 0.0 < float(fpir) < 1.0:
        raise InvalidArgument(f"the accepted stranger-match rate must be between 0 and 1 (e.g. 0.01 for 1%), "
                              f"got {fpir}")
    return float(fpir)


COSINE_RANGE = (-1.0, 1.0)  # a pin in it on the normalised scale is an old cosine, never silently reread


def _check_pin(threshold: float, calibration: ScoreCalibration) -> float:
    """A pinned threshold is on the scale the model is calibrated on. On normalised scores a value between -1 and
    1 is a cosine pin from before them (a score that low would name most strangers): refused, not reinterpreted."""
    from facerec.errors import InvalidArgument

    if not math.isfinite(threshold):
        raise InvalidArgument(f"the threshold must be a number, got {threshold}")
    if calibration.normalised and COSINE_RANGE[0] <= threshold <= COSINE_RANGE[1]:
        raise InvalidArgument(f"the pinned threshold {threshold:g} looks like a raw cosine, but this model compares "
                              "faces by normalised score (the cosine against the pair's cohort, in standard "
                              "deviations; the default rule's is several units): pin a score outside -1 to 1 "
                              "or leave the threshold unset (docs/threshold-policy.md)")
    return threshold


def _interp(x: float, xs: np.ndarray, ys: np.ndarray) -> float:
    """Linear interpolation that continues the end segments' slopes outside [xs[0], xs[-1]] (xs ascending)."""
    if len(xs) == 1:
        return float(ys[0])
    if x < xs[0]:
        return float(ys[0] + (x - xs[0]) * (ys[1] - ys[0]) / (xs[1] - xs[0]))
    if x > xs[-1]:
        return float(ys[-1] + (x - xs[-1]) * (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]))
    return float(np.interp(x, xs, ys))


