"""A face's enrollment quality in words: the verdict, the reasons that cost it most, and the refusal of a poor
enrollment photo. `facerec.faces.quality` scores the face with numbers and names the features; these sentences are
what every interface shows of them."""

from __future__ import annotations

from typing import Protocol


class Quality(Protocol):
    """What these sentences read of `facerec.faces.quality.EnrollmentQuality`."""

    score: float
    low: bool
    reasons: list[str]
    caveats: list[str]


def quality_sentence(quality: Quality) -> str:
    """"Enrollment quality 0.84 (estimated chance ...): good." (or low, with its reasons)."""
    verdict = "low: " + "; ".join(quality.reasons) if quality.low and quality.reasons else (
        "low" if quality.low else "good" + (", though " + " and ".join(quality.caveats) if quality.caveats else ""))
    return (f"Enrollment quality {quality.score:.2f} (estimated chance that a later photo of this person is "
            f"recognised as them first): {verdict}.")


def low_quality_message(quality: Quality) -> str:
    """Why a face is a poor enrollment photo, as one sentence without the shell's way to proceed."""
    why = "; ".join(quality.reasons) if quality.reasons else "several small problems together"
    return (f"this face is a poor enrollment photo ({why}): a later photo of this person would be recognised with "
            f"an estimated chance of {quality.score:.0%}; a sharper, larger, front-facing photo is better")


def quality_reason(feature: str, face_width_px: float, eye_distance_px: float, template_eye_distance: float) -> str:
    """What one feature that cost the face most means: its size (against the eye distance the model sees), a
    profile, blur, or an embedding that moves under small changes."""
    if feature == "size":
        return (f"face is {face_width_px:.0f} px wide (eyes {eye_distance_px:.0f} px apart; the model "
                f"sees faces with eyes {template_eye_distance:.0f} px apart)")
    if feature == "yaw":
        return "strong profile (the face is turned away from the camera)"
    if feature == "sharpness":
        return "blurred"
    if feature == "geometric_stability":
        return "unstable (its embedding changes under small shifts or mirroring: occlusion, odd light or pose)"
    if feature == "detail_stability":
        return "its fine detail reads unreliably (the embedding changes under slight blur: noise or heavy grain)"
    return "unstable (its embedding changes under small shifts, blur or mirroring: occlusion, odd light or pose)"
