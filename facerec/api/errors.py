"""Every failure of the REST API as an HTTP status and one JSON line: `{"error": message, "code": ...}`.

The message is the one the web app and the CLI show for the same problem (the `FaceRecError` text); a few errors add
what a program needs to act on it: `matches` (who a duplicate or look-alike matches), `faces` (the boxes to choose
a `face_index` from), `taken` (the name already enrolled). Nothing else reaches the client: an unexpected error is
answered with a one-line 500 and its traceback goes to the server log.

| status | when |
|---|---|
| 400 | a parameter out of range or malformed (face index, name, threshold, an import file) |
| 401 / 403 | no key, or an unknown or revoked one / a read key on an admin route |
| 404 | no such person, no such route |
| 409 | the name is taken, the photo is already enrolled, a look-alike, a photo that is not this person's |
| 413 | an upload over the size limit, a photo over the pixel limit, a video over its limits |
| 422 | not an image or a video facerec reads, truncated, no face, several faces (and no face index), a missing or mistyped field |
| 503 | the API is off: no key has been created; `busy`: as many videos as the server takes are already in (one followed, two waiting): try again later (`Retry-After`) |
| 507 | the gallery's disk is full: the write was rolled back (identify still answers; its sighting is not kept) |
"""

from __future__ import annotations

import logging

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from facerec.errors import (
    InvalidVideo, VideoTooLarge, AccessDenied, Busy, DuplicatePhoto, FaceRecError, IdentityMismatch, ImageTooLarge, InvalidImage, ModelMismatch,
    LowQuality, MultipleFaces, NameTaken, NoFace, PossibleDuplicate, StorageFull, UnknownIdentity, UnknownSighting,
    UnknownLibraryGroup, UnknownSuggestion, UnusableFile,
)
from facerec.words.phrasing import one_line, sentence

log = logging.getLogger("facerec.api")

# First match wins: subclasses before their bases.
STATUS_OF = (
    (VideoTooLarge, 413, "video_too_large"),
    (InvalidVideo, 422, "invalid_video"),
    (ImageTooLarge, 413, "image_too_large"),
    (InvalidImage, 422, "invalid_image"),
    (NoFace, 422, "no_face"),
    (MultipleFaces, 422, "multiple_faces"),
    (UnknownSighting, 404, "unknown_sighting"),
    (UnknownSuggestion, 404, "unknown_suggestion"),
    (UnknownLibraryGroup, 404, "unknown_library_group"),
    (UnknownIdentity, 404, "unknown_person"),
    (LowQuality, 422, "low_quality"),
    (NameTaken, 409, "name_taken"),
    (DuplicatePhoto, 409, "duplicate_photo"),
    (PossibleDuplicate, 409, "possible_duplicate"),
    (IdentityMismatch, 409, "identity_mismatch"),
    (ModelMismatch, 409, "model_mismatch"),
    (AccessDenied, 403, "forbidden"),
    (StorageFull, 507, "storage_full"),
    (Busy, 503, "busy"),  # with Retry-After (`HEADERS_OF`)
    (UnusableFile, 500, "unusable_file"),
    (FaceRecError, 400, "invalid_argument"),
)
HEADERS_OF = ((Busy, {"Retry-After": "120"}),)  # what a client needs beside the status to act on it
CODE_OF_HTTP_STATUS = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                       405: "method_not_allowed", 413: "too_large", 503: "api_off", 507: "storage_full"}


class ApiError(Exception):
    """A refusal decided by the API itself (keys, upload size), with its status and code."""

    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.headers = status, code or CODE_OF_HTTP_STATUS.get(status, "error"), headers


def error_response(error: BaseException) -> JSONResponse:
    """The HTTP answer for any exception raised while serving a request."""
    if isinstance(error, FaceRecError):
        status, code = next((s, c) for kind, s, c in STATUS_OF if isinstance(error, kind))
        headers = next((h for kind, h in HEADERS_OF if isinstance(error, kind)), None)
        return _answer(status, code, str(error), headers=headers, **_details(error))
    if isinstance(error, ApiError):
        return _answer(error.status, error.code, str(error), headers=error.headers)
    if isinstance(error, RequestValidationError):
        return _answer(422, "invalid_request", validation_message(error.errors()))
    if isinstance(error, HTTPException):  # routing (404, 405) and the body limit (413)
        message = error.detail if isinstance(error.detail, str) else f"HTTP {error.status_code}"
        return _answer(error.status_code, CODE_OF_HTTP_STATUS.get(error.status_code, "error"), message,
                       headers=getattr(error, "headers", None))
    log.error("unexpected error in the REST API", exc_info=error)
    return _answer(500, "internal_error",
                   f"Something went wrong ({type(error).__name__}); the server log has details.")


def validation_message(errors: list[dict]) -> str:
    """FastAPI's list of field errors as one sentence that names each field as it is spelled in the request:
    `Field name: field required; field top_k: input should be ...`."""
    parts = []
    for problem in errors:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p not in ("body", "query", "path", "header"))
        message = str(problem.get("msg", "invalid"))
        parts.append(f"field {where}: {message[:1].lower() + message[1:]}" if where else message)
    return one_line("; ".join(parts), 500) or "invalid request"


def _details(error: FaceRecError) -> dict:
    if isinstance(error, (PossibleDuplicate, IdentityMismatch)):
        # `score`: the normalised score the check compared with the threshold, as every other route names it
        return {"matches": [{"name": n, "score": round(float(s), 4)} for n, s in error.matches]}
    if isinstance(error, DuplicatePhoto) and error.enrolled_as:
        return {"matches": [{"name": error.enrolled_as, "score": None}]}
    if isinstance(error, NameTaken) and error.taken:
        return {"taken": error.taken}
    if isinstance(error, LowQuality) and error.quality is not None:
        return {"quality": error.quality.to_dict()}
    if isinstance(error, MultipleFaces):
        return {"faces": [{"index": i, **face.to_dict()} for i, face in enumerate(error.faces)]}
    return {}


def _answer(status: int, code: str, message: str, headers: dict | None = None, **details) -> JSONResponse:
    line = sentence(" ".join(str(message).split()))  # one line, whatever the message held, as the UI writes it
    return JSONResponse({"error": line, "code": code, **details}, status_code=status, headers=headers)
