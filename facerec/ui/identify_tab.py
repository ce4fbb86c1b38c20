"""Identify: every face of a photo, boxed and numbered on the picture as in the table (#0, #1, ... left to right),
named when it matches at the threshold in force, with its top candidates; or of a video (`facerec.ui.video_panel`)."""

from __future__ import annotations

import gradio as gr

from facerec.words.feedback import PHOTO_FACE
from facerec.words.threshold import shown_score, strangers_scoring, threshold_sentence
from facerec.faces.drawing import KNOWN, UNKNOWN, annotate
from facerec.words.phrasing import faces_left_out_message
from facerec.ui.actions import NEW_UPLOAD, expose, page_door
from facerec.ui.context import AppContext
from facerec.ui.feedback_panel import FeedbackPanel, PanelIds, Seen
import facerec.ui.video_panel as video_panel
from facerec.ui.text import markdown_text
from facerec.ui.threshold_controls import page_rule, rate_and_pin
from facerec.ui.page_pictures import MAX_SIDE, page_picture
from facerec.ui.views import IDENTIFY_TABLE_HEAD, IDENTIFY_TABLE_WIDTHS
from facerec.ui.uploads import (Unreadable, forget_upload, photo_input, photo_to_answer,
                                uploaded_photo)

HEADERS = ["face", "name", "score", "strangers who score this high", "candidate 1", "candidate 2", "candidate 3"]
PHOTO_IDS = PanelIds(choice="feedback-face", name="feedback-name", confirm="confirm-sighting",
                     correct="correct-sighting", reject="reject-sighting", not_this="not-this-person",
                     status="sighting-status")


