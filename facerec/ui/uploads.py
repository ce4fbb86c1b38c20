"""Files the web server receives and serves: photo uploads, and how long anything stays in Gradio's cache.

Files the web server holds (uploads, pictures it shows, exports) live in Gradio's cache: an uploaded photo is
deleted as soon as it has been answered (identified, compared) or its face stored; exports after
`EXPORT_LIFETIME_S`, everything else (an upload never asked about, the pictures the app showed) after
`CACHE_MAX_AGE_S`, and deleting a person empties the cache at once. Thumbnails of enrolled faces never become
files: they are sent inside the page (`facerec.ui.views`).

So that a user can ask again about the photo they see (another stranger-match rate, another face), a tab keeps
the photo it answered about in memory: its page's session holds a `KeptPhoto` (in a `gr.State` that lives at
most `CACHE_MAX_AGE_S`), the decoded photo is in the app's `KeptPhotos`, bounded in bytes for all pages
together; never on disk, never reachable by another page or an address.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from facerec.errors import InvalidArgument, InvalidImage
from facerec.faces.image import check_photo_file
from facerec.faces.pipeline import Photo
from facerec.ui.kept_photos import KeptPhoto

log = logging.getLogger("facerec.ui")
CACHE_MAX_AGE_S = 600  # uploads and the pictures the app showed leave the server after 10 minutes
EXPORT_LIFETIME_S = 120  # an export's download link works for 2 minutes
NOT_A_PHOTO = "this file is not an image facerec can read; upload a JPEG, PNG, WebP or BMP photo"
GONE = ("the uploaded photo is no longer on the server (a photo is deleted once it has been answered or its face "
        "stored, and uploads expire); upload it again")
FORGOTTEN = ("the server no longer keeps this photo (it keeps the latest photos of every page for a while, within a "
             "memory limit); upload it again")


@dataclass(frozen=True)
class Unreadable:
    """What a `PhotoInput` hands its action instead of a path when the upload cannot be opened: the reason, so
    the action reports it where its other errors go (`uploaded_photo` raises it), and the uploaded file, so the
    action deletes it once answered (`forget_upload`)."""

    message: str
    upload: str = ""


@dataclass(frozen=True)
class Gone(Unreadable):
    """An upload whose file is no longer in the web cache (answered, stored or expired): the page may still hold
    the photo in memory (`AnsweredPhoto`)."""


@dataclass(frozen=True)
class AnsweredPhoto:
    """The photo a tab answers about, decoded, with the upload it came from (whose file is deleted): held for the
    request; what the page keeps afterwards is a `KeptPhoto`."""

    upload: str
    photo: Photo


class PhotoInput(gr.Image):
    """A photo upload that Gradio never decodes: the callback gets the uploaded file's path, after a look at its
    header alone (`facerec.faces.image.check_photo_file`: only JPEG, PNG, WebP and BMP, within the pixel limit), and an
    upload that is no such photo ends as a readable message (`Unreadable`) instead of a bare 'Error'.

    Why not Gradio's own preprocessing: it opens every upload with every format Pillow knows (EPS starts
    Ghostscript) and prints Pillow's warnings for each oversized photo; facerec decodes the photo once, in its own
    loader, when the action runs."""

    is_template = True  # rendered by gr.Image's frontend
    max_bytes = 15 << 20  # set by `photo_input`

    def preprocess(self, payload):
        if payload is None:
            return None
        if getattr(payload, "url", None) and str(payload.url).startswith("data:"):
            return Unreadable("send the photo as an uploaded file")
        path = getattr(payload, "path", None)
        if not path:
            return Unreadable("upload a photo first")
        path = str(path)
        name = Path(getattr(payload, "orig_name", None) or path).name
        try:
            if os.path.getsize(path) > self.max_bytes:
                return Unreadable(f"{name} is {os.path.getsize(path) / (1 << 20):.1f} MB, over the limit of "
                                  f"{self.max_bytes / (1 << 20):g} MB for a photo", path)
            check_photo_file(path, name)
        except FileNotFoundError:
            return Gone(GONE, path)
        except InvalidImage as error:
            log.info("unreadable upload: %s", error)
            return Unreadable(str(error), path)
        except OSError:
            return Unreadable(NOT_A_PHOTO, path)
        return path


def photo_input(label: str, max_bytes: int, **options) -> PhotoInput:
    """A photo upload of at most `max_bytes` (`Settings.max_upload_bytes`): the web server takes bigger files (an
    exported gallery to import), so a photo's own limit is said by the action, under its button. (Gradio
    describes a component to the page by its constructor's parameters, so `PhotoInput` keeps gr.Image's.)"""
    upload = PhotoInput(image_mode=None, type="filepath", label=label, **options)
    upload.max_bytes = max_bytes
    return upload


def uploaded_photo(value, missing: str = "upload a photo first") -> str:
    """The path of an uploaded photo, or the reason there is none (InvalidArgument when nothing was uploaded,
    InvalidImage when the upload could not be opened)."""
    if isinstance(value, Unreadable):
        raise InvalidImage(value.message)
    if not value:
        raise InvalidArgument(missing)
    return value


def photo_to_answer(value, kept: KeptPhoto | None, read, missing: str = "upload a photo first") -> AnsweredPhoto:
    """The photo to answer about, with the upload it came from (to delete once answered; the page keeps it with
    `KeptPhotos.keep`): the upload read once with `read`, or the photo behind `kept` when that same upload's file
    was already deleted after an earlier answer (`FORGOTTEN` once the store let it go). A file deleted meanwhile
    (answered by another action first) is `GONE`, in one line."""
    if isinstance(value, Gone) and kept is not None and kept.upload == value.upload:
        return _still_kept(kept)
    path = uploaded_photo(value, missing)
    if not Path(path).exists():  # deleted since the page sent it: never "no such file: <a server path>"
        if kept is not None and kept.upload == path:
            return _still_kept(kept)
        raise InvalidImage(GONE)
    try:
        return AnsweredPhoto(path, read(path))
    except FileNotFoundError:
        raise InvalidImage(GONE) from None


def _still_kept(kept: KeptPhoto) -> AnsweredPhoto:
    photo = kept.photo
    if photo is None:
        raise InvalidImage(FORGOTTEN)
    return AnsweredPhoto(kept.upload, photo)


def received_photo(value, read, web_cache: Path) -> AnsweredPhoto | None:
    """A photo as it arrives (Enroll, Verify and Add photo look at it at once): read once with `read` for the page
    to keep (`KeptPhotos.keep`), and its file deleted whatever the outcome (None for no upload; InvalidImage for an
    unusable one)."""
    try:
        return photo_to_answer(value, None, read) if value else None
    finally:
        forget_upload(value, web_cache)


def forget_upload(path: str | Unreadable | None, web_cache: Path) -> None:
    """Delete an uploaded photo from the web cache once it has been answered (or refused: not an image, no face,
    a wrong password) or its face stored: the server keeps no copy of it. Takes what a `PhotoInput` gave."""
    if isinstance(path, Unreadable):
        path = path.upload
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


def empty_web_cache(app: gr.Blocks, web_cache: Path) -> None:
    """Delete every file the app has received or served (Gradio's own clean-up, run now rather than on its
    schedule), and every export. Pages still open keep what they show; a photo uploaded but not yet used must
    be uploaded again."""
    from gradio.route_utils import delete_files_created_by_app

    delete_files_created_by_app(app, None)
    for folder in web_cache.glob("export-*"):
        shutil.rmtree(folder, ignore_errors=True)


def delete_later(folder: Path, seconds: float) -> None:
    timer = threading.Timer(seconds, shutil.rmtree, (folder,), {"ignore_errors": True})
    timer.daemon = True
    timer.start()


def forget_served_files(app: gr.Blocks) -> None:
    """What deleting a person in the UI does to the web cache, for a delete made elsewhere (the REST API)."""
    from gradio.utils import get_upload_folder

    empty_web_cache(app, Path(get_upload_folder()))
