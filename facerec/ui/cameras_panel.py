"""The Gallery tab's cameras panel (#67 item 3): how the cameras `facerec watch` follows stand, and their recent
events, read from the status file it writes under the gallery's home (`facerec.cameras.status_file`), so a watch
run on its own and this app beside it share nothing but the home. Admin only, like the rest of the tab. Names are
enrolled people's only ("unknown" for everyone else) and no face is shown: an event's face goes only to the sinks
the operator chose, and only with `--crops`."""

from __future__ import annotations

import time

import gradio as gr

from facerec.cameras.status_file import read_status
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text


def build(context: AppContext) -> None:
    CamerasPanel(context)


class CamerasPanel:
    def __init__(self, context: AppContext) -> None:
        self._home = context.gallery.services().settings.home
        with gr.Accordion("Cameras: who arrived and left (facerec watch)", open=False):
            gr.Markdown("The cameras `facerec watch` follows with this gallery (run it beside the app: see "
                        "docs/cameras.md), each camera's state, and the people who arrived and left.")
            show = gr.Button("Show cameras")
            self._cameras = gr.Markdown(elem_id="cameras-table")
            self._events = gr.Markdown(elem_id="cameras-events")
            self._status = status = gr.Markdown(elem_id="cameras-status")
        expose([show.click], self.shown, [context.gate.field], [self._cameras, self._events], status,
               api_name="cameras", admin=context.gate)

    def shown(self):
        status = read_status(self._home)
        if status is None:
            return {self._cameras: "", self._events: "",
                    self._status: "No camera is watched with this gallery: start `facerec watch CAMERA...` with its "
                                  "home."}
        rows = ["| camera | address | state | frames recognised | dropped | reconnects | present |",
                "|---|---|---|---|---|---|---|"]
        for camera in status["cameras"]:
            rows.append(_row(camera["camera"], camera["url"],
                             camera["state"] + (f": {camera['problem']}" if camera.get("problem") else ""),
                             f"{camera['frames_processed']:,}", f"{camera['frames_dropped']:,}", camera["reconnects"],
                             ", ".join(camera["present"]) or "nobody"))
        events = sorted((e for camera in status["cameras"] for e in camera["recent_events"]),
                        key=lambda e: e["at"], reverse=True)[:40]
        lines = ["| when (UTC) | camera | event | who | score |", "|---|---|---|---|---|"]
        lines += [_row(e["at"][:19].replace("T", " "), e["camera"], e["event"], e["name"],
                       "" if e.get("score") is None else f"{e['score']:.2f}") for e in events]
        written = time.strftime("%H:%M:%S", time.localtime(status["written_at"]))
        state = "watching" if status["running"] else "not running"
        return {self._cameras: "\n".join(rows), self._events: "\n".join(lines) if events else "No event yet.",
                self._status: f"facerec watch is {state} (last word at {written}); {len(status['cameras'])} "
                              "camera(s)."}


def _row(*values) -> str:
    """One Markdown table row; every value escaped (a camera's name and a person's are the operator's words)."""
    return "| " + " | ".join(markdown_text(str(value)) for value in values) + " |"
