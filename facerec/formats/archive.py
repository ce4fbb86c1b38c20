"""The portable gallery file (`facerec-gallery-v1`), and reading one without trusting it.

Layout (a zip): `gallery.json` = {"format": "facerec-gallery-v1", "faces": [record, ...]}; `embeddings.npy` =
[N, D] floats, row i belonging to record i; optional `crops/<face id>.jpg`, 112x112 aligned faces. A record:
{"name", "note", "model_id", "photo_sha256", "box": [x1, y1, x2, y2] or [], "landmarks": 5 [x, y] pairs or [],
"crop": entry name or null}, and optionally the history an import keeps: "enrolled_at" (when the person was
enrolled), "updated_at" (last renamed) and "added_at" (when this face was added), ISO 8601 with a time zone;
"origin" (enrolled, added, learned: a template learned from a confirmed sighting) and "learned_by" (who confirmed
it) are kept too.

A file to import may come from anywhere (another site, an attacker, a damaged disk), so `read_export` checks all
of it before the gallery writes anything, and reads it within `ImportLimits`: each entry is streamed and reading
stops at its bound, so a small zip that would expand to gigabytes costs neither the memory nor the time. It
refuses, with one line naming the record and the problem: a manifest of the wrong shape, missing keys, names
that `facerec.names` would refuse, two spellings of one name differing only in letter case, a vector count that
differs from the record count, vectors of the loaded model that are not finite unit vectors of its dimension, and
crops that are not decodable 112x112 images. Crops are stored as JPEG: a clean JPEG crop of at most 32 KiB
(facerec's own exports) is kept byte for byte, anything else is re-encoded.
"""

from __future__ import annotations

import io
import json
import math
import os
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image

from facerec.faces.embed import checked_embeddings
from facerec.errors import FaceRecError, InvalidArgument, InvalidImage, ModelMismatch
from facerec.faces.image import FORMATS, load_image
from facerec.names import clean_name, name_key
from facerec.storage.schema import ORIGINS

NEGATIVE = "negative"  # a face the person is not ("not this person", `facerec.gallery.negatives`)
EXPORTED_ORIGINS = (*ORIGINS, NEGATIVE)

EXPORT_FORMAT = "facerec-gallery-v1"
MANIFEST, EMBEDDINGS = "gallery.json", "embeddings.npy"
CROP_SIZE = 112
KEPT_CROP_BYTES = 32 << 10  # a 112x112 JPEG at quality 95 is ~5-10 KB; a bigger one carries something else
_REQUIRED = ("name", "model_id", "photo_sha256", "box", "landmarks")


@dataclass(frozen=True)
class ImportLimits:
    """Bounds on what one import may hold and cost (stated in SECURITY.md)."""

    max_faces: int = 100_000
    max_file_bytes: int = 2 << 30  # the zip file itself
    max_total_bytes: int = 2 << 30  # everything read out of it, uncompressed
    max_expansion: int = 20  # ... and at most this many bytes per byte of the file, beyond the first 64 MiB
    max_manifest_bytes: int = 64 << 20
    max_crop_bytes: int = 256 << 10
    max_note_chars: int = 2000
    max_dimension: int = 4096


@dataclass
class ImportedFace:
    """One checked record. `vector` is a unit float32 vector of the loaded model, or None when the record was
    made by another model (then `crop_jpeg` is set, and the face must be re-embedded from it)."""

    name: str
    note: str | None
    model_id: str
    photo_sha256: str
    box: list[float]
    landmarks: list[list[float]]
    crop_jpeg: bytes | None
    vector: np.ndarray | None
    history: dict = field(default_factory=dict)  # enrolled_at / updated_at / added_at: aware datetimes
    origin: str | None = None  # `facerec.storage.schema.ORIGINS`; None: the export did not say
    learned_by: str | None = None


HISTORY_KEYS = ("enrolled_at", "updated_at", "added_at")


