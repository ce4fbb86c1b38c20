"""The routes of `/api/v1`: each turns an HTTP request into Gallery calls (most routes make one)
and their result into JSON.

No face logic lives here. Gallery calls block (ONNX, SQLite), so they run in worker threads, at most
`ApiContext.limiter` at a time (the web UI's queue has its own limit); every failure becomes one JSON line
(`facerec.api.errors`), through `OneLineErrors`, the route class of every route.
"""

from __future__ import annotations

import base64
import functools
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import anyio
from fastapi import APIRouter, File, Form, Path as PathParam, Query, Request, UploadFile
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute
from starlette.background import BackgroundTask

from facerec.access.api_keys import ApiKey
from facerec.errors import UnusableFile
from facerec.gallery import Gallery
from facerec.gallery.suggestions import MAX_PAGE as MAX_SUGGESTIONS_PAGE, PAGE as SUGGESTIONS_PAGE
from facerec.settings import Settings
import facerec.api.schemas as schemas
from facerec.api.auth import ADMIN, READ
from facerec.api.errors import ApiError, error_response
from facerec.api.uploads import read_upload, save_upload, upload_label
from facerec.words.health import health_in_words
from facerec.words.video import video_summary
from facerec.words.threshold import worded

MAX_PAGE = 500


@dataclass
class ApiContext:
    """What the routes share: the app's one Gallery, where imports and exports are written for the length of a
    request (None: the system's temporary folder), and what to do after a person is deleted (the web app empties
    its cache of pictures, as its own delete does)."""

    gallery: Gallery
    scratch: Path | None = None
    after_delete: Callable[[], None] | None = None
    limiter: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(4))
    # One video at a time: a video holds a worker for as long as it plays or more, and photos must not wait for
    # several of them (a video's memory is one frame and its tracks, so one at a time bounds it too).
    videos: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))

    async def run(self, function: Callable, *args, **kwargs):
        """`function(*args, **kwargs)` in a worker thread, within the limiter."""
        return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs), limiter=self.limiter)

    async def photo(self, upload: UploadFile, what: str = "the photo"):
        """An uploaded photo, decoded (a `Photo`), named in messages by its file name as the web app names it."""
        data = await read_upload(upload, self.gallery.services().settings.max_upload_bytes, what)
        return await self.run(self.gallery.services().photos.read, data, upload_label(upload))


