"""The threshold policy of a model, read from the model card beside its ONNX file.

Built from plain values (the card's path, the accepted rate, a pinned threshold), so `Settings` stays a bag of
configuration that imports nothing above `errors`; `policy_for(settings)` is the shorthand every caller uses.
"""

from __future__ import annotations

import json
from pathlib import Path

from facerec.errors import UnusableFile
from facerec.openset.cohort import Cohort, RawCosine, Scorer, cohort_path
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdPolicy
from facerec.settings import Settings
from facerec.words.phrasing import one_line


def load_policy(card_path: Path, fpir: float, pinned_threshold: float | None,
                model_sha256: str | None = None) -> ThresholdPolicy:
    """The one rule for every decision that compares faces: the accepted stranger-match rate `fpir` over the
    model card's calibration, or the pinned threshold.

    Without a pinned threshold a missing or unreadable card, or one with nothing to derive a threshold from, is
    an error, not a silent default (a guessed threshold would mislabel strangers or miss people without anyone
    noticing). `model_sha256` (the ONNX file's) warns when the calibration was made for another file."""
    try:
        card = json.loads(card_path.read_text())
        problem = None if isinstance(card, dict) else "is not a JSON object"
    except FileNotFoundError:
        card, problem = {}, "is missing"
    except (OSError, ValueError) as error:
        card, problem = {}, f"cannot be read ({one_line(error, 120)})"
    if problem is None and not _gives_a_threshold(card):
        problem = "has no calibration, far_curve or thresholds.far_1e-3.cosine value"
    if problem is not None:
        if pinned_threshold is None:
            raise UnusableFile(f"the model card {card_path} {problem}: it gives the match threshold. Put the card "
                               "back next to the model (or run `facerec-train calibrate`), or set a threshold "
                               "(--threshold or FACEREC_THRESHOLD).")
        card = {}  # a pinned threshold needs nothing from the card (no expected FPIR without it)
    return ThresholdPolicy.from_card(card, fpir, pinned_threshold, model_sha256)


def scorer_for(settings: Settings, policy: ThresholdPolicy) -> Scorer:
    """How faces are compared, on the scale the policy's calibration is on: the model's shipped score cohort
    (checked against the sha256 its card records) for normalised scores, the raw cosine for a card calibrated
    on cosines (or a pinned threshold with no card)."""
    if not policy.calibration.normalised:
        return RawCosine()
    return model_cohort(settings)


def model_cohort(settings: Settings) -> Cohort:
    """The model's shipped score cohort, checked against the sha256 its card records."""
    cohort = settings.model_card().get("cohort")
    expected = cohort.get("sha256") if isinstance(cohort, dict) else None
    if not expected:
        raise UnusableFile(f"the model card {settings.model_card_path} names no score cohort; run "
                           "`facerec-train calibrate` again")
    return Cohort.load(cohort_path(settings.model_path), expected)


def cosine_calibration_for(settings: Settings, policy: ThresholdPolicy) -> ScoreCalibration:
    """The card's calibration of raw cosines (`calibration_cosine` beside a normalised one; the policy's own on a
    card calibrated on cosines), for what still compares raw cosines: the suggestions' grouping, which scores
    pairs of unknown faces against the strangers memory as its own cohort (`facerec.algorithms.grouping`)."""
    if not policy.calibration.normalised:
        return policy.calibration
    raw = settings.model_card().get("calibration_cosine")
    if not raw:
        raise UnusableFile(f"the model card {settings.model_card_path} has no cosine calibration beside its "
                           "normalised one; run `facerec-train calibrate` again")
    return ScoreCalibration.from_card({"calibration": raw})


def policy_for(settings: Settings, model_sha256: str | None = None) -> ThresholdPolicy:
    """`load_policy` for the model, rate and pinned threshold that `settings` name."""
    return load_policy(settings.model_card_path, settings.fpir, settings.similarity_threshold, model_sha256)


def _gives_a_threshold(card: dict) -> bool:
    calibration = card.get("calibration")
    far_curve = card.get("far_curve")
    thresholds = card.get("thresholds")
    try:
        fixed = thresholds["far_1e-3"]["cosine"]
    except (KeyError, TypeError):
        fixed = None
    return bool((isinstance(calibration, dict) and calibration.get("curve"))
                or (isinstance(far_curve, list) and len(far_curve) >= 2) or isinstance(fixed, (int, float)))
