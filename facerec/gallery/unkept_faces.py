"""Faces identify did not keep, handed to an admin's REST client as signed tokens, so that it can label one later
as the page labels one from its session's memory (`SightingsFeedback.label`, "Correct" on an unknown face).

The server keeps nothing of such a face (a stranger's face is kept only where the operator opted in): the token
carries it, and the gallery's signature proves that it made the token, for this model, less than
`TOKEN_MAX_AGE_S` ago. A token holds the face's embedding, box and landmarks and, where the gallery keeps crops, its
aligned face (JPEG, as a sighting keeps it): it is biometric data, given only to admin keys. The signing key is a
random secret in the database (`Store.setting_once`), so every replica of a shared gallery reads every replica's
tokens. Reading one is bounded before anything is decoded (`MAX_TOKEN_CHARS`, and the decompressed size)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
import zlib
from dataclasses import dataclass

import numpy as np

from facerec.errors import InvalidArgument
from facerec.faces.detect import DetectedFace
from facerec.gallery.sightings import kept_face
from facerec.storage import Store

TOKEN_MAX_AGE_S = 3600  # as long as the page keeps the photo it answered about
MAX_TOKEN_CHARS = 64_000  # a token with a 112x112 JPEG is about 10,000
_MAX_PAYLOAD_BYTES = 128_000
_SECRET_SETTING = "unkept_face_token_key"
_VERSION = "u1"
INVALID = ("this label_token is not one this gallery gave, or was changed; identify the photo again with an "
           "admin key and use the token of its answer")
EXPIRED = f"this label_token is over {TOKEN_MAX_AGE_S // 60} minutes old; identify the photo again for a new one"


@dataclass(frozen=True)
class UnkeptFace:
    """A face from a token: its embedding [D] and, where the gallery keeps crops, what a sighting keeps of it
    (`kept`: the crop's JPEG, box and landmarks, as `facerec.gallery.sightings.kept_face` makes it)."""
    embedding: np.ndarray
    kept: dict | None


class UnkeptFaces:
    """Issues and reads the tokens of faces not kept, for one gallery and model."""

    def __init__(self, store: Store, model_id: str, keep_crops: bool, max_age_s: float = TOKEN_MAX_AGE_S) -> None:
        self._store, self._model_id, self._keep_crops, self._max_age_s = store, model_id, keep_crops, max_age_s
        self._secret: bytes | None = None

    def token(self, embedding: np.ndarray, face: DetectedFace | None, crop: np.ndarray | None) -> str:
        """A signed token of one face (or a track's pooled embedding and best view)."""
        payload = {"model": self._model_id, "issued": int(time.time()),
                   "embedding": base64.b64encode(np.asarray(embedding, "<f4").tobytes()).decode()}
        kept = kept_face(face, crop) if face is not None and self._keep_crops else None
        if kept is not None:  # what a sighting keeps of its face, the crop's JPEG in base64
            payload["face"] = {**kept, "crop_jpeg": base64.b64encode(kept["crop_jpeg"]).decode()}
        body = base64.urlsafe_b64encode(zlib.compress(json.dumps(payload).encode(), 6)).decode().rstrip("=")
        return f"{_VERSION}.{body}.{self._signature(body)}"

    def read(self, token: str) -> UnkeptFace:
        """The face a token holds; `InvalidArgument` in one sentence for a token not ours, changed, or too old."""
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS or token.count(".") != 2:
            raise InvalidArgument(INVALID)
        version, body, signature = token.split(".")
        if version != _VERSION or not hmac.compare_digest(signature, self._signature(body)):
            raise InvalidArgument(INVALID)
        try:
            inflate = zlib.decompressobj()
            raw = inflate.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)), _MAX_PAYLOAD_BYTES)
            payload = json.loads(raw)
            embedding = np.frombuffer(base64.b64decode(payload["embedding"]), "<f4").astype(np.float32)
            face = payload.get("face")
            kept = None if face is None else {**face, "crop_jpeg": base64.b64decode(face["crop_jpeg"])}
        except (ValueError, KeyError, TypeError, zlib.error, binascii.Error):
            raise InvalidArgument(INVALID) from None  # signed by us, so only a bug gets here; one line all the same
        if payload.get("model") != self._model_id:
            raise InvalidArgument("this label_token was made with another model than the gallery's; identify the "
                                  "photo again")
        if not 0 <= time.time() - payload.get("issued", 0) <= self._max_age_s:
            raise InvalidArgument(EXPIRED)
        return UnkeptFace(embedding, kept)

    def _signature(self, body: str) -> str:
        if self._secret is None:
            self._secret = bytes.fromhex(self._store.setting_once(_SECRET_SETTING, lambda: secrets.token_hex(32)))
        digest = hmac.new(self._secret, f"{_VERSION}.{body}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")