def _moment(value: object, label: str) -> datetime:
    """An ISO 8601 date and time with its time zone, not in the future: what an export's history may say."""
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) and len(value) <= 40 else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None or moment > datetime.now(timezone.utc) + timedelta(days=1):
        raise _refused(f"{label} must be a past date and time with its time zone (ISO 8601)")
    return moment.astimezone(timezone.utc)


def read_export(path: str | Path, model_id: str, dimension: int,
                limits: ImportLimits = ImportLimits()) -> list[ImportedFace]:
    """Every face of an export file, checked; InvalidArgument (one line) when anything in it is unusable."""
    path = Path(path)
    if not path.is_file():
        raise _refused(f"there is no file {path.name}")
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise _refused(f"the file is {size:,} bytes, over the limit of {limits.max_file_bytes:,}")
    try:
        with zipfile.ZipFile(path) as archive:
            budget = min(limits.max_total_bytes, (64 << 20) + limits.max_expansion * size)
            return _Reader(archive, budget, limits).faces(model_id, dimension)
    except FaceRecError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, EOFError, RuntimeError,
            NotImplementedError, ValueError) as error:
        raise _refused(f"it is not a readable zip file ({_short(error)})") from None


class _Reader:
    def __init__(self, archive: zipfile.ZipFile, budget: int, limits: ImportLimits) -> None:
        self.archive, self.budget, self.limits = archive, budget, limits
        infos = archive.infolist()
        if len(infos) > limits.max_faces + 100:
            raise _refused(f"it holds {len(infos):,} entries, over the limit of {limits.max_faces + 100:,}")
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if info.filename in self.entries:
                raise _refused(f"it holds two entries named {info.filename!r}")
            self.entries[info.filename] = info

    def faces(self, model_id: str, dimension: int) -> list[ImportedFace]:
        records = self._records()
        vectors = self._vectors(len(records))
        crops: dict[str, bytes] = {}
        faces = []
        for number, (record, vector) in enumerate(zip(records, vectors), 1):
            label = f"record {number} ('{record['name']}')"
            crop = None
            if record["crop"] is not None:
                if record["crop"] not in crops:
                    crops[record["crop"]] = self._crop(record["crop"], label)
                crop = crops[record["crop"]]
            if record["model_id"] == model_id:
                vector = _unit(vector, dimension, label)
            elif crop is None:
                raise ModelMismatch(f"the export was made with model {record['model_id']} and {label} has no crop to "
                                    "re-embed; export it again with crops. Nothing was imported.")
            else:
                vector = None
            faces.append(ImportedFace(record["name"], record["note"], record["model_id"], record["photo_sha256"],
                                      record["box"], record["landmarks"], crop, vector, record["history"],
                                      record["origin"], record["learned_by"]))
        return faces

    def _read(self, name: str, limit: int) -> bytes:
        info = self.entries.get(name)
        if info is None:
            raise _refused(f"{name} is missing")
        if info.file_size > limit:
            raise _refused(f"{name} is {info.file_size:,} bytes uncompressed, over the limit of {limit:,}")
        with self.archive.open(info) as stream:
            data = stream.read(limit + 1)  # never more, whatever the entry's header claims
        if len(data) > limit:
            raise _refused(f"{name} is over the limit of {limit:,} bytes uncompressed")
        self._spend(len(data))
        return data

    def _spend(self, count: int) -> None:
        self.budget -= count
        if self.budget < 0:
            raise _refused("it expands to more data than an import may hold (see SECURITY.md, import limits)")

    def _records(self) -> list[dict]:
        try:
            manifest = json.loads(self._read(MANIFEST, self.limits.max_manifest_bytes).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise _refused(f"{MANIFEST} is not valid JSON ({_short(error)})") from None
        if not isinstance(manifest, dict):
            raise _refused(f"{MANIFEST} must hold an object, not {_json_type(manifest)}")
        if manifest.get("format") != EXPORT_FORMAT:
            raise _refused(f"{MANIFEST} has format {str(manifest.get('format'))[:40]!r}, not {EXPORT_FORMAT!r}")
        records = manifest.get("faces")
        if not isinstance(records, list):
            raise _refused(f"'faces' in {MANIFEST} must be a list of records, not {_json_type(records)}")
        if len(records) > self.limits.max_faces:
            raise _refused(f"it holds {len(records):,} faces, over the limit of {self.limits.max_faces:,}")
        checked = [self._record(number, record) for number, record in enumerate(records, 1)]
        spellings: dict[str, tuple[int, str]] = {}
        for number, record in enumerate(checked, 1):
            first = spellings.setdefault(name_key(record["name"]), (number, record["name"]))
            if first[1] != record["name"]:
                raise _refused(f"records {first[0]} and {number} name '{first[1]}' and '{record['name']}', which "
                               "differ only in letter case; use one spelling for one person")
        return checked

    def _record(self, number: int, record: object) -> dict:
        label = f"record {number}"
        if not isinstance(record, dict):
            raise _refused(f"{label} must be an object, not {_json_type(record)}")
        missing = [key for key in _REQUIRED if key not in record]
        if missing:
            raise _refused(f"{label} lacks {', '.join(missing)}")
        try:
            name = clean_name(record["name"])
        except InvalidArgument as error:
            raise _refused(f"{label}: {error}") from None
        label = f"record {number} ('{name}')"
        note = record.get("note")
        if note is not None and (not isinstance(note, str) or len(note) > self.limits.max_note_chars):
            raise _refused(f"{label}: the note must be text of at most {self.limits.max_note_chars} characters")
        for key, most in (("model_id", 200), ("photo_sha256", 64)):
            if not isinstance(record[key], str) or not 0 < len(record[key]) <= most:
                raise _refused(f"{label}: {key} must be text of 1 to {most} characters")
        box = _numbers(record["box"], (4,), f"{label}: box")
        landmarks = _numbers(record["landmarks"], (5, 2), f"{label}: landmarks")
        crop = record.get("crop")
        if crop is not None and not isinstance(crop, str):
            raise _refused(f"{label}: crop must be the name of an entry of the file, or null")
        history = {key: _moment(record[key], f"{label}: {key}") for key in HISTORY_KEYS
                   if record.get(key) is not None}
        origin, learned_by = record.get("origin"), record.get("learned_by")
        if origin is not None and origin not in EXPORTED_ORIGINS:
            raise _refused(f"{label}: origin must be one of {', '.join(EXPORTED_ORIGINS)}")
        if learned_by is not None and (not isinstance(learned_by, str) or not 0 < len(learned_by) <= 64):
            raise _refused(f"{label}: learned_by must be text of 1 to 64 characters")
        return {"name": name, "note": note, "model_id": record["model_id"], "photo_sha256": record["photo_sha256"],
                "box": box, "landmarks": landmarks, "crop": crop or None, "history": history, "origin": origin,
                "learned_by": learned_by}

    def _vectors(self, count: int) -> np.ndarray:
        info = self.entries.get(EMBEDDINGS)
        if info is None:
            raise _refused(f"{EMBEDDINGS} is missing")
        with self.archive.open(info) as stream:
            try:
                version = np.lib.format.read_magic(stream)
                read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                               (2, 0): np.lib.format.read_array_header_2_0}[version]
                shape, fortran_order, dtype = read_header(stream)
            except (KeyError, ValueError, SyntaxError, TypeError) as error:
                raise _refused(f"{EMBEDDINGS} is not a NumPy array file ({_short(error)})") from None
            if dtype.kind != "f" or len(shape) != 2:
                raise _refused(f"{EMBEDDINGS} must hold a 2-D array of floats, not {dtype} of shape {shape}")
            if shape[0] != count:
                raise _refused(f"{MANIFEST} lists {count} faces but {EMBEDDINGS} holds {shape[0]} vectors")
            if count and not 0 < shape[1] <= self.limits.max_dimension:
                raise _refused(f"{EMBEDDINGS} has vectors of {shape[1]} values (at most "
                               f"{self.limits.max_dimension})")
            size = math.prod(shape) * dtype.itemsize
            self._spend(size)
            data = stream.read(size + 1)
        if len(data) != size:
            raise _refused(f"{EMBEDDINGS} holds {len(data):,} bytes of data, not the {size:,} its header says")
        return np.frombuffer(data, dtype).reshape(shape, order="F" if fortran_order else "C")

    def _crop(self, name: str, label: str) -> bytes:
        if name not in self.entries:
            raise _refused(f"{label}: its crop {name} is not in the file")
        data = self._read(name, self.limits.max_crop_bytes)
        try:
            return checked_crop(data)
        except InvalidImage as error:
            raise _refused(f"{label}: its crop {name} {error}") from None


