"""The Gallery tab's templates panel: the faces a person is searched by, where each came from, and a one-click
remove (a face learned from a wrong confirmation, say). Behind the admin password, like the rest of the tab."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from facerec.errors import InvalidArgument
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text
from facerec.ui.views import FACES_CSS, face_tiles
from facerec.words.people import faces_text
from facerec.words.templates import origin_text

@dataclass
class TemplatesPanel:
    name: gr.Textbox  # filled when a row of the people table is clicked


def build(context: AppContext) -> TemplatesPanel:
    """The panel, admin-only (`context.gate`)."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    with gr.Accordion("Templates: the faces a person is recognised by", open=False):
        gr.Markdown("Enrolled and added photos, and faces learned when you confirmed or corrected an "
                    "identification (Identify tab). Remove one that should not be there. Faces you said are *not* "
                    "this person are listed too, as negative examples; removing one undoes it.")
        name = gr.Textbox(label="Name", elem_id="templates-name")
        show = gr.Button("Show templates")
        tiles = gr.HTML(css_template=FACES_CSS, elem_id="templates-faces")
        face_choice = gr.Dropdown(label="Face to remove", choices=[], value=None, elem_id="templates-face")
        remove = gr.Button("Remove this face", variant="stop")
        status = gr.Markdown(elem_id="templates-status")
        ok = gr.State(False)

    def listed(name):
        if not name:
            raise InvalidArgument("type a name (or click a person in the table above), then press Show templates")
        kept = services.templates.of(name)
        negatives = services.negatives.of(name)
        captions = [_caption(t) for t in kept]
        learned = sum(t.origin == "learned" for t in kept)
        crops = [services.directory.face_crop(t.face_id) for t in kept]
        said = [f"negative {n.id} · not this person, said with {n.said_by}, {n.created_at:%Y-%m-%d}" for n in negatives]
        tiles_shown = list(zip(crops, captions)) + [(services.directory.negative_crop(n.id), caption)
                                                     for n, caption in zip(negatives, said)]
        counted = f"{faces_text(len(kept), learned)}" + (f", {len(negatives)} negative example(s)" if negatives else "")
        return {tiles: face_tiles(tiles_shown), face_choice: gr.update(choices=captions + said, value=None),
                status: f"**{markdown_text(name)}**: {counted}."}

    def removed(name, face):
        if not face:
            raise InvalidArgument("pick the face to remove first")
        kind, number = str(face).split()[:2]
        if kind == "negative":
            if int(number) not in [n.id for n in services.negatives.of(name)]:
                raise InvalidArgument(f"'{name}' has no negative example {number}: press Show templates again")
            services.negatives.remove(int(number))
            shown = listed(name)
            shown[status] = f"Removed negative example {number}: faces like it may be named them again. " + shown[status]
            return shown
        face_id = int(number)
        if face_id not in [t.face_id for t in services.templates.of(name)]:
            raise InvalidArgument(f"'{name}' has no face {face_id}: press Show templates again")
        gone = services.templates.remove(face_id)
        shown = listed(name)
        shown[status] = f"Removed face {gone.face_id} ({origin_text(gone.origin)}). " + shown[status]
        return shown

    password = context.gate.field
    expose([show.click], listed, [name, password], [tiles, status], status, api_name="templates",
           extra_outputs=[face_choice], admin=context.gate)
    removal = expose([remove.click], removed, [name, face_choice, password], [tiles, status], status,
                     api_name="remove_template", extra_outputs=[face_choice], ok=ok, admin=context.gate)
    context.changes_people(removal, ok)  # the people table's learned count and thumbnail follow at once
    return TemplatesPanel(name)


def _caption(template) -> str:
    """'face 12 · learned from sighting 5, confirmed with the admin password, 2026-12-03' (the face id first:
    Remove reads it)."""
    origin = origin_text(template.origin, template.learned_from, template.learned_by)
    return f"face {template.face_id} · {origin}, {template.added_at:%Y-%m-%d}"
