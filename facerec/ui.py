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
from .drawing import KNOWN, UNKNOWN, annotate, policy_growth_plot, side_by_side, similarity_histogram
from .errors import FaceRecError, InvalidArgument, InvalidImage, PossibleDuplicate
from .gallery import Gallery
from .image import load_image

log = logging.getLogger("facerec.ui")
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
            raise _error(_unreadable(getattr(payload, "path", None))) from None


def _unreadable(path: str | None) -> str:
    """Why an upload Gradio could not open is no photo, in facerec's own words (`facerec.image`): the message the
    CLI and the REST API give for the same file."""
    try:
        load_image(path) if path else None
    except InvalidImage as error:
        return str(error)
    except Exception:  # noqa: BLE001 - the generic line below says enough
        pass
    return "This file is not an image facerec can read; upload a JPEG, PNG, WebP or BMP photo."


def _pinned(value) -> float | None:
    """The optional pinned-threshold box: empty (None or '') means 'follow the accepted rate'. A text box, not a
    `gr.Number`: the browser sends an empty Number as 0, which would pin the threshold at 0 and name everyone."""
    if value is None or str(value).strip() == "":
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        raise InvalidArgument(f"the pinned threshold must be a cosine similarity such as 0.55, or empty; got "
                              f"'{value}'") from None


def _rate(percent) -> float | None:
    return None if percent is None else float(percent) / 100.0