def checked_crop(data: bytes) -> bytes:
    """A crop as the gallery stores it (JPEG, 112x112, decodable), or InvalidImage saying what is wrong. The size
    is read from the image header before anything is decoded, so a huge image costs nothing."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the size check below is ours
            with Image.open(io.BytesIO(data), formats=FORMATS) as image:
                kind, size, mode, has_exif = image.format, image.size, image.mode, "exif" in image.info
    except Image.DecompressionBombError:
        raise InvalidImage(f"is an image of hundreds of megapixels, not a {CROP_SIZE}x{CROP_SIZE} crop") from None
    except Exception:  # noqa: BLE001 - UnidentifiedImageError and whatever a broken header raises
        raise InvalidImage("is not an image") from None
    if size != (CROP_SIZE, CROP_SIZE):
        raise InvalidImage(f"is {size[0]}x{size[1]} pixels; a crop is a {CROP_SIZE}x{CROP_SIZE} aligned face")
    try:
        pixels = load_image(data, max_pixels=CROP_SIZE * CROP_SIZE)  # decodes all of it: truncated, corrupt...
    except InvalidImage:
        raise InvalidImage("cannot be decoded: it is truncated or corrupt") from None
    if kind == "JPEG" and mode == "RGB" and not has_exif and len(data) <= KEPT_CROP_BYTES:
        return data  # facerec's own crops: kept byte for byte, no second JPEG generation
    return encode_crop(pixels)


def decode_crop(jpeg: bytes) -> np.ndarray:
    """A stored aligned face crop back to RGB pixels (the inverse of `encode_crop`)."""
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"))


def encode_crop(pixels: np.ndarray) -> bytes:
    """The stored form of an aligned face crop: JPEG, quality 95."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