def build(context: AppContext, default_percent: float) -> gr.Tab:
    """The Identify tab, open to everyone; with the admin password (`context.gate`) it shows every candidate."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    with gr.Tab("Identify", id="identify") as tab:
        kept = context.kept_state()  # the photo last answered about, in memory only
        with gr.Row():
            photo = photo_input("Photo", services.settings.max_upload_bytes,
                               sources=["upload", "webcam", "clipboard"])
            picture = page_picture("Who is who")
        with gr.Row():
            fpir, pinned = rate_and_pin(
                default_percent, "Accepted stranger-match rate (%)",
                "Of people who are NOT enrolled, the share that may wrongly be given a name. The threshold is "
                "set from it for this gallery's size.", services.settings.similarity_threshold)
            top_k = gr.Slider(1, 10, value=3, step=1, label="Candidates per face")
        threshold_note = gr.Markdown(elem_id="identify-threshold-note")
        button = gr.Button("Identify", variant="primary")
        status = gr.Markdown(elem_id="identify-status")
        table = gr.Dataframe(headers=HEADERS, label="Top candidates per face", interactive=False, wrap=True,
                             column_widths=IDENTIFY_TABLE_WIDTHS, elem_id="identify-table")
        gr.HTML("", head=IDENTIFY_TABLE_HEAD, padding=False)
        gr.Markdown(("**Right or wrong?** With the admin password: confirm a face, or say who it really is. "
                     if context.password_needed else "**Right or wrong?** Confirm a face, or say who it really is. ")
                    + "Named faces are kept as sightings for the Health tab (at most 10 of one person an hour); "
                      "your answer makes one certain, and teaches the gallery the face as another template of the "
                      "person (after the checks of Add photo), so their next photos are recognised more often. "
                      "*Not this person* keeps a wrongly named face as that person's negative example, so faces "
                      "like it are no longer named them.")
        panel = FeedbackPanel(context, PHOTO_FACE, PHOTO_IDS, kept)
        with gr.Accordion("Details (JSON)", open=False):
            details = gr.JSON()
        video_panel.build(context, pinned, top_k, fpir)  # a video instead: the same controls

    def policy(fpir_percent, pinned_threshold):
        """The threshold identify would use now, for this gallery, in plain words."""
        rate, threshold = page_rule(services.settings, fpir_percent, pinned_threshold)
        rule = services.thresholds.in_force(fpir=rate, threshold=threshold, with_people=True)
        return {threshold_note: threshold_sentence(rule)}

    def identify(photo, pinned_threshold=None, top_k=3, password="", fpir_percent=None, answered=None,
                 request: gr.Request = None):
        # The API keeps its order (photo, threshold, top_k, password): a number there pins the threshold; leave it
        # empty (None) to follow the accepted stranger-match rate, the fifth input (percent).
        try:
            return _identify(photo, pinned_threshold, top_k, password, fpir_percent, answered, request)
        finally:  # answered or refused, the upload leaves the server; the page keeps what it answered about
            forget_upload(photo, context.web_cache)

    def _identify(photo, pinned_threshold, top_k, password, fpir_percent, answered, request):
        admin, unchecked = context.gate.admits(password, request)  # locked out: answered as for anyone, said why
        rate, threshold = page_rule(services.settings, fpir_percent, pinned_threshold)
        answered = photo_to_answer(photo, answered, services.photos.read)
        # Without the password: no threshold below the one in force for the gallery (a pinned one, or one from a
        # looser accepted rate, falls back to it), and nothing about faces that do not match.
        matches = gallery.identify(answered.photo, top_k=int(top_k), threshold=threshold, fpir=rate,
                                   not_below_default=not admin)
        left_out = faces_left_out_message(matches.found, len(matches))
        faces_seen = [Seen(m.sighting_id, m.embedding, m.name, m.face) for m in matches] if admin else None
        if not admin:
            matches = [match.redacted() for match in matches]
        labels = [f"#{i} {m.label}" + (f" {shown_score(m.score, m.similarity)}" if shown_score(m.score, m.similarity)
                                       else "") for i, m in enumerate(matches)]
        colours = [KNOWN if m.name else UNKNOWN for m in matches]
        rows = [[f"#{i}", m.label, shown_score(m.score, m.similarity),  # the number the decision compared
                 strangers_scoring(m.stranger_far) if m.name else "",
                 *[f"{c.name} ({shown_score(c.score, c.similarity)})" for c in m.candidates[:3]],
                 *[""] * (3 - len(m.candidates[:3]))] for i, m in enumerate(matches)]
        # The threshold's sentence is said once, in the note above the button: the rule this answer used.
        summary = f"{len(matches)} face(s): " + ", ".join(f"#{i} {markdown_text(m.label)}"
                                                          for i, m in enumerate(matches)) + "."
        if left_out:
            summary += " " + left_out
        if not admin:
            summary += " Only matching names are shown without the admin password."
        if unchecked:
            summary += " " + unchecked
        drawn = annotate(answered.photo.pixels, [m.face for m in matches], labels, colours, max_side=MAX_SIDE,
                         scale=answered.photo.scale)
        return {picture: drawn, table: rows,
                status: summary, threshold_note: threshold_sentence(matches[0].rule),
                details: [m.to_dict() for m in matches], kept: context.keep(answered),
                **panel.offer(faces_seen, [f"#{i} {m.label}" for i, m in enumerate(matches)])}

    def cleared(photo):
        """A new photo: nothing of the previous one's answer stays on the page, and a file that is not a usable
        image says so at once (and leaves the server), as Enroll and Verify do on upload, not only when Identify
        is pressed. A usable photo stays until Identify answers about it (then the page keeps it in memory)."""
        if isinstance(photo, Unreadable):
            forget_upload(photo, context.web_cache)
            uploaded_photo(photo)
        return {picture: None, table: None, status: "", details: None, panel.seen: None, panel.status: "", kept: None}

    expose([fpir.change, pinned.change, tab.select, context.app.load], policy, [fpir, pinned], [threshold_note],
           threshold_note)
    # A file that is no photo is taken out of the photo box (it showed a broken-image icon), its reason in `status`.
    gr.on([photo.input], page_door(cleared, [photo, picture, table, details, panel.seen, panel.status, kept], status),
          [photo], [photo, picture, table, status, details, panel.seen, panel.status, kept], api_visibility="private",
          **NEW_UPLOAD)
    expose([button.click], identify, [photo, pinned, top_k, context.gate.field, fpir, kept], [picture, table, status, details],
           status, api_name="identify", also_clear=[panel.seen, panel.status],
           extra_outputs=[*panel.outputs, threshold_note, kept])
    return tab
