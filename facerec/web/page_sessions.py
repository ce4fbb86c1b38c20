"""What the web server keeps per page session: the values of its `gr.State`s and the components an action
changed, for at most `MAX_SESSIONS` sessions, never a copy of what an event sent or answered.

Why: Gradio copies every value an event receives or returns into its session, for "deep links" (a link that
reopens a page as it was), and keeps up to 10,000 sessions, each made by the first event that names it, so it
keeps what anonymous callers send: 6 events of 100 MB nobody read held 872 MB a minute later, and even events of
a few bytes kept about 360 KB each (a copy of every component's settings). facerec has no deep links, so a
page session keeps nothing of the sort (`PageSession`), and `MAX_SESSIONS` bounds how many are kept (the least
recently used goes first; its page then starts afresh: a photo to upload again, an identify to repeat).
"""

from __future__ import annotations

import gradio.state_holder as gradio_sessions

MAX_SESSIONS = 1000  # page sessions kept at once: far more than the people using one gallery's page


class _KeepsNothing(dict):
    """A mapping that drops whatever is stored in it: where Gradio keeps its copies of a session's values."""

    def __setitem__(self, key, value) -> None:
        return None


class PageSession(gradio_sessions.SessionState):
    """Gradio's session state without the copies of every value it received or answered (`config_values`, read
    only to make a deep link)."""

    def __init__(self, blocks) -> None:
        super().__init__(blocks)
        self.config_values = _KeepsNothing()

    def _update_config(self, key: int) -> None:
        return None

    def _update_value_in_config(self, key: int, value) -> None:
        return None


def keep_no_event_values() -> None:
    """Make every page session a `PageSession` (Gradio makes them through `gradio.state_holder.SessionState`)."""
    gradio_sessions.SessionState = PageSession
