"""The threshold in force, in words: what the UI, the CLI and the API say about a `ThresholdInForce`.

The policy (`facerec.openset.threshold_policy`) returns numbers; this is the one place they become sentences,
so the three interfaces say the same thing the same way.
"""

from __future__ import annotations

from typing import Protocol

from facerec.words.phrasing import percent_text, rate_text, score_text


class ThresholdInForce(Protocol):
    """What these sentences read of `facerec.openset.threshold_policy.ThresholdInForce` (words sit below the
    policy, so they name the fields they read rather than import it)."""

    threshold: float
    pinned: bool
    verification: bool
    on_cosines: bool
    target_fpir: float
    expected_fpir: float | None
    expected_fpir_interval: tuple[float, float] | None
    true_match_rate: float | None
    comparisons: int
    people: int | None
    effective_comparisons: float | None
    extrapolated_far: float | None
    lowest_calibrated_far: float | None
    raised_from: float | None
    population: object | None  # a PopulationTail: its `pairs`
    warning: str | None


def score_name(rule: ThresholdInForce | None) -> str:
    """What the number a decision compares is called: "score" (cohort-normalised) or "similarity" (cosine)."""
    return "similarity" if rule is None or rule.on_cosines else "score"


def strangers_scoring(far: float | None) -> str:
    """A per-comparison false-accept rate as what a person can picture: "about 1 in 20,000 strangers score this
    high" (against this one enrolled face, or this one photo)."""
    if far is None:
        return ""
    if far >= 0.5:
        return "most strangers score this high"
    one_in = _one_in(far)
    return f"{'' if one_in.startswith(('fewer', 'none')) else 'about '}{one_in} strangers score this high"


def shown_score(score: float | None, similarity: float | None = None) -> str:
    """The number shown beside a name: the score the decision compared (the cosine only where the model is
    calibrated on cosines), so a named face never shows a lower number than an unknown one."""
    value = score if score is not None else similarity
    return "" if value is None else score_text(value)


def compared(score: float | None, similarity: float, threshold: float | None, rule: ThresholdInForce | None,
             stranger_far: float | None) -> str:
    """One comparison's numbers in words: "score 8.16 (threshold 3.12); fewer than 1 in 1,000,000,000 strangers
    score this high" (on a model calibrated on cosines: the similarity and its threshold)."""
    text = f"{score_name(rule)} {shown_score(score, similarity)}"
    if threshold is not None:
        text += f" (threshold {score_text(threshold)})"
    rarity = strangers_scoring(stranger_far)
    return text + (f"; {rarity}" if rarity else "")


def threshold_sentence(rule: ThresholdInForce) -> str:
    """What the threshold means, in plain words."""
    rate = "false-match" if rule.verification else "stranger-match"
    how = (f"pinned at {score_text(rule.threshold)}" if rule.pinned else
           f"{score_text(rule.threshold)}, set for an accepted {rate} rate of {percent_text(rule.target_fpir)}")
    what = "Similarity threshold" if rule.on_cosines else "Score threshold"
    interval = (f" (95% interval {percent_text(rule.expected_fpir_interval[0])} to "
                f"{percent_text(rule.expected_fpir_interval[1])})" if rule.expected_fpir_interval else "")
    if rule.verification:
        text = f"{what} {how}. Two photos are compared once"
        if rule.expected_fpir is not None:
            text += (f": expected false-match rate {percent_text(rule.expected_fpir)}{interval}, about "
                     f"{_one_in(rule.expected_fpir)} pairs of photos of different people would be called the "
                     "same person")
    elif rule.comparisons == 0:
        text = (f"The gallery is empty, so nobody can be wrongly named yet; with the first enrolled face the "
                f"{what.lower()} will be {how}")
    else:
        size = f"{rule.comparisons:,} enrolled face{'s' if rule.comparisons != 1 else ''}"
        if rule.people is not None:
            size = f"{rule.people:,} {'person' if rule.people == 1 else 'people'} ({size})"
        if rule.effective_comparisons is not None:
            size += f", worth {rule.effective_comparisons:,.0f} independent chances for a stranger"
        text = f"{what} {how}, for a gallery of {size}"
        if rule.expected_fpir is not None:
            text += (f". Expected stranger-match rate {percent_text(rule.expected_fpir)}{interval}: about "
                     f"{_one_in(rule.expected_fpir)} people who are not enrolled would wrongly be given a name")
    if rule.true_match_rate is not None and rule.verification:
        text += (f"; two photos of the same person reach it about {rule.true_match_rate:.0%} of the time")
    elif rule.true_match_rate is not None:
        text += (f"; a new photo of an enrolled person clears the threshold about {rule.true_match_rate:.0%} "
                 "of the time")
    text += "."
    for note in threshold_notes(rule):
        text += f" Note: {note}."
    if rule.warning:
        text += f" Warning: {rule.warning}."
    return text


def threshold_notes(rule: ThresholdInForce) -> list[str]:
    """What the user should know about how the threshold was set: an extrapolated false-accept rate, a threshold
    the gallery's own tail raised."""
    notes = []
    if rule.extrapolated_far is not None:
        notes.append(f"this gallery needs a false-accept rate of {rate_text(rule.extrapolated_far)} per comparison, "
                     f"below the calibrated range (down to {rate_text(rule.lowest_calibrated_far)}): extrapolated")
    if rule.raised_from is not None and rule.population is not None:
        notes.append(f"this gallery's own people look more alike than the model's calibration set "
                     f"({rule.population.pairs:,} pairs of its faces of different people measured), so the "
                     f"threshold is raised from {score_text(rule.raised_from)} to {score_text(rule.threshold)} to keep "
                     "the accepted rate")
    return notes


def with_sentence(policy: dict, rule: ThresholdInForce) -> dict:
    """A `ThresholdInForce.to_dict()` with the words added, for the JSON a person reads (CLI, REST API)."""
    return {**policy, "sentence": threshold_sentence(rule), "notes": threshold_notes(rule)}


def worded(data: dict, rule: ThresholdInForce | None) -> dict:
    """An answer's `to_dict()` whose `threshold_policy` (if any) carries its words too."""
    if rule is None or "threshold_policy" not in data:
        return data
    return {**data, "threshold_policy": with_sentence(data["threshold_policy"], rule)}


RAREST_STATED = 1e-9  # the card's calibration reaches 1e-9 per comparison; rarer rates are not stated as figures


def _one_in(rate: float) -> str:
    """'1 in N', except beyond what the calibration can tell (a threshold past the bounded end of the fitted tail
    gives the policy's 1e-15 floor: "1 in 1,000,000,000,000,000" would claim a precision nobody measured)."""
    if rate <= 0:
        return "none of the"
    if rate < RAREST_STATED:
        return f"fewer than 1 in {round(1 / RAREST_STATED):,}"
    return f"1 in {max(1, round(1 / rate)):,}"