def open_private(path: str | Path) -> BinaryIO:
    """A new (or emptied) file for writing, readable by its owner only: an export holds faces."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)  # an existing file keeps its mode through O_CREAT
    return os.fdopen(descriptor, "wb")


def _unit(vector: np.ndarray, dimension: int, label: str) -> np.ndarray:
    try:
        return checked_embeddings(np.asarray(vector)[None], dimension)[0]
    except InvalidArgument as error:
        raise _refused(f"{label}: {error}") from None


def _numbers(value: object, shape: tuple[int, ...], label: str) -> list:
    """[] or a list of `shape` finite numbers (nested lists for 2-D)."""
    if value == [] or value is None:
        return []
    array = np.array(value, dtype=np.float64) if _numbers_only(value, len(shape)) else None
    if array is None or array.shape != shape or not np.all(np.isfinite(array)):
        raise _refused(f"{label} must be [] or {' x '.join(map(str, shape))} finite numbers")
    return array.tolist()


def _numbers_only(value: object, depth: int) -> bool:
    """Nested lists `depth` deep whose leaves are JSON numbers (not text, not true/false)."""
    if depth == 0:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e300
    return isinstance(value, list) and len(value) <= 8 and all(_numbers_only(v, depth - 1) for v in value)


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _refused(problem: str) -> InvalidArgument:
    return InvalidArgument(f"cannot import this file: {problem}. Nothing was imported.")


def _short(error: BaseException) -> str:
    return (" ".join(str(error).split()) or type(error).__name__)[:160]
