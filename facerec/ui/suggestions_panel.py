"""The Gallery tab's suggestions panel: people seen again and again but not enrolled ("seen 5 times in 3 photos,
not enrolled: name them?"), each with its faces; naming one enrolls them, dismissing one forgets their faces.
Behind the admin password, like the rest of the tab; only kept when the operator started facerec with
FACEREC_SUGGESTIONS=on (the panel says so when it is off). One page of suggestions at a time (thousands of kept
faces can make thousands of suggestions: the whole list was once a 17.5 MB answer), from the last grouping of the
kept faces, which the gallery makes on a background thread; the status line says when a newer one is under way."""

from __future__ import annotations

import gradio as gr

from facerec.words.phrasing import plural
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text, number_picked, page_number
from facerec.ui.views import FACES_CSS, face_tiles

PAGE_SIZE = 20  # suggestions a page shows: 20 faces as tiles, each a small data: image


def build(context: AppContext) -> None:
    """The panel, admin-only (`context.gate`)."""
    SuggestionsPanel(context)


class SuggestionsPanel:
    """The accordion and its four actions: list a page of suggestions, open one, name it, dismiss it."""

    def __init__(self, context: AppContext) -> None:
        self._services = context.gallery.services()  # what the verbs do not offer
        with gr.Accordion("Suggested people: seen again and again, not enrolled", open=False):
            gr.Markdown("Faces that come back as unknown, grouped by person. Pick one, look at its faces, then name "
                        "the person (they are enrolled from their best photos) or dismiss it (its faces are "
                        "forgotten).")
            with gr.Row():
                page = gr.Number(value=1, label="Page", precision=0, minimum=1, elem_id="suggestions-page")
                show = gr.Button("Show suggestions")
            self._overview = gr.HTML(css_template=FACES_CSS, elem_id="suggestions-faces")
            choice = gr.Dropdown(label="Suggestion", choices=[], value=None, elem_id="suggestions-choice")
            self._faces = gr.HTML(css_template=FACES_CSS, elem_id="suggestion-faces")
            self._name = gr.Textbox(label="Their name", elem_id="suggestion-name")
            name_button = gr.Button("Enroll with this name", variant="primary")
            dismiss = gr.Button("Dismiss (forget these faces)", variant="stop")
            self._status = status = gr.Markdown(elem_id="suggestions-status")
            ok = gr.State(False)
        self._choice = choice
        outputs, password, gate = [self._overview, self._faces, status], context.gate.field, context.gate
        expose([show.click, page.submit], self.listed, [page, password], outputs, status, api_name="suggestions",
               extra_outputs=[choice], admin=gate)
        expose([choice.input], self.opened, [choice, password], [self._faces, status], status,
               api_name="suggestion_faces", admin=gate)
        naming = expose([name_button.click], self.named, [choice, self._name, page, password], outputs, status,
                        api_name="name_suggestion", extra_outputs=[choice, self._name], ok=ok, admin=gate)
        context.changes_people(naming, ok)  # the new person shows in the people table at once
        expose([dismiss.click], self.dismissed, [choice, page, password], outputs, status,
               api_name="dismiss_suggestion", extra_outputs=[choice], admin=gate)

    def listed(self, number=1):
        suggestions, strangers = self._services.suggestions, self._services.strangers
        shown = suggestions.list(offset=PAGE_SIZE * (page_number(number) - 1), limit=PAGE_SIZE)
        found = shown.suggestions
        captions = [_caption(s) for s in found]
        everyone = plural(shown.total, "suggested person", "suggested people")
        if not strangers.enabled:
            line = f"Suggestions are off: {markdown_text(strangers.why_disabled())}."
        elif not shown.total:
            line = "No suggestions yet: someone must come back unknown at least 3 times, in at least 2 photos."
        elif not found:
            line = f"{everyone}: page {page_number(number)} is past the last page."
        elif len(found) == shown.total:
            line = f"{everyone}. Pick one to see their faces."
        else:
            line = (f"{everyone}, {shown.offset + 1}-{shown.offset + len(found)} shown (change Page for others). "
                    "Pick one to see their faces.")
        if shown.refreshing:
            line += " Faces kept since are being grouped: press Show suggestions again in a moment."
        return {self._overview: face_tiles([(suggestions.crops(s.face_ids[:1]).get(s.face_ids[0]), c)
                                            for s, c in zip(found, captions)]),
                self._choice: gr.update(choices=captions, value=None), self._faces: "", self._status: line}

    def opened(self, picked):
        suggestion = self._services.suggestions.get(_id_of(picked))
        crops = self._services.suggestions.crops(suggestion.face_ids)
        return {self._faces: face_tiles([(crops.get(f), f"face {f}") for f in suggestion.face_ids]),
                self._status: f"{_caption(suggestion)}: type their name to enroll them, or dismiss them."}

    def named(self, picked, new_name, number=1):
        result = self._services.suggestions.name(_id_of(picked), new_name)
        shown = self.listed(number)
        shown[self._status] = (f"Enrolled **{markdown_text(result.name)}** from "
                               f"{plural(len(result.face_ids), 'photo')}. " + shown[self._status])
        shown[self._name] = ""  # named: the box is ready for the next one (#64 row 7)
        return shown

    def dismissed(self, picked, number=1):
        count = self._services.suggestions.dismiss(_id_of(picked))
        shown = self.listed(number)
        shown[self._status] = f"Dismissed: {plural(count, 'face')} forgotten. " + shown[self._status]
        return shown


def _caption(suggestion) -> str:
    """'suggestion 7 · seen 5 times in 3 photos, not enrolled' (the id first: the actions read it)."""
    return (f"suggestion {suggestion.id} · seen {suggestion.faces} times in {suggestion.photos} photos, "
            f"not enrolled")


def _id_of(picked) -> int:
    return number_picked(picked, "suggestion", "Show suggestions")
