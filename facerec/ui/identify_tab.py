"""Identify: every face of a photo, boxed and numbered on the picture as in the table (#0, #1, ... left to right),
named when it matches at the threshold in force, with its top candidates."""

from __future__ import annotations

import gradio as gr

from ..drawing import KNOWN, UNKNOWN, annotate
from .actions import expose
from .context import AppContext
from .text import markdown_text
from .threshold_controls import accepted_rate, parse_pinned, rate_and_pin
from .uploads import PhotoInput, uploaded_photo

HEADERS = ["face", "name", "similarity", "candidate 1", "candidate 2", "candidate 3"]


def build(context: AppContext, default_percent: float, password_visible: bool) -> gr.Tab:
    gallery = context.gallery
    with gr.Tab("Identify") as tab:
        with gr.Row():
            photo = PhotoInput(image_mode=None, type="filepath", label="Photo",
                               sources=["upload", "webcam", "clipboard"])
            picture = gr.Image(type="numpy", label="Who is who", interactive=False)
        with gr.Row():
            fpir, pinned = rate_and_pin(
                default_percent, "Accepted stranger-match rate (%)",
                "Of people who are NOT enrolled, the share that may wrongly be given a name. The threshold is "
                "set from it for this gallery's size.")
            top_k = gr.Slider(1, 10, value=3, step=1, label="Candidates per face")
        threshold_note = gr.Markdown(elem_id="identify-threshold-note")
        password = gr.Textbox(label="Admin password (optional: shows every candidate)", type="password", value="",
                              visible=password_visible)
        button = gr.Button("Identify", variant="primary")
        status = gr.Markdown(elem_id="identify-status")
        table = gr.Dataframe(headers=HEADERS, label="Top candidates per face", interactive=False)
        with gr.Accordion("Details (JSON)", open=False):
            details = gr.JSON()

    def policy(fpir_percent, pinned_threshold):
        """The threshold identify would use now, for this gallery, in plain words."""
        rule = gallery.threshold_in_force(fpir=accepted_rate(fpir_percent), threshold=parse_pinned(pinned_threshold),
                                          with_people=True)
        return {threshold_note: rule.sentence()}

    def identify(photo, pinned_threshold=None, top_k=3, password="", fpir_percent=None,
                 request: gr.Request = None):
        # The API keeps its order (photo, threshold, top_k, password): a number there pins the threshold; leave it
        # empty (None) to follow the accepted stranger-match rate, the fifth input (percent).
        path = uploaded_photo(photo)
        admin = context.is_admin(password, request)
        threshold, rate = parse_pinned(pinned_threshold), accepted_rate(fpir_percent)
        # Without the password: no threshold below the one in force for the gallery (a pinned one, or one from a
        # looser accepted rate, falls back to it), and nothing about faces that do not match.
        if not admin and gallery.threshold_in_force(rate, threshold).threshold < gallery.threshold:
            threshold, rate = None, None
        decoded = gallery.read(path)
        matches = gallery.identify(decoded, top_k=int(top_k), threshold=threshold, fpir=rate)
        if not admin:
            matches = [match.redacted() for match in matches]
        labels = [f"#{i} {m.label}" + ("" if m.similarity is None else f" {m.similarity:.3f}")
                  for i, m in enumerate(matches)]
        colours = [KNOWN if m.name else UNKNOWN for m in matches]
        rows = [[f"#{i}", m.label, None if m.similarity is None else round(m.similarity, 3),
                 *[f"{c.name} ({c.similarity:.3f})" for c in m.candidates[:3]],
                 *[""] * (3 - len(m.candidates[:3]))] for i, m in enumerate(matches)]
        summary = (f"{len(matches)} face(s): " + ", ".join(f"#{i} {markdown_text(m.label)}"
                                                           for i, m in enumerate(matches))
                   + f". {matches[0].rule.sentence()}")
        if not admin:
            summary += " Only matching names are shown without the admin password."
        return {picture: annotate(decoded.pixels, [m.face for m in matches], labels, colours), table: rows,
                status: summary, details: [m.to_dict() for m in matches]}

    def cleared(photo):
        """A new photo: nothing of the previous one's answer stays on the page."""
        return {picture: None, table: None, status: "", details: None}

    expose([fpir.change, pinned.change, tab.select, context.app.load], policy, [fpir, pinned], [threshold_note],
           threshold_note)
    gr.on([photo.change], cleared, [photo], [picture, table, status, details], api_visibility="private")
    expose([button.click], identify, [photo, pinned, top_k, password, fpir], [picture, table, status, details],
           status, api_name="identify")
    return tab
