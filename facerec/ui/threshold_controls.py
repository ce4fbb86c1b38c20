"""The threshold controls Identify and Verify share: the accepted rate (%) and an optional pinned cosine."""

from __future__ import annotations

import gradio as gr

from facerec.errors import InvalidArgument


def rate_and_pin(percent: float, label: str, info: str, pinned_by_operator: float | None = None
                 ) -> tuple[gr.Slider, gr.Textbox]:
    """The two controls. `pinned_by_operator`: the threshold the app was started with (FACEREC_THRESHOLD), shown
    in the pin box so that the page answers at it, as the REST API and the CLI do, until someone empties the box."""
    rate = gr.Slider(0.1, 10.0, value=percent, step=0.1, label=label, info=info)
    pinned = gr.Textbox(value="" if pinned_by_operator is None else f"{pinned_by_operator:g}",
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


def accepted_rate(percent) -> float | None:
    """The rate slider's percent as a rate (1 -> 0.01); None when not given."""
    return None if percent is None else float(percent) / 100.0
