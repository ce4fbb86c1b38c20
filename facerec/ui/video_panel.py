"""Identify in a video, on the Identify tab beside the photo: the annotated video (VP9 WebM, which browsers play),
one row per face followed (a track) with its best face, and Confirm / Correct / Nobody enrolled per track.

A track is one sighting (`facerec.gallery.video`), so its rows are the photo's own feedback panel
(`facerec.ui.feedback_panel`), on the track's sighting, or on its pooled embedding with its best aligned face when
it was not kept: either way a confirmation learns the track's face as a photo's. Without the admin password a page user gets what a photo gives them (names only of tracks that match,
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

from facerec.errors import FaceRecError, InvalidArgument
from facerec.formats.archive import encode_crop
from facerec.gallery.video import VideoAnswer
from facerec.words.phrasing import score_text
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.feedback_panel import FeedbackPanel, PanelIds, Seen
from facerec.ui.text import markdown_text
from facerec.ui.threshold_controls import page_rule
from facerec.ui.uploads import CACHE_MAX_AGE_S, delete_later, forget_upload
from facerec.ui.views import FACES_CSS, face_tiles
from facerec.gallery.video import ANONYMOUS_LIMITS, CONTAINERS
from facerec.video.waiting_room import PLACES, WaitingRoom
from facerec.words.feedback import VIDEO_TRACK
from facerec.words.video import pooled_sentence, preview_note, span, video_summary

DRAWING = "Drawing the answer on the video above…"
VIDEO_GONE = ("the uploaded video is no longer on the server (a video is deleted once it has been answered, and "
              "uploads expire); upload it again")
HEADERS = ["track", "name", "score", "on screen", "frames seen", "best candidates"]
VIDEO_IDS = PanelIds(choice="video-feedback-track", name="video-feedback-name", confirm="video-confirm",
                     correct="video-correct", reject="video-reject", not_this="video-not-this-person",
                     status="video-sighting-status")


def stepper(progress: gr.Progress, step: str) -> Callable[[int, int], None]:
    """A `progress(done, total)` callback that shows Gradio's progress bar named after `step`, on every 30th frame
    and the last (each update is a message to the page)."""
    def update(done: int, total: int) -> None:
        if total and (done == total or done % 30 == 0):
            progress(min(done / total, 1.0), desc=f"{step}: frame {done:,} of {total:,}")
    return update


def build(context: AppContext, pinned: gr.Textbox, top_k: gr.Slider, fpir: gr.Number) -> None:
    """The video half of the Identify tab, sharing its threshold controls and candidates slider."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
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
    panel = FeedbackPanel(context, VIDEO_TRACK, VIDEO_IDS)

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
        admin, unchecked = context.gate.admits(password, request)  # locked out: answered as for anyone, said why
        unchecked = f" {unchecked}" if unchecked else ""
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
        answered = {annotated: None, table: rows,
                    faces: face_tiles([(encode_crop(t.track.best_crop) if t.track.best_crop is not None else None,
                                        label) for t, label in zip(answer.tracks, labels)]),
                    status: markdown_text(text) + unchecked,
                    **panel.offer([Seen(t.match.sighting_id, t.track.pooled, t.match.name, t.track.best_face,
                                        t.track.best_crop) for t in answer.tracks] if admin else None, labels)}
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

    # Named apart from the photo's functions: Gradio names a page event after its function, and the photo's
    # `identify` (registered after this) must keep its API name.
    expose([button.click], identify_video, [video, pinned, top_k, context.gate.field, fpir], [annotated, table, faces, status],
           status, also_clear=[panel.seen, panel.status], extra_outputs=panel.outputs,
           # More at once than the room has places, so that a video past them is refused at once rather than queued
           concurrency_limit=PLACES + 4)
    video.upload(preview, [video], [status], api_visibility="private")
