"""The Gradio app: Enroll, Identify, Verify, Gallery and Health tabs over one shared `Gallery`.

Callbacks only translate between widgets and the Gallery API; no face logic lives here. Every failure reaches
the page as a readable message (`gr.Error`), never a traceback; the traceback goes to the server log.
Every action has an `api_name`, so `gradio_client` can call it.

With an admin password (`facerec.admin`), everything that shows or returns enrolled faces, names or embeddings
needs it: enrol, add photo, rename, delete, import, export, the people list and the health report. Detect and
verify (which see only the uploaded photos) stay open, and so does identify, which without the password names
only faces that match at or above the gallery's threshold and shows nothing about anyone else.

Names are shown as text, never as markup: escaped for Markdown and HTML wherever they reach the page (status
lines, error toasts). Files the web server holds (uploads, pictures it shows, exports) live in Gradio's cache:
an enrolled photo is deleted as soon as its face is stored, exports after `EXPORT_LIFETIME_S`, everything else
after `CACHE_MAX_AGE_S`, and deleting a person empties the cache at once.
"""

from __future__ import annotations

import functools
import html
import logging
import re
import shutil
import tempfile
import threading
from pathlib import Path

import gradio as gr
import numpy as np

from .admin import AdminGuard
from .choice import largest_face_index
from .drawing import KNOWN, UNKNOWN, annotate, side_by_side, similarity_histogram
from .errors import FaceRecError, PossibleDuplicate
from .gallery import Gallery

log = logging.getLogger("facerec.ui")
MAX_UPLOAD = "15mb"
CACHE_MAX_AGE_S = 600  # uploads and the pictures the app showed leave the server after 10 minutes
EXPORT_LIFETIME_S = 120  # an export's download link works for 2 minutes
# Characters Markdown (or the HTML it may hold) could read as markup, escaped by `markdown_text`.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\](){}!|~$:#])")


def markdown_text(text: object) -> str:
    """`text` (a name, a path) for a Markdown component, shown literally: never a link, an image, an element or
    emphasis (a name like `![x](http://host/beacon.png)` would otherwise make every viewer's browser fetch it)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def _error(message: str) -> gr.Error:
    """A message for the page's error toast, which renders HTML: shown as text."""
    return gr.Error(html.escape(message, quote=False), print_exception=False)


def _friendly(function):
    """FaceRecError -> its message in the page; anything else -> a generic message (traceback logged)."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except gr.Error:
            raise
        except FaceRecError as error:
            raise _error(str(error)) from None
        except Exception as error:  # noqa: BLE001 - the page must never show a traceback
            log.exception("unexpected error in %s", function.__name__)
            raise gr.Error(f"Something went wrong ({type(error).__name__}); the server log has details.",
                           print_exception=False) from None

    return wrapper


class PhotoInput(gr.Image):
    """A photo upload whose unreadable files end as a readable message: Gradio opens every upload with PIL before
    any callback runs, so a non-image would otherwise fail outside `_friendly` and show only a bare 'Error'.
    Always made with `image_mode=None`: no mode conversion, so the callback gets the upload itself
    (facerec decodes any mode) and Gradio makes no second copy of the photo that would outlive `_forget_upload`."""

    is_template = True  # rendered by gr.Image's frontend

    def preprocess(self, payload):
        try:
            return super().preprocess(payload)
        except gr.Error:
            raise
        except FileNotFoundError:
            raise gr.Error("The uploaded photo is no longer on the server (uploads expire); upload it again.",
                           print_exception=False) from None
        except Exception as error:  # noqa: BLE001 - UnidentifiedImageError, OSError, DecompressionBombError...
            log.info("unreadable upload: %s", error)
            raise gr.Error("This file is not an image facerec can read; upload a JPEG, PNG, WebP or BMP photo.",
                           print_exception=False) from None


def far_for_threshold(card: dict, threshold: float) -> str:
    """Plain-language false-accept rate for a threshold, interpolated from the model card's calibration curve."""
    curve = card.get("far_curve") or []
    if not curve:
        return "no calibration curve in the model card"
    thresholds = np.array([c[0] for c in curve])
    fars = np.array([c[1] for c in curve])
    order = np.argsort(thresholds)
    far = float(np.exp(np.interp(threshold, thresholds[order], np.log(np.maximum(fars[order], 1e-9)))))
    return f"about {far:.1e} false accepts per impostor comparison (held-out calibration)"