class OneLineErrors(APIRoute):
    """A route whose every exception (the Gallery's, the key check's, a malformed field, a bug) is answered as one
    JSON line with its status, never a traceback."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def answer(request: Request):
            try:
                return await handler(request)
            except Exception as error:  # noqa: BLE001 - every failure becomes one line (errors.error_response)
                return error_response(error)

        return answer


def _errors(*statuses: int) -> dict:
    return {status: {"model": schemas.Error} for status in statuses}


# Ids and offsets are 64-bit in the database: a larger number is a malformed request (422), not an OverflowError.
MAX_ID = 2**63 - 1
PersonId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the person's id (from enrollment or the people "
                                                                  "list)")]
FaceId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the face's id (from the person's templates)")]
Learn = Annotated[bool, Query(description="learn the face as a template of the person, after the checks of "
                                          "add-photo (at most 10 learned per person)")]
SightingId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the sighting's id (sighting_id of a face "
                                                                    "identify named)")]
SuggestionId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="the suggestion's id (from the suggestions "
                                                                      "list)")]
Photo = Annotated[UploadFile, File(description="a JPEG, PNG, WebP or BMP photo, at most 15 MB and 40 megapixels")]
FaceIndex = Annotated[int | None, Form(ge=0, description="which face, when the photo has several (from 0, as "
                                                           "the multiple_faces error lists them)")]
_VIDEO = Settings()  # the default bounds, as the description states them (an operator's own: SECURITY.md)
Video = Annotated[UploadFile, File(description=f"an MP4, MOV, WebM, MKV or AVI video (H.264, VP8/VP9 or MPEG-4), by "
                                               f"default at most {_VIDEO.video_max_bytes >> 20} MB, "
                                               f"{_VIDEO.video_max_seconds:g} s and {_VIDEO.video_max_frames:,} "
                                               f"frames; frames over {_VIDEO.video_max_side} pixels a side shrink")]
TopK = Annotated[int, Form(ge=1, le=100, description="candidates per face")]
Fpir = Annotated[float | None, Form(gt=0, lt=1, description="accepted stranger-match rate for this call "
                                                            "(0.01 = 1%); default: the app's")]
Threshold = Annotated[float | None, Form(ge=-100, le=100, description="pin the threshold on the normalised score "
                                                                     "for this call instead (e.g. 6; a value between "
                                                                     "-1 and 1 is an old cosine pin: 400)")]


def build_router(context: ApiContext) -> APIRouter:
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    router = APIRouter(route_class=OneLineErrors, responses=_errors(401, 403, 422, 503))

    # ----- people ---------------------------------------------------------------------------------------
    @router.post("/people", status_code=201, response_model=schemas.Enrolled, dependencies=[ADMIN], tags=["people"],
                 summary="Enroll a new person from one photo", responses=_errors(400, 409, 413))
    async def enroll(photo: Photo, name: Annotated[str, Form(description="the person's name")],
                     face_index: FaceIndex = None,
                     allow_lookalike: Annotated[bool, Form(description="enroll even if the face matches someone "
                                                                       "already enrolled")] = False,
                     note: Annotated[str | None, Form()] = None,
                     allow_low_quality: Annotated[bool, Form(description="enroll even if the face is a poor "
                                                                         "enrollment photo")] = False):
        """Refused with 409 when the name is taken, the photo is already enrolled, or the face matches another
        person at the threshold identify uses (a duplicate or look-alike; `matches` says who), unless
        `allow_lookalike`; with 422 `low_quality` when the face is unlikely to be recognised later (`quality`
        says why), unless `allow_low_quality`. The answer carries the face's quality."""
        decoded = await context.photo(photo)
        result = await context.run(gallery.enroll, decoded, name, face_index=face_index,
                                   allow_lookalike=allow_lookalike, note=note or None,
                                   allow_low_quality=allow_low_quality)
        return schemas.Enrolled.of(result)

    @router.post("/quality", response_model=schemas.Quality, dependencies=[ADMIN], tags=["people"],
                 summary="How likely a photo's face is to be recognised later, if enrolled",
                 responses=_errors(400, 413, 500))
    async def quality(photo: Photo, face_index: FaceIndex = None):
        decoded = await context.photo(photo)
        found = await context.run(services.photos.enrollment_quality, decoded, face_index)
        if found is None:
            raise UnusableFile("no enrollment-quality calibration ships next to this model")
        return found.to_dict()

    @router.get("/people", response_model=schemas.PeoplePage, dependencies=[READ], tags=["people"],
                summary="List or search enrolled people, a page at a time")
    async def list_people(search: Annotated[str | None, Query(description="part of the name, any letter case")] = None,
                          offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
                          limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50):
        people, total = await context.run(services.directory.page, search or None, offset, limit)
        return schemas.PeoplePage(people=[schemas.Person.of(p) for p in people], total=total, offset=offset,
                                  limit=limit)

    @router.get("/people/{person_id}", response_model=schemas.Person, dependencies=[READ], tags=["people"],
                summary="One person, with their photo count", responses=_errors(404))
    async def get_person(person_id: PersonId):
        return schemas.Person.of(await context.run(services.directory.get, person_id))

    @router.patch("/people/{person_id}", response_model=schemas.Person, dependencies=[ADMIN], tags=["people"],
                  summary="Rename a person", responses=_errors(400, 404, 409))
    async def rename(person_id: PersonId, change: schemas.Rename):
        return schemas.Person.of(await context.run(gallery.rename, person_id, change.name))

    @router.post("/people/{person_id}/merge", response_model=schemas.Regrouped, dependencies=[ADMIN],
                 tags=["people"], summary="This person and another are one: every face and record of this one "
                                          "becomes theirs, and this one is gone", responses=_errors(400, 404))
    async def merge(person_id: PersonId, merge: schemas.Merge):
        return (await context.run(gallery.merge, person_id, merge.into_person_id, merge.force)).to_dict()

    @router.post("/faces/{face_id}/move", response_model=schemas.Regrouped, dependencies=[ADMIN], tags=["people"],
                 summary="Move one face to another enrolled person, or to a new one", responses=_errors(400, 404, 409))
    async def move_face(face_id: Annotated[int, PathParam(ge=1, le=MAX_ID)], move: schemas.Move):
        return (await context.run(gallery.move_face, face_id, move.person_id, move.new_name, move.force)).to_dict()

    @router.delete("/people/{person_id}", response_model=schemas.Person, dependencies=[ADMIN], tags=["people"],
                   summary="Delete a person and every photo of them", responses=_errors(404))
    async def delete(person_id: PersonId):
        info = await context.run(gallery.delete, person_id)
        if context.after_delete is not None:
            await context.run(context.after_delete)
        return schemas.Person.of(info)

    @router.get("/people/{person_id}/templates", response_model=list[schemas.Template], dependencies=[ADMIN],
                tags=["people"], summary="The faces a person is searched by, and where each came from",
                responses=_errors(404))
    async def list_templates(person_id: PersonId):
        return [t.to_dict() for t in await context.run(services.templates.of, person_id)]

    @router.delete("/people/{person_id}/templates/{face_id}", response_model=schemas.Template,
                   dependencies=[ADMIN], tags=["people"], responses=_errors(400, 404),
                   summary="Remove one of a person's faces (a learned template, say; never their last)")
    async def remove_template(person_id: PersonId, face_id: FaceId):
        if face_id not in [t.face_id for t in await context.run(services.templates.of, person_id)]:
            raise ApiError(404, f"person {person_id} has no face {face_id}")
        return (await context.run(services.templates.remove, face_id)).to_dict()

    @router.post("/people/{person_id}/photos", status_code=201, response_model=schemas.Enrolled,
                 dependencies=[ADMIN], tags=["people"], summary="Add another photo of a person",
                 responses=_errors(400, 404, 409, 413, 422))
    async def add_photo(person_id: PersonId, photo: Photo, face_index: FaceIndex = None,
                        allow_mismatch: Annotated[bool, Form(description="add it even if the face does not match "
                                                                         "this person")] = False,
                        allow_low_quality: Annotated[bool, Form(description="add it even if the face is a poor "
                                                                            "photo to recognise them by")] = False):
        """Refused with 409 when the face does not match this person, or matches someone else better; with 422
        `low_quality` when the face is unlikely to be recognised later, unless `allow_low_quality`."""
        decoded = await context.photo(photo)
        result = await context.run(gallery.add_photo, person_id, decoded, face_index=face_index,
                                   allow_mismatch=allow_mismatch, allow_low_quality=allow_low_quality)
        return schemas.Enrolled.of(result)

    # ----- search ---------------------------------------------------------------------------------------
    @router.post("/identify", response_model=schemas.Identified, dependencies=[READ], tags=["search"],
                 summary="Name every face in a photo", responses=_errors(400, 413))
    async def identify(photo: Photo, key: Annotated[ApiKey, READ], top_k: TopK = 3, fpir: Fpir = None,
                       threshold: Threshold = None):
        """Each face: its box, the name (or 'unknown' below the threshold), its score and similarity, the top_k
        candidates; and the threshold used with its expected stranger-match rate for this gallery. For an admin key,
        each face not kept as a sighting has a `label_token` to label it later."""
        decoded = await context.photo(photo)
        matches = await context.run(gallery.identify, decoded, top_k=top_k, threshold=threshold, fpir=fpir)
        rule = matches[0].rule
        tokens = ([None if m.sighting_id is not None else services.feedback.token(m.embedding, m.face, m.crop)
                   for m in matches] if key.role == "admin" else None)
        return schemas.Identified.of(matches, top_k, rule, services.thresholds.typical_cosine(rule.threshold),
                                     tokens)

    @router.post("/videos/identify", dependencies=[READ], tags=["search"], responses=_errors(400, 413),
                 response_model=schemas.VideoIdentified, response_model_exclude_unset=True,
                 summary="Name every face of a video, followed across its frames: one answer per track")
    async def identify_video(request: Request, video: Video, key: Annotated[ApiKey, READ], top_k: TopK = 3,
                             fpir: Fpir = None, threshold: Threshold = None):
        """Each track (a face followed across frames): name or 'unknown', its pooled score, when it was on screen,
        frames seen and its best face's box; a named track is one sighting (`sighting_id`). The upload is written
        to a private temporary folder (the decoder reads a file) and deleted before the answer is sent. One video
        is followed at a time and two more may wait (their uploads are read while they wait); a fourth is refused
        with 503 `busy` before its upload is read. A video whose client went away while it waited is not
        followed. For an admin key, each track not kept as a sighting has a `label_token` to label it later."""
        folder = Path(tempfile.mkdtemp(prefix="api-video-", dir=context.scratch))
        try:
            path = folder / "upload"
            await save_upload(video, path, services.settings.video_max_bytes, "the video")
            async with context.videos:
                if await request.is_disconnected():
                    raise ApiError(499, "the client went away before its video's turn", "client_closed")
                answer = await anyio.to_thread.run_sync(functools.partial(
                    gallery.identify_video, path, top_k=top_k, fpir=fpir, threshold=threshold,
                    label=upload_label(video) or "the video"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        data = answer.to_dict()
        if key.role == "admin":  # a track not kept can be labelled later, as on the page
            for track, row in zip(answer.tracks, data["tracks"]):
                if track.match.sighting_id is None:
                    row["label_token"] = services.feedback.token(track.track.pooled, track.track.best_face,
                                                                 track.track.best_crop)
        return {**worded(data, answer.rule), "summary": video_summary(data)}

    @router.post("/verify", response_model=schemas.Verified, dependencies=[READ], tags=["search"],
                 summary="Are the faces of two photos the same person? (a photo with several faces needs "
                         "face_a / face_b)", responses=_errors(400, 413, 422))
    async def verify(photo_a: Photo, photo_b: Photo, fpir: Fpir = None, threshold: Threshold = None,
                     face_a: FaceIndex = None, face_b: FaceIndex = None):
        first = await context.photo(photo_a, "the first photo")
        second = await context.photo(photo_b, "the second photo")
        result = await context.run(gallery.verify, first, second, threshold=threshold, fpir=fpir, face_a=face_a,
                                   face_b=face_b)
        return worded(result.to_dict(), result.rule)

    # ----- the sightings memory -------------------------------------------------------------------------
    @router.post("/sightings/{sighting_id}/confirm", response_model=schemas.Sighting, tags=["sightings"],
                 summary="The identification kept as this sighting was right (its face learned as a template)",
                 responses=_errors(400, 404))
    async def confirm_sighting(sighting_id: SightingId, key: Annotated[ApiKey, ADMIN], learn: Learn = True):
        learn_by = _learned_by(key) if learn else None
        return (await context.run(services.feedback.confirm, sighting_id, learn_by)).to_dict()

    @router.post("/sightings/{sighting_id}/correct", response_model=schemas.Sighting, tags=["sightings"],
                 summary="The face kept as this sighting is another enrolled person (learned as theirs)",
                 responses=_errors(400, 404))
    async def correct_sighting(sighting_id: SightingId, correction: schemas.Correction,
                               key: Annotated[ApiKey, ADMIN], learn: Learn = True):
        return (await context.run(services.feedback.correct, sighting_id, correction.person_id,
                                  _learned_by(key) if learn else None)).to_dict()

    @router.post("/sightings", status_code=201, response_model=schemas.Sighting, tags=["sightings"],
                 summary="A face identify did not keep is this person: kept as a sighting (learned as theirs)",
                 responses=_errors(400, 404))
    async def label_face(label: schemas.Label, key: Annotated[ApiKey, ADMIN], learn: Learn = True):
        """The face is the one whose `label_token` an identify answer gave (to an admin key, within the hour);
        as the page's Correct (or Confirm, with `confirmed`) on a face that was not kept."""
        return (await context.run(services.feedback.label_token, label.label_token, label.person_id,
                                  label.confirmed, _learned_by(key) if learn else None)).to_dict()

    @router.delete("/sightings/{sighting_id}", response_model=schemas.Sighting, dependencies=[ADMIN],
                   tags=["sightings"], summary="The face kept as this sighting is nobody enrolled: forget it",
                   responses=_errors(400, 404))
    async def reject_sighting(sighting_id: SightingId):
        return (await context.run(services.feedback.reject, sighting_id)).to_dict()

    @router.post("/sightings/{sighting_id}/not-this-person", response_model=schemas.Sighting, tags=["sightings"],
                 summary="The face kept as this sighting is not the person it was named as: kept as their negative "
                         "example, so faces more like it than like them are not named them",
                 responses=_errors(400, 404))
    async def not_this_person(sighting_id: SightingId, key: Annotated[ApiKey, ADMIN]):
        return (await context.run(services.feedback.not_this_person, sighting_id, _learned_by(key))).to_dict()

    @router.post("/negatives", status_code=201, response_model=schemas.Negative, tags=["sightings"],
                 summary="A face identify did not keep is not this person: kept as their negative example",
                 responses=_errors(400, 404))
    async def not_this_face(denial: schemas.NotThisPerson, key: Annotated[ApiKey, ADMIN]):
        negative = await context.run(services.feedback.not_this_token, denial.label_token, denial.person_id,
                                     _learned_by(key))
        return {"negative_id": negative, "identity_id": denial.person_id}

    @router.delete("/negatives/{negative_id}", dependencies=[ADMIN], tags=["sightings"],
                   summary="Undo one \"not this person\"", responses=_errors(404))
    async def remove_negative(negative_id: Annotated[int, PathParam(ge=1, le=MAX_ID)]):
        return {"removed": negative_id, "identity_id": await context.run(services.negatives.remove, negative_id)}

    # ----- the gallery ----------------------------------------------------------------------------------
    # ----- suggested people (opt-in: FACEREC_SUGGESTIONS=on) ---------------------------------------------------
    @router.get("/suggestions", response_model=schemas.Suggestions, dependencies=[ADMIN], tags=["suggestions"],
                summary="People seen again and again but not enrolled, one page at a time")
    async def list_suggestions(offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
                               limit: Annotated[int, Query(ge=1, le=MAX_SUGGESTIONS_PAGE)] = SUGGESTIONS_PAGE):
        page = await context.run(services.suggestions.list, offset, limit)
        on = services.strangers.enabled
        return {"on": on, "off_because": None if on else services.strangers.why_disabled(), **page.to_dict()}

    @router.get("/suggestions/{suggestion_id}/faces", response_model=schemas.SuggestionFaces, dependencies=[ADMIN],
                tags=["suggestions"], summary="A suggestion's faces (aligned, JPEG)", responses=_errors(404))
    async def suggestion_faces(suggestion_id: SuggestionId):
        suggestion = await context.run(services.suggestions.get, suggestion_id)
        crops = await context.run(services.suggestions.crops, suggestion.face_ids)
        return {"id": suggestion.id, "faces": [{"face_id": f, "jpeg_base64": base64.b64encode(crops[f]).decode()}
                                               for f in suggestion.face_ids if f in crops]}

    @router.post("/suggestions/{suggestion_id}/name", status_code=201, response_model=schemas.NamedSuggestion,
                 dependencies=[ADMIN], tags=["suggestions"], responses=_errors(404, 409),
                 summary="Enroll a suggested person from their best faces")
    async def name_suggestion(suggestion_id: SuggestionId, naming: schemas.NameSuggestion):
        return (await context.run(services.suggestions.name, suggestion_id, naming.name, naming.note)).to_dict()

    @router.delete("/suggestions/{suggestion_id}", response_model=schemas.Dismissed, dependencies=[ADMIN],
                   tags=["suggestions"], responses=_errors(404), summary="Dismiss a suggestion: forget its faces")
    async def dismiss_suggestion(suggestion_id: SuggestionId):
        return {"id": suggestion_id, "forgotten": await context.run(services.suggestions.dismiss, suggestion_id)}

    @router.get("/gallery/health", response_model=schemas.Health, dependencies=[ADMIN], tags=["gallery"],
                summary="Embedding metrics, confusable pairs and suspected duplicates")
    async def health():
        return health_in_words(await context.run(gallery.health))

    @router.get("/gallery/export", response_class=FileResponse, dependencies=[ADMIN], tags=["gallery"],
                summary="Download the gallery as a portable zip (names, embeddings, optional face crops)",
                responses={200: {"content": {"application/zip": {}}}})
    async def export(include_crops: Annotated[bool, Query(description="also the 112x112 face crops")] = True):
        folder = Path(tempfile.mkdtemp(prefix="api-export-", dir=context.scratch))
        try:
            path = folder / "facerec-gallery.zip"
            await context.run(gallery.export, path, include_crops=include_crops)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return FileResponse(path, media_type="application/zip", filename=path.name,
                            background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True))

    @router.post("/gallery/import", response_model=schemas.Imported, dependencies=[ADMIN], tags=["gallery"],
                 summary="Add the people of an exported zip, all or nothing", responses=_errors(400, 413))
    async def import_(archive: Annotated[UploadFile, File(description="a zip made by export")]):
        folder = Path(tempfile.mkdtemp(prefix="api-import-", dir=context.scratch))
        try:
            path = folder / "import.zip"
            await save_upload(archive, path, services.settings.max_import_bytes, "the archive")
            return await context.run(gallery.import_, path)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return router


def _learned_by(key) -> str:
    """Who confirmed a face that was learned: the API key, by id and name."""
    return f"API key {key.id} ({key.name})"[:64]
