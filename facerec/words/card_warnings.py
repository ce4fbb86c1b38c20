"""What is wrong with a model card's calibration, in one clause each: the threshold policy carries these as its
warning, and every interface shows it beside the threshold."""

from __future__ import annotations

from facerec.words.phrasing import rate_text

RECALIBRATE = "run `facerec-train calibrate` to calibrate this model"


def for_another_model() -> str:
    return f"the model card's calibration was made for another model file; {RECALIBRATE}"


def partial(identities) -> str:
    return f"the model card's calibration used only {identities} identities (a quick check); {RECALIBRATE}"


def no_tail(lowest: float) -> str:
    return (f"the model card has no tail calibration: false-accept rates below {rate_text(lowest)} are "
            f"extrapolated from its last two points; {RECALIBRATE}")


def no_curve(fixed: float) -> str:
    return (f"the model card has no false-accept curve: the threshold is fixed at {fixed:.3f} and the "
            f"stranger-match rate cannot be estimated; {RECALIBRATE}")