def build_app(gallery: Gallery, admin_password: str | None = None) -> gr.Blocks:
    card = gallery.settings.model_card()
    default_threshold = gallery.threshold
    guard = AdminGuard(admin_password)

    def require_admin(password: str | None, request: gr.Request | None) -> None:
        guard.check(password, _client(request))

    # ----- callbacks (thin: Gallery API in, widgets out) ------------------------------------------------
    @_friendly
    def detect_faces(photo):
        if not photo:
            return None, gr.update(choices=[], value=None), "Upload a photo to see the faces found in it."
        decoded, faces = gallery.detect(photo)
        if not faces:
            return decoded.pixels, gr.update(choices=[], value=None), "No face found in this photo."
        choices = [f"face #{i}" for i in range(len(faces))]
        largest = largest_face_index(faces)
        note = (f"{len(faces)} faces found; face #{largest} (the largest) is selected — pick another if needed."
                if len(faces) > 1 else "One face found.")
        return annotate(decoded.pixels, faces, landmarks=True), gr.update(choices=choices,
                                                                           value=choices[largest]), note

    @_friendly
    def enroll(photo, name, face_choice, allow_lookalike, note, password, request: gr.Request):
        require_admin(password, request)
        if not photo:
            raise gr.Error("Upload a photo first.", print_exception=False)
        try:
            face_index = int(str(face_choice).rsplit("#", 1)[-1]) if face_choice else None
        except ValueError:
            raise gr.Error("Face to enrol must look like 'face #0'.", print_exception=False) from None
        try:
            result = gallery.enroll(photo, name, face_index=face_index, allow_lookalike=bool(allow_lookalike),
                                    note=note or None)
        except PossibleDuplicate as warning:
            raise _error(f"Not saved: {warning} Tick 'enroll anyway' if you are sure.") from None
        _forget_upload(photo, web_cache)
        people = gallery.store.counts()[0]
        message = (f"Enrolled **{markdown_text(result.name)}** ({result.photos} photo). The gallery now has {people} "
                   f"{'person' if people == 1 else 'people'}.")
        if result.lookalikes:
            message += " Looks like: " + ", ".join(f"{markdown_text(n)} ({s:.2f})" for n, s in result.lookalikes)
        return result.crop, message, result.to_dict()

    @_friendly
    def identify(photo, threshold, top_k, password, request: gr.Request):
        if not photo:
            raise gr.Error("Upload a photo first.", print_exception=False)
        admin = guard.is_admin(password, _client(request))
        # Without the password: no threshold below the gallery's, and nothing about faces that do not match.
        threshold = float(threshold) if admin else max(float(threshold), default_threshold)
        decoded = gallery.read(photo)
        matches = gallery.identify(decoded, top_k=int(top_k), threshold=threshold)
        if not admin:
            matches = [match.redacted() for match in matches]
        labels = [f"{m.label} {m.similarity:.2f}" if m.similarity is not None else m.label for m in matches]
        colours = [KNOWN if m.name else UNKNOWN for m in matches]
        picture = annotate(decoded.pixels, [m.face for m in matches], labels, colours)
        rows = [[i, m.label, None if m.similarity is None else round(m.similarity, 3),
                 *[f"{c.name} ({c.similarity:.2f})" for c in m.candidates[:3]],
                 *[""] * (3 - len(m.candidates[:3]))] for i, m in enumerate(matches)]
        summary = (f"{len(matches)} face(s): " + ", ".join(markdown_text(m.label) for m in matches)
                   + f". Threshold {float(threshold):.3f} — {far_for_threshold(card, float(threshold))}.")
        if not admin:
            summary += " Only matching names are shown without the admin password."
        return picture, rows, summary, [m.to_dict() for m in matches]

    @_friendly
    def verify(photo_a, photo_b, threshold):
        if not photo_a or not photo_b:
            raise gr.Error("Upload two photos.", print_exception=False)
        result = gallery.verify(photo_a, photo_b, threshold=float(threshold))
        verdict = "Same person" if result.same_person else "Different people"
        return (f"**{verdict}** — similarity {result.similarity:.3f} (threshold {result.threshold:.3f}).",
                result.to_dict())

    @_friendly
    def list_people(query, password, request: gr.Request):
        require_admin(password, request)
        people = gallery.list(query or None)
        rows = [[p.id, p.name, p.photos, p.created_at.strftime("%Y-%m-%d %H:%M")] for p in people]
        thumbnails = []
        for person in people[:60]:
            crop = gallery.face_crop(person.face_ids[0]) if person.face_ids else None
            if crop:
                thumbnails.append((_jpeg_to_array(crop), f"{person.name} ({person.photos})"))
        return rows, thumbnails, [p.to_dict() for p in people]

    @_friendly
    def rename(name, new_name, password, request: gr.Request):
        require_admin(password, request)
        info = gallery.rename(name, new_name)
        return f"Renamed to **{markdown_text(info.name)}**.", info.to_dict()

    @_friendly
    def delete(name, confirmed, password, request: gr.Request):
        require_admin(password, request)
        if not confirmed:
            raise gr.Error("Tick 'yes, delete' to confirm.", print_exception=False)
        info = gallery.delete(name)
        _empty_web_cache(app, web_cache)  # nothing of theirs stays downloadable: uploads, thumbnails, exports
        return f"Deleted **{markdown_text(info.name)}** and {info.photos} photo(s).", info.to_dict()

    @_friendly
    def add_photo(name, photo, password, allow_mismatch, request: gr.Request):
        require_admin(password, request)
        if not photo:
            raise gr.Error("Upload a photo first.", print_exception=False)
        result = gallery.add_photo(name, photo, allow_mismatch=bool(allow_mismatch))
        _forget_upload(photo, web_cache)
        return f"Added a photo to **{markdown_text(result.name)}** ({result.photos} photos).", result.to_dict()

    @_friendly
    def export_gallery(include_crops, password, request: gr.Request):
        require_admin(password, request)
        # Written straight into the web cache (one copy, in a private folder with an unguessable name), and
        # deleted once its link has had time to be used.
        web_cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = Path(tempfile.mkdtemp(prefix="export-", dir=web_cache))
        path = folder / "facerec-gallery.zip"
        count = gallery.export(path, include_crops=bool(include_crops))
        _delete_later(folder, EXPORT_LIFETIME_S)
        return str(path), (f"Exported {count} face(s). The download link works for "
                           f"{EXPORT_LIFETIME_S // 60} minutes.")

    @_friendly
    def import_gallery(upload, password, request: gr.Request):
        require_admin(password, request)
        if not upload:
            raise gr.Error("Choose an exported .zip file.", print_exception=False)
        counts = gallery.import_(upload)
        return f"Imported {counts['added']} face(s); {counts['skipped']} already present.", counts

    @_friendly
    def health(password, request: gr.Request):
        require_admin(password, request)
        report = gallery.health()
        data = report.to_dict()
        people = "person" if report.identities == 1 else "people"
        faces = "face" if report.faces == 1 else "faces"
        lines = [f"**{report.identities} {people}, {report.faces} {faces}**, match threshold {report.threshold:.3f}.",
                 "", "| metric | value | what it means |", "|---|---|---|"]
        cipa = data["closest_is_positive_accuracy"]
        lines.append(f"| ClosestIsPositiveAccuracy | {'undefined' if cipa is None else f'{cipa:.3f}'} | "
                     f"{report.readings['closest_is_positive_accuracy']} |")
        for key, value in data["median_distances"].items():
            lines.append(f"| {key} | {'undefined' if value is None else f'{value:.3f}'} | {report.readings[key]} |")
        lines += [f"_{n}_" for n in report.notes]
        if report.suspected_duplicates:
            lines += ["", "**Suspected duplicates** (above the match threshold): " + "; ".join(
                f"{markdown_text(p['a'])} ~ {markdown_text(p['b'])} ({p['similarity']:.2f})"
                for p in report.suspected_duplicates[:20])]
        else:
            lines += ["", "No suspected duplicates: no two people match each other above the threshold."]
        pairs = []
        for pair in report.confusable_pairs:
            left, right = (gallery.get(pair["a_id"]), gallery.get(pair["b_id"]))
            pairs.append((side_by_side(gallery.face_crop(left.face_ids[0]), gallery.face_crop(right.face_ids[0])),
                          f"{pair['a']} ~ {pair['b']}: {pair['similarity']:.2f}"))
        figure = similarity_histogram(report.nearest_other_similarities, report.threshold,
                                      "How close is each person to their nearest other person?")
        return "\n".join(lines), figure, pairs, data

    # ----- layout ---------------------------------------------------------------------------------------
    with gr.Blocks(title="facerec", delete_cache=(60, CACHE_MAX_AGE_S)) as app:
        where = "" if admin_password else f"; gallery {markdown_text(gallery.settings.home)}"  # no server paths
        gr.Markdown(f"# facerec\nEnrol a person from one photo, then find them in any photo. Model "
                    f"{markdown_text(gallery.model_id)}{where}.")
        warning = gallery.model_warning()
        if warning:
            gr.Markdown(f"**Warning:** {markdown_text(warning)}")
        with gr.Tab("Enroll"):
            with gr.Row():
                enroll_photo = PhotoInput(image_mode=None, type="filepath", label="Photo (upload or webcam)",
                                        sources=["upload", "webcam", "clipboard"])
                enroll_faces = gr.Image(type="numpy", label="Faces found", interactive=False)
                enroll_crop = gr.Image(type="numpy", label="Aligned face (what is stored)", interactive=False)
            enroll_name = gr.Textbox(label="Name")
            with gr.Row():
                face_choice = gr.Dropdown(label="Face to enrol", choices=[], value=None, allow_custom_value=True)
                allow_lookalike = gr.Checkbox(label="Enroll anyway if the face matches someone already enrolled")
            enroll_note = gr.Textbox(label="Note (optional)")
            enroll_password = gr.Textbox(label="Admin password", type="password", value="",
                                         visible=bool(admin_password))
            enroll_button = gr.Button("Enroll", variant="primary")
            enroll_status = gr.Markdown(elem_id="enroll-status")
            with gr.Accordion("Details (JSON)", open=False):
                enroll_json = gr.JSON()
            detect_status = gr.Markdown()
            enroll_photo.change(detect_faces, [enroll_photo], [enroll_faces, face_choice, detect_status],
                                api_name="detect")
            enroll_button.click(enroll, [enroll_photo, enroll_name, face_choice, allow_lookalike, enroll_note,
                                         enroll_password], [enroll_crop, enroll_status, enroll_json],
                                api_name="enroll")
        with gr.Tab("Identify"):
            with gr.Row():
                identify_photo = PhotoInput(image_mode=None, type="filepath", label="Photo",
                                            sources=["upload", "webcam", "clipboard"])
                identify_result = gr.Image(type="numpy", label="Who is who", interactive=False)
            with gr.Row():
                threshold = gr.Slider(0.0, 1.0, value=round(default_threshold, 3), step=0.005,
                                      label="Match threshold (cosine similarity)")
                top_k = gr.Slider(1, 10, value=3, step=1, label="Candidates per face")
            threshold_note = gr.Markdown(f"Default {default_threshold:.3f}: "
                                         f"{far_for_threshold(card, default_threshold)}.")
            identify_password = gr.Textbox(label="Admin password (optional: shows every candidate)",
                                           type="password", value="", visible=bool(admin_password))
            identify_button = gr.Button("Identify", variant="primary")
            identify_status = gr.Markdown(elem_id="identify-status")
            identify_table = gr.Dataframe(headers=["face", "name", "similarity", "candidate 1", "candidate 2",
                                                   "candidate 3"], label="Top candidates per face",
                                          interactive=False)
            with gr.Accordion("Details (JSON)", open=False):
                identify_json = gr.JSON()
            threshold.change(lambda t: f"Threshold {t:.3f}: {far_for_threshold(card, float(t))}.", [threshold],
                             [threshold_note], api_visibility="private")
            identify_button.click(identify, [identify_photo, threshold, top_k, identify_password],
                                  [identify_result, identify_table, identify_status, identify_json],
                                  api_name="identify")
        with gr.Tab("Verify"):
            with gr.Row():
                verify_a = PhotoInput(image_mode=None, type="filepath", label="First photo")
                verify_b = PhotoInput(image_mode=None, type="filepath", label="Second photo")
            verify_threshold = gr.Slider(0.0, 1.0, value=round(default_threshold, 3), step=0.005,
                                         label="Match threshold (cosine similarity)")
            verify_button = gr.Button("Compare", variant="primary")
            verify_status = gr.Markdown(elem_id="verify-status")
            verify_json = gr.JSON(visible=False)
            verify_button.click(verify, [verify_a, verify_b, verify_threshold], [verify_status, verify_json],
                                api_name="verify")
        with gr.Tab("Gallery"):
            with gr.Row():
                search = gr.Textbox(label="Search by name")
                refresh = gr.Button("Refresh")
            people_table = gr.Dataframe(headers=["id", "name", "photos", "enrolled"], label="People",
                                        interactive=False)
            thumbnails = gr.Gallery(label="Faces", columns=8, height="auto")
            people_json = gr.JSON(visible=False)
            manage_password = gr.Textbox(label="Admin password", type="password", value="",
                                         visible=bool(admin_password))
            with gr.Accordion("Rename", open=False):
                rename_from, rename_to = gr.Textbox(label="Current name"), gr.Textbox(label="New name")
                rename_button = gr.Button("Rename")
            with gr.Accordion("Delete", open=False):
                delete_name = gr.Textbox(label="Name")
                delete_confirm = gr.Checkbox(label="Yes, delete this person and all their photos")
                delete_button = gr.Button("Delete", variant="stop")
            with gr.Accordion("Add a photo to a person", open=False):
                add_name = gr.Textbox(label="Name")
                add_image = PhotoInput(image_mode=None, type="filepath", label="Photo")
                add_anyway = gr.Checkbox(label="Add anyway if the face does not match this person")
                add_button = gr.Button("Add photo")
            with gr.Accordion("Export / import", open=False):
                export_crops = gr.Checkbox(value=True, label="Include face crops")
                export_button = gr.Button("Export")
                export_file = gr.File(label="Exported gallery")
                import_file = gr.File(label="Gallery file to import", file_types=[".zip"], type="filepath")
                import_button = gr.Button("Import")
            manage_status = gr.Markdown(elem_id="manage-status")
            manage_json = gr.JSON(visible=False)
            list_outputs = [people_table, thumbnails, people_json]
            refresh.click(list_people, [search, manage_password], list_outputs, api_name="list")
            search.submit(list_people, [search, manage_password], list_outputs, api_visibility="private")
            rename_button.click(rename, [rename_from, rename_to, manage_password], [manage_status, manage_json],
                                api_name="rename")
            delete_button.click(delete, [delete_name, delete_confirm, manage_password],
                                [manage_status, manage_json], api_name="delete")
            add_button.click(add_photo, [add_name, add_image, manage_password, add_anyway],
                             [manage_status, manage_json], api_name="add_photo")
            export_button.click(export_gallery, [export_crops, manage_password], [export_file, manage_status],
                                api_name="export")
            import_button.click(import_gallery, [import_file, manage_password], [manage_status, manage_json],
                                api_name="import")
        with gr.Tab("Health"):
            health_password = gr.Textbox(label="Admin password", type="password", value="",
                                         visible=bool(admin_password))
            health_button = gr.Button("Check gallery health", variant="primary")
            health_text = gr.Markdown(elem_id="health-report")
            health_plot = gr.Plot(label="Nearest other person")
            confusable = gr.Gallery(label="Most confusable pairs", columns=4, height="auto")
            health_json = gr.JSON(visible=False)
            health_button.click(health, [health_password], [health_text, health_plot, confusable, health_json],
                                api_name="health")
        web_cache = Path(enroll_photo.GRADIO_CACHE)  # where Gradio keeps uploads and what it serves
    return app


