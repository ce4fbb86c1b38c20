"""The threshold controls Identify and Verify share: the accepted rate (%) and an optional pinned score.

Controls nobody touched send back what they were given, rounded by the page (a rate of 0.007 shown as 0.7% came
back as 0.00699...), which made a second rule beside the one in force: `page_rule` reads an untouched control as
"the default in force", so the page, REST and the CLI answer the same photo alike."""

from __future__ import annotations

import gradio as gr

from facerec.errors import InvalidArgument
from facerec.settings import Settings


def shown_percent(settings: Settings) -> float:
    """The rate slider's starting value: the operator's accepted rate, in percent."""
    return round(100 * settings.fpir, 2)


def shown_pin(settings: Settings) -> str:
    """The pin box's starting text: the operator's pinned threshold (FACEREC_THRESHOLD), else empty."""
    return pin_text(settings.similarity_threshold)


def pin_text(threshold: float | None) -> str:
    """A pinned threshold as the pin box shows it (empty when none)."""
    return "" if threshold is None else f"{threshold:g}"


def page_rule(settings: Settings, percent, pinned) -> tuple[float | None, float | None]:
    """(fpir, threshold) for the gallery from what the page sent; (None, None) is the rule in force.

    An untouched pin box (the operator's pin as shown) is that pin, as REST and the CLI use it, not its rounded
    text; another number pins the threshold; an empty box follows the rate. An untouched slider is the operator's
    rate, sent as None (or as that exact rate when the operator's pin was emptied, to follow the rate instead)."""
    text = "" if pinned is None else str(pinned).strip()
    if text and text == shown_pin(settings):
        return None, None
    if text:
        return None, parse_pinned(text)
    untouched = percent is None or abs(float(percent) - shown_percent(settings)) < 1e-6
    if untouched:
        return (None if settings.similarity_threshold is None else settings.fpir), None
    return float(percent) / 100.0, None


def rate_and_pin(percent: float, label: str, info: str, pinned_by_operator: float | None = None
                 ) -> tuple[gr.Slider, gr.Textbox]:
    """The two controls. `pinned_by_operator`: the threshold the app was started with (FACEREC_THRESHOLD), shown
    in the pin box so that the page answers at it, as the REST API and the CLI do, until someone empties the box."""
    rate = gr.Slider(0.1, 10.0, value=percent, step=0.1, label=label, info=info)
    pinned = gr.Textbox(value=pin_text(pinned_by_operator),
                        label="Or pin a score threshold (optional)", placeholder="e.g. 6",
                        info="Leave empty to follow the accepted rate.")
    return rate, pinned


def parse_pinned(value) -> float | None:
    """The optional pinned-threshold box: empty (None or '') means 'follow the accepted rate'. A text box, not a
    `gr.Number`: the browser sends an empty Number as 0, which would pin the threshold at 0 and name everyone."""
    if value is None or str(value).strip() == "":
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        raise InvalidArgument(f"the pinned threshold must be a score such as 6, or empty; got '{value}'") from None