def build_app(gallery: Gallery, admin_password: str | None = None) -> gr.Blocks:
    default_percent = round(100 * gallery.settings.fpir, 2)
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
    def identify_policy(fpir_percent, pinned):
        """The threshold identify would use now, for this gallery, in plain words."""
        return gallery.threshold_in_force(fpir=_rate(fpir_percent), threshold=_pinned(pinned),
                                          with_people=True).sentence()

    @_friendly
    def verify_policy(fpir_percent, pinned):
        return gallery.verification_threshold(fpir=_rate(fpir_percent), threshold=_pinned(pinned)).sentence()

    @_friendly
    def identify(photo, pinned_threshold, top_k, password, fpir_percent, request: gr.Request):
        # The API keeps its order (photo, threshold, top_k, password): a number there pins the threshold; leave it
        # empty (None) to follow the accepted stranger-match rate, the fifth input (percent).
        if not photo:
            raise gr.Error("Upload a photo first.", print_exception=False)
        admin = guard.is_admin(password, _client(request))
        pinned, fpir = _pinned(pinned_threshold), _rate(fpir_percent)
        # Without the password: no threshold below the one in force for the gallery (a pinned one, or one from a
        # looser accepted rate, falls back to it), and nothing about faces that do not match.
        if not admin and gallery.threshold_in_force(fpir, pinned).threshold < gallery.threshold:
            pinned, fpir = None, None
        decoded = gallery.read(photo)
        matches = gallery.identify(decoded, top_k=int(top_k), threshold=pinned, fpir=fpir)
        if not admin:
            matches = [match.redacted() for match in matches]
        labels = [f"{m.label} {m.similarity:.2f}" if m.similarity is not None else m.label for m in matches]
        colours = [KNOWN if m.name else UNKNOWN for m in matches]
        picture = annotate(decoded.pixels, [m.face for m in matches], labels, colours)
        rows = [[i, m.label, None if m.similarity is None else round(m.similarity, 3),
                 *[f"{c.name} ({c.similarity:.2f})" for c in m.candidates[:3]],
                 *[""] * (3 - len(m.candidates[:3]))] for i, m in enumerate(matches)]
        summary = (f"{len(matches)} face(s): " + ", ".join(markdown_text(m.label) for m in matches)
                   + f". {matches[0].rule.sentence()}")
        if not admin:
            summary += " Only matching names are shown without the admin password."
        return picture, rows, summary, [m.to_dict() for m in matches]

    @_friendly
    def verify(photo_a, photo_b, pinned_threshold, fpir_percent=None):
        if not photo_a or not photo_b:
            raise gr.Error("Upload two photos.", print_exception=False)
        result = gallery.verify(photo_a, photo_b, threshold=_pinned(pinned_threshold), fpir=_rate(fpir_percent))
        verdict = "Same person" if result.same_person else "Different people"
        return (f"**{verdict}** — similarity {result.similarity:.3f} (threshold {result.threshold:.3f}). "
                f"{result.rule.sentence()}", result.to_dict())

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

    @_friendly
    def policy_growth(password, request: gr.Request):
        """How the threshold policy behaves as this gallery grows (the Health view's second plot)."""
        require_admin(password, request)
        rule = gallery.threshold_in_force(with_people=True)
        rows = gallery.policy.growth()
        shown = [r for r in rows if r.comparisons in (1, 10, 100, 1000, 10_000, 100_000, 1_000_000)]
        lines = ["**The threshold as the gallery grows.** A stranger is compared with every enrolled face, so the "
                 "more faces, the more chances of a wrong match: to keep the stranger-match rate at the accepted "
                 "level, the threshold rises with the gallery, and a new photo of an enrolled person clears it "
                 "less often.", "", f"Now: {rule.sentence()}", "",
                 "```text", "| enrolled faces | threshold | expected true-match rate |"]
        # A plain-text table (a code block): the same text on the page, in the JSON-free API answer and in a copy.
        lines += [f"| {r.comparisons:,} | {r.threshold:.3f} | "
                  f"{'unknown' if r.true_match_rate is None else f'{r.true_match_rate:.0%}'} |" for r in shown]
        return "\n".join([*lines, "```"]), policy_growth_plot(rows, rule.comparisons)

    # ----- layout ---------------------------------------------------------------------------------------
    with gr.Blocks(title="facerec", delete_cache=(60, CACHE_MAX_AGE_S)) as app:
        where = "" if admin_password else f"; gallery {markdown_text(gallery.settings.home)}"  # no server paths
        gr.Markdown(f"# facerec\nEnrol a person from one photo, then find them in any photo. Model "
                    f"{markdown_text(gallery.model_id)}{where}.")
        for warning in (gallery.model_warning(), gallery.policy.calibration.warning):
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
        with gr.Tab("Identify") as identify_tab:
            with gr.Row():
                identify_photo = PhotoInput(image_mode=None, type="filepath", label="Photo",
                                            sources=["upload", "webcam", "clipboard"])
                identify_result = gr.Image(type="numpy", label="Who is who", interactive=False)
            with gr.Row():
                identify_fpir, identify_pinned = _rate_and_pin(
                    default_percent, "Accepted stranger-match rate (%)",
                    "Of people who are NOT enrolled, the share that may wrongly be given a name. The threshold is "
                    "set from it for this gallery's size.")
                top_k = gr.Slider(1, 10, value=3, step=1, label="Candidates per face")
            threshold_note = gr.Markdown(elem_id="identify-threshold-note")
            identify_password = gr.Textbox(label="Admin password (optional: shows every candidate)",
                                           type="password", value="", visible=bool(admin_password))
            identify_button = gr.Button("Identify", variant="primary")
            identify_status = gr.Markdown(elem_id="identify-status")
            identify_table = gr.Dataframe(headers=["face", "name", "similarity", "candidate 1", "candidate 2",
                                                   "candidate 3"], label="Top candidates per face",
                                          interactive=False)
            with gr.Accordion("Details (JSON)", open=False):
                identify_json = gr.JSON()
            for control in (identify_fpir, identify_pinned):
                control.change(identify_policy, [identify_fpir, identify_pinned], [threshold_note],
                               api_visibility="private")
            identify_tab.select(identify_policy, [identify_fpir, identify_pinned], [threshold_note],
                                api_visibility="private")
            identify_button.click(identify, [identify_photo, identify_pinned, top_k, identify_password, identify_fpir],
                                  [identify_result, identify_table, identify_status, identify_json],
                                  api_name="identify")
        with gr.Tab("Verify"):
            with gr.Row():
                verify_a = PhotoInput(image_mode=None, type="filepath", label="First photo")
                verify_b = PhotoInput(image_mode=None, type="filepath", label="Second photo")
            with gr.Row():
                verify_fpir, verify_pinned = _rate_and_pin(
                    default_percent, "Accepted false-match rate (%)",
                    "Verify compares two photos once, so this is the share of pairs of different people that may "
                    "be called the same person.")
            verify_note = gr.Markdown(elem_id="verify-threshold-note")
            verify_button = gr.Button("Compare", variant="primary")
            verify_status = gr.Markdown(elem_id="verify-status")
            verify_json = gr.JSON(visible=False)
            for control in (verify_fpir, verify_pinned):
                control.change(verify_policy, [verify_fpir, verify_pinned], [verify_note], api_visibility="private")
            verify_button.click(verify, [verify_a, verify_b, verify_pinned, verify_fpir], [verify_status, verify_json],
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
            growth_text = gr.Markdown(elem_id="policy-growth")
            growth_plot = gr.Plot(label="Threshold and expected true-match rate as the gallery grows", format="png")
            health_button.click(health, [health_password], [health_text, health_plot, confusable, health_json],
                                api_name="health").success(policy_growth, [health_password],
                                                           [growth_text, growth_plot], api_visibility="private")
        app.load(identify_policy, [identify_fpir, identify_pinned], [threshold_note], api_visibility="private")
        app.load(verify_policy, [verify_fpir, verify_pinned], [verify_note], api_visibility="private")
        web_cache = Path(enroll_photo.GRADIO_CACHE)  # where Gradio keeps uploads and what it serves
    return app


def _rate_and_pin(percent: float, label: str, info: str) -> tuple[gr.Slider, gr.Textbox]:
    """The threshold controls Identify and Verify share: the accepted rate (%) and an optional pinned cosine."""
    rate = gr.Slider(0.1, 10.0, value=percent, step=0.1, label=label, info=info)
    pinned = gr.Textbox(value="", label="Or pin a similarity threshold (cosine, optional)", placeholder="e.g. 0.55",
                        info="Leave empty to follow the accepted rate.")
    return rate, pinned


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


def forget_served_files(app: gr.Blocks) -> None:
    """What deleting a person in the UI does to the web cache, for a delete made elsewhere (the REST API)."""
    from gradio.utils import get_upload_folder

    _empty_web_cache(app, Path(get_upload_folder()))


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