def _client(request: gr.Request | None) -> str:
    """The caller's network address: what the admin guard counts wrong passwords by."""
    client = getattr(request, "client", None)
    return str(getattr(client, "host", None) or "unknown")


def _forget_upload(path: str | None, web_cache: Path) -> None:
    """Delete an uploaded photo from the web cache once its face is stored: the server keeps no copy of it."""
    if not path:
        return
    upload = Path(path).resolve()
    if web_cache.resolve() not in upload.parents:
        return  # not Gradio's copy: never delete a file the app did not receive
    upload.unlink(missing_ok=True)
    try:
        upload.parent.rmdir()  # Gradio's per-upload folder, now empty
    except OSError:
        pass


def _empty_web_cache(app: gr.Blocks, web_cache: Path) -> None:
    """Delete every file the app has received or served (Gradio's own clean-up, run now rather than on its
    schedule), and every export. Pages still open keep what they show; a photo uploaded but not yet used must
    be uploaded again."""
    from gradio.route_utils import delete_files_created_by_app

    delete_files_created_by_app(app, None)
    for folder in web_cache.glob("export-*"):
        shutil.rmtree(folder, ignore_errors=True)


def _delete_later(folder: Path, seconds: float) -> None:
    timer = threading.Timer(seconds, shutil.rmtree, (folder,), {"ignore_errors": True})
    timer.daemon = True
    timer.start()


def _jpeg_to_array(data: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
