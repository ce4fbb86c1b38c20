"""Identify in a video, on the Identify tab beside the photo: the annotated video (VP9 WebM, which browsers play),
one row per face followed (a track) with its best face, and Confirm / Correct / Nobody enrolled per track.

A track is one sighting (`facerec.gallery.video`), so the answers are the photo rows' own sightings
feedback (`SightingsFeedback`: `confirm`, `correct`, `reject`, `label`) on the track's sighting, or on its pooled
embedding with its best aligned face when it was not kept (unknown, or past the pace of sightings): either way a
confirmation learns the track's face as a photo's (`facerec.gallery.templates`). Without the admin password a page user gets what a photo gives them (names only of tracks that match,
no looser threshold) and the tighter bounds of `ANONYMOUS_LIMITS`: an upload is anonymous, so its cost must be
bounded by what an outsider may send. The uploaded video leaves the server once answered; the annotated copy is
kept with the page's other served files, for as long.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import gradio as gr

from facerec.errors import FaceRecError, InvalidArgument, LockedOut
from facerec.formats.archive import encode_crop
from facerec.gallery.video import VideoAnswer
from facerec.words.phrasing import score_text
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text
from facerec.ui.threshold_controls import page_rule
from facerec.ui.uploads import CACHE_MAX_AGE_S, delete_later, forget_upload
from facerec.ui.views import FACES_CSS, face_tiles
from facerec.gallery.video import ANONYMOUS_LIMITS, CONTAINERS
from facerec.video.waiting_room import PLACES, WaitingRoom
from facerec.words.templates import learning_sentence, not_this_sentence, undo_sentence
from facerec.words.video import pooled_sentence, preview_note, span, video_summary

DRAWING = "Drawing the answer on the video above…"
VIDEO_GONE = ("the uploaded video is no longer on the server (a video is deleted once it has been answered, and "
              "uploads expire); upload it again")
HEADERS = ["track", "name", "score", "on screen", "frames seen", "best candidates"]
MAX_NAMES = 1000  # names offered for a correction (any enrolled name may be typed)


def stepper(progress: gr.Progress, step: str) -> Callable[[int, int], None]:
    """A `progress(done, total)` callback that shows Gradio's progress bar named after `step`, on every 30th frame
    and the last (each update is a message to the page)."""
    def update(done: int, total: int) -> None:
        if total and (done == total or done % 30 == 0):
            progress(min(done / total, 1.0), desc=f"{step}: frame {done:,} of {total:,}")
    return update


def build(context: AppContext, password: gr.Textbox, pinned: gr.Textbox, top_k: gr.Slider,
          fpir: gr.Number) -> None:
    """The video half of the Identify tab, sharing its threshold controls and candidates slider."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    seen = gr.State(None)  # per track (admin only): [sighting id or None, pooled embedding, name, best face, crop]
    learned = gr.State(False)
    gr.Markdown(f"### Or a video\n{CONTAINERS}; each face is followed across the frames and named once.",
                elem_id="identify-video-intro")
    with gr.Row():
        # Faces and names: downloaded by the user who asked, never offered to Gradio's share service (#64 row 6).
        video = gr.Video(label="Video", sources=["upload"], include_audio=True, elem_id="identify-video", buttons=[])
        annotated = gr.Video(label="Who is who, followed", interactive=False, elem_id="identify-video-annotated",
                             buttons=["download"])
    button = gr.Button("Identify video", variant="primary", elem_id="identify-video-button")
    status = gr.Markdown(elem_id="identify-video-status")
    table = gr.Dataframe(headers=HEADERS, label="One row per face followed (a track)", interactive=False, wrap=True,
                         elem_id="video-tracks")
    # Inside the answer as data: images, never files in the web cache that a URL could fetch (#63 row 6).
    faces = gr.HTML(css_template=FACES_CSS, elem_id="video-faces", label="Each track's best face")
    with gr.Row():
        track_choice = gr.Dropdown(label="Track", choices=[], value=None, elem_id="video-feedback-track")
        name_choice = gr.Dropdown(label="Who it really is (for Correct)", choices=[], value=None,
                                  allow_custom_value=True, elem_id="video-feedback-name")
    with gr.Row():
        confirm_button = gr.Button("Confirm", elem_id="video-confirm")
        correct_button = gr.Button("Correct", elem_id="video-correct")
        reject_button = gr.Button("Nobody enrolled", elem_id="video-reject")
        not_button = gr.Button("Not this person", elem_id="video-not-this-person")
    feedback = gr.Markdown(elem_id="video-sighting-status")

    room, turn = WaitingRoom(PLACES), threading.Lock()  # one video followed at a time, two more may wait

    def identify_video(path, pinned_threshold=None, top_k=3, password="", fpir_percent=None,
                       request: gr.Request = None, progress=gr.Progress()):
        """In two steps (#64 row 1): the tracks' table as soon as the faces are followed, then the annotated copy
        (the slower step) below it."""
        try:
            with room.admitted(), turn:  # a full room is refused at once (`Busy`), never queued
                yield from _identify_video(path, pinned_threshold, top_k, password, fpir_percent, request, progress)
        finally:  # answered or refused, the upload leaves the server
            forget_upload(path, context.web_cache)

    def _identify_video(path, pinned_threshold, top_k, password, fpir_percent, request, progress):
        try:
            admin, unchecked = context.is_admin(password, request), ""
        except LockedOut as error:  # identify needs no password: answered as for anyone, and said why
            admin, unchecked = False, f" The admin password was not checked. {error}"
        if not path:
            raise InvalidArgument("upload a video first")
        if not Path(path).is_file():  # answered already (the same bytes sent twice share one upload), or expired
            raise InvalidArgument(VIDEO_GONE)
        limits = None if admin else ANONYMOUS_LIMITS
        rate, threshold = page_rule(services.settings, fpir_percent, pinned_threshold)  # as the photo's rule
        answer = gallery.identify_video(path, top_k=int(top_k), threshold=threshold, fpir=rate,
                                        not_below_default=not admin, limits=limits, label=Path(path).name,
                                        progress=stepper(progress, "Following the faces"))
        matches = [t.match if admin else t.match.redacted() for t in answer.tracks]
        data = answer.to_dict()
        labels = [f"#{i} {m.label}" for i, m in enumerate(matches)]
        rows = [[f"#{i}", m.label, score_text(m.score) if m.score is not None else "",
                 span(track["first_time"], track["last_time"]), track["frames_seen"],
                 ", ".join(f"{c.name} ({score_text(c.score)})" for c in m.candidates[:3])]
                for i, (m, track) in enumerate(zip(matches, data["tracks"]))]
        text = video_summary(data) + " " + pooled_sentence(data)
        if not admin:
            text += " Only matching names are shown without the admin password."
        names = [person.name for person in gallery.people()[:MAX_NAMES]] if admin else []
        answered = {annotated: None, table: rows,
                    faces: face_tiles([(encode_crop(t.track.best_crop) if t.track.best_crop is not None else None,
                                        label) for t, label in zip(answer.tracks, labels)]),
                    status: markdown_text(text) + unchecked,
                    seen: [[t.match.sighting_id, t.track.pooled, t.match.name, t.track.best_face, t.track.best_crop]
                           for t in answer.tracks] if admin else None,
                    track_choice: gr.update(choices=labels if admin else [],
                                            value=labels[0] if admin and labels else None),
                    name_choice: gr.update(choices=names, value=None)}
        yield {**answered, status: markdown_text(text) + unchecked + " " + DRAWING}
        drawn = annotated_copy(path, answer, labels, limits, stepper(progress, "Drawing the answer on the video"))
        yield {**answered, annotated: drawn}

    def preview(path):
        """A note under the button when the browser cannot preview the upload (its player shows an error of its
        own: MPEG-4 Part 2, which OpenCV's writer puts into MP4, or any AVI); one the reader refuses is said
        by Identify video."""
        try:
            info = services.video.probe(path)
        except FaceRecError:
            return ""
        return preview_note(info.container, info.codec)

    def annotated_copy(path, answer: VideoAnswer, labels: list[str], limits, progress: Callable[[int, int], None]
                       ) -> str:
        """The video with each track's box and label, in a folder of the web cache deleted with its other files."""
        folder = Path(tempfile.mkdtemp(prefix="video-", dir=context.web_cache))
        delete_later(folder, CACHE_MAX_AGE_S)
        return str(services.video.annotate(path, answer, labels, folder / "identified.webm", limits, progress))

    def chosen(track, tracks_seen, password, request) -> tuple[int, list]:
        context.require_admin(password, request)
        if not tracks_seen or not track:
            raise InvalidArgument("identify a video first (with the admin password), then pick one of its tracks")
        index = int(str(track).split()[0].lstrip("#"))
        return index, tracks_seen[index]

    def learner() -> str:
        return "admin password" if context.password_needed else "the page (no admin password set)"

    def confirm_track(track, tracks_seen, password="", request: gr.Request = None):
        index, (sighting_id, pooled, name, face, crop) = chosen(track, tracks_seen, password, request)
        if sighting_id is None and name is None:
            raise InvalidArgument(f"track #{index} was not named, so there is nothing to confirm: pick who it is "
                                  "and press Correct")
        info = (services.feedback.confirm(sighting_id, learn_by=learner()) if sighting_id is not None
                else services.feedback.label(pooled, name, confirmed=True, face=face, crop=crop, learn_by=learner()))
        tracks_seen[index][0] = info.id
        return {seen: tracks_seen, feedback: f"Confirmed track #{index} as **{markdown_text(info.name)}**."
                                             + learning_sentence(info.learning)}

    def correct_track(track, name, tracks_seen, password="", request: gr.Request = None):
        index, (sighting_id, pooled, _name, face, crop) = chosen(track, tracks_seen, password, request)
        if not name:
            raise InvalidArgument("pick who the track's face really is, then press Correct")
        info = (services.feedback.correct(sighting_id, name, learn_by=learner()) if sighting_id is not None
                else services.feedback.label(pooled, name, face=face, crop=crop, learn_by=learner()))
        tracks_seen[index][0] = info.id
        return {seen: tracks_seen, feedback: f"Track #{index} is **{markdown_text(info.name)}**; kept as a sighting."
                                             + undo_sentence(info.undone) + learning_sentence(info.learning)}

    def reject_track(track, tracks_seen, password="", request: gr.Request = None):
        index, (sighting_id, *_track) = chosen(track, tracks_seen, password, request)
        if sighting_id is None:
            raise InvalidArgument(f"track #{index} was not kept as a sighting: nothing to forget")
        info = services.feedback.reject(sighting_id)
        tracks_seen[index][0] = None
        return {seen: tracks_seen, feedback: f"Track #{index} is not {markdown_text(info.name)}: forgotten."
                                             + undo_sentence(info.undone)}

    def not_this_track(track, tracks_seen, password="", request: gr.Request = None):
        index, (sighting_id, pooled, name, _face, crop) = chosen(track, tracks_seen, password, request)
        if sighting_id is not None:
            info = services.feedback.not_this_person(sighting_id, learner())
            name, negative = info.name, info.negative_id
        elif name is not None:
            negative = services.feedback.not_this_face(pooled, name, learner(), crop=crop)
        else:
            raise InvalidArgument(f"track #{index} was not named: there is nobody it is not")
        tracks_seen[index][0] = None
        return {seen: tracks_seen, feedback: not_this_sentence(f"Track #{index}", markdown_text(name), negative)}

    # Named apart from the photo's functions: Gradio names a page event after its function, and the photo's
    # `identify` (registered after this) must keep its API name.
    expose([button.click], identify_video, [video, pinned, top_k, password, fpir], [annotated, table, faces, status],
           status, also_clear=[seen, feedback], extra_outputs=[track_choice, name_choice],
           # More at once than the room has places, so that a video past them is refused at once rather than queued
           concurrency_limit=PLACES + 4)
    video.upload(preview, [video], [status], api_visibility="private")
    events = [expose([confirm_button.click], confirm_track, [track_choice, seen, password], [], feedback,
                     extra_outputs=[seen], ok=learned),
              expose([correct_button.click], correct_track, [track_choice, name_choice, seen, password], [], feedback,
                     extra_outputs=[seen], ok=learned),
              expose([reject_button.click], reject_track, [track_choice, seen, password], [], feedback,
                     extra_outputs=[seen], ok=learned),
              expose([not_button.click], not_this_track, [track_choice, seen, password], [], feedback,
                     extra_outputs=[seen], ok=learned)]
    for event in events:  # each may learn or undo a template: the Gallery tab follows
        context.changes_people(event, learned)
