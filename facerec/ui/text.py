"""Text for the page: names shown literally, and the status line each action writes next to its button.

Names are shown as text, never as markup: escaped for Markdown and HTML wherever they reach the page (status
lines, tables rendered as HTML, error lines), so a name like `![x](http://host/beacon.png)` makes no browser fetch
anything.
"""

from __future__ import annotations

import html
import re

from facerec.errors import InvalidArgument
from facerec.words.phrasing import sentence

# Characters Markdown (or the HTML it may hold) could read as markup, escaped by `markdown_text`.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\](){}!|~$:#])")
ERROR_COLOUR = "#b42318"


def markdown_text(text: object) -> str:
    """`text` (a name, a path) for a Markdown component, shown literally: never a link, an image, an element or
    emphasis (a name like `![x](http://host/beacon.png)` would otherwise make every viewer's browser fetch it)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def html_text(text: object) -> str:
    """`text` for an HTML component or attribute: every character shown as itself."""
    return html.escape(str(text), quote=True)


def error_line(message: str, heading: str = "Error") -> str:
    """A failed action's status line (Markdown): a red 'Error:' (or another `heading`, e.g. 'Warning' for a
    refusal the user may override) and the message as one plain sentence."""
    return (f'<span style="color:{ERROR_COLOUR};font-weight:600">{heading}:</span> '
            f"{markdown_text(sentence(message))}")




def page_number(number) -> int:
    """The page a list was asked for: 1 when the field is empty (Gradio sends None) or below 1."""
    try:
        return max(1, int(number or 1))
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument("Page must be a whole number") from None


def number_picked(picked, what: str, button: str) -> int:
    """The number a list's caption starts with ("suggestion 7 · ...", "group 7 · ..."), which the actions read;
    one line naming `what` to pick and the `button` that lists them when nothing, or not a caption, was picked."""
    if not picked:
        raise InvalidArgument(f"pick a {what} first (press {button})")
    try:
        return int(str(picked).split()[1])
    except (IndexError, ValueError):
        raise InvalidArgument(f"pick a {what} from the list (press {button})") from None
