"""Verify: are two photos the same person? A photo with several faces shows them numbered and asks which one."""

from __future__ import annotations

import gradio as gr

from facerec.words.threshold import compared, threshold_sentence
from facerec.errors import MultipleFaces
from facerec.ui.actions import NEW_UPLOAD, Instead, expose
from facerec.ui.context import AppContext
from facerec.ui.face_picker import NUMBER_SHOWN, chosen_face, faces_view
from facerec.ui.page_pictures import page_picture
from facerec.ui.threshold_controls import page_rule, rate_and_pin
from facerec.ui.uploads import forget_upload, photo_input, photo_to_answer, received_photo


def build(context: AppContext, default_percent: float) -> None:
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    with gr.Tab("Verify", id="verify"):
        with gr.Row():
            side_a = _side("first", "verify-a", context)
            side_b = _side("second", "verify-b", context)
        with gr.Row():
            fpir, pinned = rate_and_pin(
                default_percent, "Accepted false-match rate (%)",
                "Verify compares two photos once, so this is the share of pairs of different people that may be "
                "called the same person.", services.settings.similarity_threshold)
        threshold_note = gr.Markdown(elem_id="verify-threshold-note")
        button = gr.Button("Compare", variant="primary")
        status = gr.Markdown(elem_id="verify-status")
        details = gr.JSON(visible=False)

    def policy(fpir_percent, pinned_threshold):
        rate, threshold = page_rule(services.settings, fpir_percent, pinned_threshold)
        rule = services.thresholds.for_verification(fpir=rate, threshold=threshold)
        return {threshold_note: threshold_sentence(rule)}

    def verify(photo_a, photo_b, pinned_threshold=None, fpir_percent=None, face_a=None, face_b=None,
               answered_a=None, answered_b=None):
        try:
            return _verify(photo_a, photo_b, pinned_threshold, fpir_percent, face_a, face_b, answered_a, answered_b)
        finally:  # answered or refused: the server keeps no copy; the page does, in memory
            for photo in (photo_a, photo_b):
                forget_upload(photo, context.web_cache)

    def _verify(photo_a, photo_b, pinned_threshold, fpir_percent, face_a, face_b, answered_a, answered_b):
        rate, threshold = page_rule(services.settings, fpir_percent, pinned_threshold)
        index_a, index_b = chosen_face(face_a, "face_a"), chosen_face(face_b, "face_b")
        answered_a = photo_to_answer(photo_a, answered_a, services.photos.read, "upload two photos")
        answered_b = photo_to_answer(photo_b, answered_b, services.photos.read, "upload two photos")
        result = gallery.verify(answered_a.photo, answered_b.photo, threshold=threshold, fpir=rate, face_a=index_a,
                                face_b=index_b)
        verdict = "Same person" if result.same_person else "Different people"
        # The threshold's sentence is said once, in the note above the button: the rule this answer used.
        numbers = compared(result.score, result.similarity, result.score_threshold, result.rule, result.stranger_far)
        return {status: f"**{verdict}** — {numbers}.",
                threshold_note: threshold_sentence(result.rule), details: result.to_dict(),
                side_a["kept"]: context.keep(answered_a), side_b["kept"]: context.keep(answered_b)}

    for side in (side_a, side_b):
        _faces_on_upload(context, side, [status, details])
    expose([fpir.change, pinned.change, context.app.load], policy, [fpir, pinned], [threshold_note],
           threshold_note)
    expose([button.click], verify, [side_a["photo"], side_b["photo"], pinned, fpir, side_a["choice"],
                                    side_b["choice"], side_a["kept"], side_b["kept"]], [status, details], status,
           api_name="verify", extra_outputs=[threshold_note, side_a["kept"], side_b["kept"]],
           page_hints={MultipleFaces: Instead(lambda error: f"{error.photo} has {len(error.faces)} faces: pick the "
                                                            f"one to compare under it, by {NUMBER_SHOWN}, then press "
                                                            "Compare")},
           api_hints={MultipleFaces: "Pass face_a or face_b: the face's number, from 0, as /detect draws it on the "
                                     "photo."})


def _faces_on_upload(context: AppContext, side: dict, cleared: list) -> None:
    """A new photo on one side: its faces (numbered, with a choice, only when it has several), and no verdict about
    the previous one (`cleared`)."""
    services = context.gallery.services()
    picture, choice, note = side["faces"], side["choice"], side["note"]

    def detect(photo, picture=picture, choice=choice, note=note, which=side["which"], kept=side["kept"]):
        answered = received_photo(photo, services.photos.read, context.web_cache)  # kept for Compare
        annotated, choices, text, count = (
            faces_view(context.gallery, *services.photos.detect(answered.photo), preselect_largest=False, which=which)
            if answered else (None, gr.update(choices=[], value=None), "", 0))
        several = count > 1  # one face needs no choice; the picture and the picker appear only to choose
        return {picture: gr.update(value=annotated, visible=several), choice: {**choices, "visible": several},
                note: text, kept: context.keep(answered)}

    expose([side["photo"].input], detect, [side["photo"]], [picture, choice, note], note,
           also_clear=[*cleared, side["kept"]],
           on_failure={picture: gr.update(value=None, visible=False),
                       choice: gr.update(choices=[], value=None, visible=False)}, **NEW_UPLOAD)


def _side(which: str, elem_id: str, context: AppContext) -> dict:
    """One photo's column: the upload, then (only when it has several faces) its numbered faces and the choice."""
    label = f"the {which} photo"
    with gr.Column():
        photo = photo_input(f"{which.capitalize()} photo", context.gallery.services().settings.max_upload_bytes)
        note = gr.Markdown(elem_id=f"{elem_id}-faces-note")
        faces = page_picture(f"Faces found in {label}", visible=False, elem_id=f"{elem_id}-faces")
        choice = gr.Dropdown(label=f"Face to compare in {label}", choices=[], value=None, allow_custom_value=True,
                             visible=False, elem_id=f"{elem_id}-choice")
    kept = context.kept_state()  # the photo last compared, in memory only
    return {"photo": photo, "note": note, "faces": faces, "choice": choice, "which": label, "kept": kept}
