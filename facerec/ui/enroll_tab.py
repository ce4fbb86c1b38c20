"""Enroll: one photo and a name. The faces found are drawn and numbered; with several, one is picked."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from facerec.errors import LowQuality, MultipleFaces, PossibleDuplicate
from facerec.messages import plural
from facerec.ui.actions import Instead, expose
from facerec.ui.context import AppContext
from facerec.ui.face_picker import chosen_face, detected_faces, faces_view
from facerec.ui.text import markdown_text
from facerec.ui.uploads import PhotoInput, forget_upload, uploaded_photo

LOOKALIKE_BOX = "Enroll anyway if the face matches someone already enrolled"
LOW_QUALITY_BOX = "Enroll anyway if the photo is a poor enrollment photo"


@dataclass
class EnrollTab:
    password: gr.Textbox
    enrolled: object  # the page event of a successful or failed enrollment (followed by the people list refresh)
    ok: gr.State


def build(context: AppContext, password_visible: bool) -> EnrollTab:
    gallery = context.gallery
    with gr.Tab("Enroll"):
        with gr.Row():
            photo = PhotoInput(image_mode=None, type="filepath", label="Photo (upload or webcam)",
                               sources=["upload", "webcam", "clipboard"])
            faces = gr.Image(type="numpy", label="Faces found", interactive=False)
            crop = gr.Image(type="numpy", label="Aligned face (what is stored)", interactive=False)
        detect_status = gr.Markdown(elem_id="detect-status")
        quality_note = gr.Markdown(elem_id="enroll-quality")
        name = gr.Textbox(label="Name")
        with gr.Row():
            face_choice = gr.Dropdown(label="Face to enroll", choices=[], value=None, allow_custom_value=True)
            allow_lookalike = gr.Checkbox(label=LOOKALIKE_BOX)
            allow_low_quality = gr.Checkbox(label=LOW_QUALITY_BOX)
        note = gr.Textbox(label="Note (optional)", value="")
        password = gr.Textbox(label="Admin password", type="password", value="", visible=password_visible)
        button = gr.Button("Enroll", variant="primary")
        status = gr.Markdown(elem_id="enroll-status")
        with gr.Accordion("Details (JSON)", open=False):
            details = gr.JSON()
    ok = gr.State(False)

    def detect(photo):
        found = gallery.detect(uploaded_photo(photo)) if photo else None
        picture, choices, text, count = (faces_view(gallery, *found, preselect_largest=True) if found else
                                         detected_faces(gallery, photo, preselect_largest=True))
        # The preselected face's enrollment quality, from the same detection, before the user presses Enroll
        # (the check repeats then).
        quality = gallery.enrollment_quality(found[0], chosen_face(choices["value"]), found[1]) if count else None
        return {faces: picture, face_choice: choices, detect_status: text or "Upload a photo to see the faces "
                                                                          "found in it.",
                quality_note: markdown_text(quality.sentence()) if quality else ""}

    def enroll(photo, name, face_choice=None, allow_lookalike=False, note=None, password="",
               allow_low_quality=False, request: gr.Request = None):
        context.require_admin(password, request)
        path = uploaded_photo(photo)
        result = gallery.enroll(path, name, face_index=chosen_face(face_choice, "face to enroll"),
                                allow_lookalike=bool(allow_lookalike), note=note or None,
                                allow_low_quality=bool(allow_low_quality))
        forget_upload(path, context.web_cache)
        people = gallery.store.counts()[0]
        message = (f"Enrolled **{markdown_text(result.name)}** ({result.photos} photo). The gallery now has "
                   f"{plural(people, 'person', 'people')}.")
        if result.lookalikes:
            message += " Looks like: " + ", ".join(f"{markdown_text(n)} ({s:.3f})" for n, s in result.lookalikes)
        # The quality sentence is said once, in its note under the photo (updated to the enrolled face's).
        return {crop: result.crop, status: message, details: result.to_dict(),
                quality_note: markdown_text(result.quality.sentence()) if result.quality is not None else ""}

    # A new photo: its faces, and nothing left of the previous enrollment's result.
    expose([photo.input], detect, [photo], [faces, face_choice, detect_status], detect_status, api_name="detect",
           also_clear=[status, crop, details, quality_note],
           on_failure={face_choice: gr.update(choices=[], value=None)})
    event = expose([button.click], enroll, [photo, name, face_choice, allow_lookalike, note, password,
                                            allow_low_quality],
                   [crop, status, details], status, api_name="enroll", ok=ok, extra_outputs=[quality_note],
                   page_hints={PossibleDuplicate: f"If this is a different person, tick '{LOOKALIKE_BOX}' and "
                                                  "press Enroll again.",
                               LowQuality: f"To enroll it anyway, tick '{LOW_QUALITY_BOX}' and press Enroll again.",
                               MultipleFaces: Instead(lambda error: f"{error.photo} has {len(error.faces)} "
                                                                    "faces: pick the one to enroll under it")},
                   api_hints={PossibleDuplicate: "If this is a different person, call again with "
                                                 "allow_lookalike=True.",
                              LowQuality: "To enroll it anyway, call again with allow_low_quality=True.",
                              MultipleFaces: "Pass face_choice, e.g. 'face #0' (numbered left to right, as /detect "
                                             "lists them)."})
    return EnrollTab(password, event, ok)
