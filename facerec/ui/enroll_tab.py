"""Enroll: one photo and a name. The faces found are drawn and numbered; with several, one is picked."""

from __future__ import annotations

import gradio as gr

from facerec.errors import LowQuality, MultipleFaces, PossibleDuplicate
from facerec.words.phrasing import plural
from facerec.ui.actions import NEW_UPLOAD, Instead, expose
from facerec.ui.context import AppContext
from facerec.ui.face_picker import chosen_face, faces_view
from facerec.ui.page_pictures import captioned_picture
from facerec.ui.text import markdown_text
from facerec.ui.uploads import forget_upload, photo_input, photo_to_answer, received_photo

LOOKALIKE_BOX = "Enroll anyway if the face matches someone already enrolled"
LOW_QUALITY_BOX = "Enroll anyway if the photo is a poor enrollment photo"


def build(context: AppContext) -> None:
    """The Enroll tab (enrolling is admin-only: `context.gate`)."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    with gr.Tab("Enroll", id="enroll"):
        if context.password_needed:  # said before the photo, not only when Enroll is pressed (#64 row 13)
            gr.Markdown("Enrolling needs the admin password: type it at the top of the page first. Finding the "
                        "faces and judging the photo work without it.", elem_id="enroll-password-hint")
        ok = gr.State(False)
        kept = context.kept_state()  # the photo last detected, decoded, kept in memory for this page
        with gr.Row():
            photo = photo_input("Photo (upload or webcam)", services.settings.max_upload_bytes,
                               sources=["upload", "webcam", "clipboard"])
            faces = captioned_picture("Faces found", "enroll-faces")
            crop = captioned_picture("Aligned face (what is stored)", "enroll-crop")
        detect_status = gr.Markdown(elem_id="detect-status")
        quality_note = gr.Markdown(elem_id="enroll-quality")
        name = gr.Textbox(label="Name")
        with gr.Row():
            face_choice = gr.Dropdown(label="Face to enroll", choices=[], value=None, allow_custom_value=True)
            allow_lookalike = gr.Checkbox(label=LOOKALIKE_BOX)
            allow_low_quality = gr.Checkbox(label=LOW_QUALITY_BOX)
        note = gr.Textbox(label="Note (optional)", value="")
        button = gr.Button("Enroll", variant="primary")
        status = gr.Markdown(elem_id="enroll-status")
        with gr.Accordion("Details (JSON)", open=False):
            details = gr.JSON()

    def detect(photo):
        answered = received_photo(photo, services.photos.read, context.web_cache)  # kept by the page for Enroll
        if answered is None:
            return {faces: None, face_choice: gr.update(choices=[], value=None), kept: None,
                    detect_status: "Upload a photo to see the faces found in it.", quality_note: ""}
        found = services.photos.detect(answered.photo)
        picture, choices, text, count = faces_view(gallery, *found, preselect_largest=True)
        # The preselected face's enrollment quality, from the same detection, before the user presses Enroll
        # (the check repeats then).
        quality = (services.photos.enrollment_quality(found[0], chosen_face(choices["value"]), found[1])
                   if count else None)
        return {faces: picture, face_choice: choices, detect_status: text, kept: context.keep(answered),
                quality_note: markdown_text(quality.sentence()) if quality else ""}

    def enroll(photo, name, face_choice=None, allow_lookalike=False, note=None, allow_low_quality=False,
               answered=None):
        try:
            answered = photo_to_answer(photo, answered, services.photos.read)
            result = gallery.enroll(answered.photo, name, face_index=chosen_face(face_choice, "face to enroll"),
                                    allow_lookalike=bool(allow_lookalike), note=note or None,
                                    allow_low_quality=bool(allow_low_quality))
        finally:  # stored or refused, the upload leaves the server (the page keeps the photo to try again)
            forget_upload(photo, context.web_cache)
        people = services.directory.count()
        message = (f"Enrolled **{markdown_text(result.name)}** ({result.photos} photo). The gallery now has "
                   f"{plural(people, 'person', 'people')}.")
        if result.lookalikes:
            message += " Looks like: " + ", ".join(f"{markdown_text(n)} ({s:.3f})" for n, s in result.lookalikes)
        # The quality sentence is said once, in its note under the photo (updated to the enrolled face's).
        return {crop: result.crop, status: message, details: result.to_dict(),
                quality_note: markdown_text(result.quality.sentence()) if result.quality is not None else ""}

    # A new photo: its faces, and nothing left of the previous enrollment's result.
    expose([photo.input], detect, [photo], [faces, face_choice, detect_status], detect_status, api_name="detect",
           also_clear=[status, crop, details, quality_note, kept],
           on_failure={face_choice: gr.update(choices=[], value=None)}, **NEW_UPLOAD)
    event = expose([button.click], enroll, [photo, name, face_choice, allow_lookalike, note, context.gate.field,
                                            allow_low_quality, kept],
                   [crop, status, details], status, api_name="enroll", ok=ok, extra_outputs=[quality_note],
                   admin=context.gate, refused=lambda photo, *_: forget_upload(photo, context.web_cache),
                   page_hints={PossibleDuplicate: f"If this is a different person, tick '{LOOKALIKE_BOX}' and "
                                                  "press Enroll again.",
                               LowQuality: f"To enroll it anyway, tick '{LOW_QUALITY_BOX}' and press Enroll again.",
                               MultipleFaces: Instead(lambda error: f"{error.photo} has {len(error.faces)} "
                                                                    "faces: pick the one to enroll under it")},
                   api_hints={PossibleDuplicate: "If this is a different person, call again with "
                                                 "allow_lookalike=True.",
                              LowQuality: "To enroll it anyway, call again with allow_low_quality=True.",
                              MultipleFaces: "Pass face_choice, e.g. 'face #0' (numbered as /detect draws them on "
                                             "the photo)."})
    context.changes_people(event, ok)
