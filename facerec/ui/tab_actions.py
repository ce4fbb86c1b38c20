"""The admin actions of one tab, registered alike: behind the admin gate, each result under its own button and the
other actions' results emptied (only the latest stays), the tab's JSON details beside it, and the people list shown
again after each (`AppContext.changes_people`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr

from facerec.ui.actions import expose
from facerec.ui.context import AppContext


@dataclass
class TabActions:
    context: AppContext
    ok: gr.State  # whether the last action succeeded (the people list follows only then)
    details: gr.JSON  # the last action's answer as data (the API's too)
    statuses: list = field(default_factory=list)  # every action's result line; panels add theirs when built

    def register(self, button: gr.Button, core: Callable, inputs: list, outputs: list, status: gr.Markdown,
                 api_name: str, **options) -> None:
        """`core` on `button` and as the API's `api_name` (`options`: the page's extra outputs, hints and what to
        delete when refused, as `expose` takes them). Register once every panel is built: the others' result
        lines are emptied when it runs."""
        event = expose([button.click], core, inputs, outputs, status, api_name=api_name, admin=self.context.gate,
                       also_clear=[s for s in self.statuses if s is not status], ok=self.ok, **options)
        self.context.changes_people(event, self.ok)
