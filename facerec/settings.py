"""One settings object for the whole app: paths, thresholds, the model file and privacy choices.

Built once (from defaults, `FACEREC_*` environment variables read in one place, or explicit arguments)
and passed down; nothing else in facerec reads the environment.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from facerec.errors import InvalidArgument

MODEL_NAME = "facerec-r18-arcface"


def default_model_path() -> Path:
    """The shipped model: next to the source tree (editable install, a checkout), else where `pip install .`
    put the data files (`<prefix>/share/facerec/models`)."""
    candidates = [
        Path(__file__).resolve().parent.parent / "models" / f"{MODEL_NAME}.onnx",
        Path(sys.prefix) / "share" / "facerec" / "models" / f"{MODEL_NAME}.onnx",
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return candidates[0]


def pack_file(name: str, models: Path | None = None) -> Path:
    """The own file of the model pack called `name` (`models/<name>.onnx`; `facerec models` lists the packs);
    a name with no such file is refused, naming the packs there."""
    folder = models or default_model_path().parent
    candidate = folder / f"{name}.onnx"
    if "/" in name or "\\" in name or name.startswith(".") or not candidate.is_file():
        present = sorted(path.stem for path in folder.glob("*.onnx"))
        raise ValueError(f"no model pack called {name[:40]!r}; the packs here: {', '.join(present) or 'none'}")
    return candidate


@dataclass(frozen=True)
class Settings:
    """Everything configurable.

    `fpir` is the accepted stranger-match rate (false-positive identification rate, 0.01 = 1%) from which
    `facerec.openset.threshold_policy` derives the threshold in force for the current gallery size; a
    `similarity_threshold` pins the threshold instead, on the scale the model decides with (the normalised score
    of `facerec.openset.cohort` for the shipped model; a cosine only for a card calibrated on cosines).
    """

    home: Path = Path("facerec_home")
    database_url: str | None = None
    model_path: Path = field(default_factory=default_model_path)
    similarity_threshold: float | None = None
    fpir: float = 0.01
    store_crops: bool = True  # False: privacy mode, no image data and no sightings are kept
    sightings_memory: int = 10_000  # recent identifications kept for the health report (0: none)
    sightings_per_hour: int = 10  # automatic sightings kept per person per hour (`facerec.gallery.sightings`)
    # Keep unknown faces to suggest people seen often (`facerec.gallery.strangers`): True only where the operator
    # opted in; False forgets every one kept before; None (unset) keeps none and forgets only the expired ones.
    suggestions: bool | None = None
    suggestions_days: int = 30  # ... each for at most this many days
    suggestions_memory: int = 10_000  # ... at most this many faces, the oldest out first
    # A photo library the app may group into people (`facerec.library.app_runs`), for the admin; None: none
    library: Path | None = None
    index_kind: str | None = None  # None: "pgvector" on a PostgreSQL database, else "auto" (`resolved_index_kind`)
    hnsw_m: int = 32
    hnsw_ef_search: int = 256
    flip_tta: bool = True
    detector_score_threshold: float = 0.9
    min_face_size: float = 20.0
    detector_max_side: int = 1280
    max_faces: int = 50  # faces identified per photo, the largest (`facerec.faces.detect.MAX_FACES`)
    max_pixels: int = 40_000_000
    working_pixels: int = 16_000_000  # photos above it are shrunk to it while decoding (memory per request)
    max_upload_bytes: int = 15 << 20  # 15 MiB: the web app and the REST API refuse bigger photos
    max_import_bytes: int = 256 << 20  # 256 MiB: an exported gallery to import (~40,000 faces with their crops)
    num_threads: int = 0
    # A video per request (`facerec.video.decode.VideoLimits`): at most this long, this big and this many frames;
    # frames with a longer side shrink to `video_max_side`. Faces are detected on every `video_detect_every`-th frame.
    video_max_seconds: float = 300.0
    video_max_bytes: int = 256 << 20
    video_max_frames: int = 9_000
    video_max_side: int = 1280
    video_detect_every: int = 3

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        """Defaults, then FACEREC_HOME / FACEREC_DATABASE_URL / FACEREC_MODEL (a file) or FACEREC_PACK (a pack's
        name: both set is refused) / FACEREC_THRESHOLD / FACEREC_FPIR /
        FACEREC_INDEX / FACEREC_HNSW_EF / FACEREC_STORE_CROPS / FACEREC_SIGHTINGS / FACEREC_SIGHTINGS_PER_HOUR /
        FACEREC_SUGGESTIONS / FACEREC_SUGGESTIONS_DAYS / FACEREC_SUGGESTIONS_MEMORY / FACEREC_LIBRARY,
        then explicit overrides (None values in overrides are ignored). A value that is not what its variable
        takes is one line (InvalidArgument) naming the variable, before anything is opened."""
        if os.environ.get("FACEREC_MODEL", "").strip() and os.environ.get("FACEREC_PACK", "").strip():
            raise InvalidArgument("FACEREC_MODEL and FACEREC_PACK both choose the model: set one of them")
        env: dict = {}
        for variable, (name, parse) in _ENVIRONMENT.items():
            text = os.environ.get(variable, "").strip()
            if text:
                env[name] = _parsed(variable, text, parse)
        env.update({k: v for k, v in overrides.items() if v is not None})
        if "home" in env:
            env["home"] = Path(env["home"])
        if "model_path" in env:
            env["model_path"] = Path(env["model_path"])
        return cls(**env)

    def with_(self, **changes) -> "Settings":
        return replace(self, **changes)

    @property
    def resolved_database_url(self) -> str:
        """`database_url`, else the SQLite file `gallery.db` in `home`."""
        return self.database_url or f"sqlite:///{(self.home / 'gallery.db').resolve()}"

    @property
    def resolved_index_kind(self) -> str:
        """`index_kind`, else the database's own search on PostgreSQL (pgvector) and FAISS elsewhere (`auto`: exact
        search, then a graph built in the background once the gallery outgrows it)."""
        if self.index_kind:
            return self.index_kind
        return "pgvector" if self.resolved_database_url.startswith("postgresql") else "auto"

    @property
    def quality_calibration_path(self) -> Path:
        """The enrollment-quality calibration next to the model (`scripts/calibrate_quality.py` writes it)."""
        return self.model_path.with_suffix(".quality.json")

    @property
    def video_calibration_path(self) -> Path:
        """The pooled-evidence calibration of tracks next to the model (`scripts/calibrate_video.py` writes it)."""
        return self.model_path.with_suffix(".video.json")

    @property
    def model_card_path(self) -> Path:
        return self.model_path.with_suffix(".json")

    def model_card(self) -> dict:
        """The model card next to the ONNX file ({} if there is none)."""
        try:
            return json.loads(self.model_card_path.read_text())
        except (OSError, ValueError):
            return {}


def _number(text: str, kind: type):
    try:
        value = kind(text)
    except ValueError:
        raise ValueError("not a number" if kind is float else "not a whole number") from None
    if kind is float and not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _score(text: str) -> float:
    """A pinned threshold: on the scale the model's card is calibrated on (a normalised score for the shipped
    model; the policy refuses an old cosine pin on that scale with its own sentence)."""
    value = _number(text, float)
    if not -100.0 <= value <= 100.0:
        raise ValueError("a pinned threshold is a score between -100 and 100 (the default rule's is a few units)")
    return value


def _rate(text: str) -> float:
    value = _number(text, float)
    if not 0.0 < value < 1.0:
        raise ValueError("a rate is between 0 and 1, e.g. 0.01 for 1%")
    return value


def _count(text: str) -> int:
    value = _number(text, int)
    if value < 0:
        raise ValueError("a count is 0 or more")
    return value


def _suggestions_memory(text: str) -> int:
    value = _count(text)
    if value > 20_000:  # `facerec.gallery.strangers.MAX_MEMORY`: grouping reads every kept face
        raise ValueError("at most 20000 faces are kept for suggestions")
    return value


def _index_kind(text: str) -> str:
    kinds = ("auto", "flat", "flat16", "hnsw", "pgvector")  # `facerec.vectors.INDEX_KINDS` (checked by a test)
    if text not in kinds:
        raise ValueError(f"it must be one of {', '.join(kinds)}")
    return text


SWITCH_ON, SWITCH_OFF = ("on", "true", "yes", "1"), ("off", "false", "no", "0")


def _switch(text: str) -> bool:
    """An on/off setting: on/off, true/false, yes/no or 1/0 (any letter case), and nothing else. Anything else is
    refused, not read as "on": a typo such as `disabled` or `of` must never keep strangers' faces or turn privacy
    mode off (#48 row 7: every value but four meant on)."""
    value = text.strip().lower()
    if value in SWITCH_ON:
        return True
    if value in SWITCH_OFF:
        return False
    raise ValueError("it takes on or off (also true/false, yes/no, 1/0)")


_ENVIRONMENT = {  # variable: (setting, parser of its text)
    "FACEREC_HOME": ("home", Path),
    "FACEREC_DATABASE_URL": ("database_url", str),
    "FACEREC_MODEL": ("model_path", Path),
    "FACEREC_PACK": ("model_path", lambda text: pack_file(text)),
    "FACEREC_THRESHOLD": ("similarity_threshold", _score),
    "FACEREC_FPIR": ("fpir", _rate),
    "FACEREC_INDEX": ("index_kind", _index_kind),
    "FACEREC_HNSW_EF": ("hnsw_ef_search", _count),
    "FACEREC_STORE_CROPS": ("store_crops", _switch),
    "FACEREC_SIGHTINGS": ("sightings_memory", _count),
    "FACEREC_SIGHTINGS_PER_HOUR": ("sightings_per_hour", _count),
    "FACEREC_SUGGESTIONS": ("suggestions", _switch),
    "FACEREC_SUGGESTIONS_DAYS": ("suggestions_days", _count),
    "FACEREC_SUGGESTIONS_MEMORY": ("suggestions_memory", _suggestions_memory),
    "FACEREC_LIBRARY": ("library", Path),
}


def _parsed(variable: str, text: str, parse):
    try:
        return parse(text)
    except ValueError as error:
        raise InvalidArgument(f"{variable}={text[:40]!r} is not usable ({error}); fix or unset it") from None


PASSWORD_ENV = "FACEREC_ADMIN_PASSWORD"
TRUSTED_PROXIES_ENV = "FACEREC_TRUSTED_PROXIES"
UPLOAD_QUOTA_ENV = "FACEREC_UPLOAD_QUOTA_MB"
PORT_ENV = "GRADIO_SERVER_PORT"
TEMP_DIR_ENV = "GRADIO_TEMP_DIR"
DEBUG_ENV = "FACEREC_DEBUG"
DEFAULT_PORT = 7860


def _quota_mb(text: str) -> float:
    value = _number(text, float)
    if value <= 0:
        raise ValueError("a size in MB above 0, e.g. 512")
    return value


def _port(text: str) -> int:
    value = _number(text, int)
    if not 1 <= value <= 65535:
        raise ValueError("a port is between 1 and 65535")
    return value


@dataclass(frozen=True)
class ServerSettings:
    """What the web server (app.py) takes from the environment, read here beside the gallery's settings so that
    one module owns every variable and every bad value gets the same one line (`_parsed`).

    `upload_quota_mb` None means the upload quota's own default; `temp_dir` None means a private folder per run."""

    admin_password: str | None = None
    trusted_proxies: tuple[str, ...] = ()
    upload_quota_mb: float | None = None
    port: int = DEFAULT_PORT
    temp_dir: str | None = None

    @classmethod
    def from_env(cls, environ: "dict[str, str] | os._Environ[str] | None" = None) -> "ServerSettings":
        environ = os.environ if environ is None else environ

        def text(variable: str) -> str:
            return environ.get(variable, "").strip()

        quota, port = text(UPLOAD_QUOTA_ENV), text(PORT_ENV)
        return cls(admin_password=environ.get(PASSWORD_ENV) or None,
                   trusted_proxies=tuple(a.strip() for a in text(TRUSTED_PROXIES_ENV).split(",") if a.strip()),
                   upload_quota_mb=_parsed(UPLOAD_QUOTA_ENV, quota, _quota_mb) if quota else None,
                   port=_parsed(PORT_ENV, port, _port) if port else DEFAULT_PORT,
                   temp_dir=text(TEMP_DIR_ENV) or None)


def debug_requested() -> bool:
    """Whether FACEREC_DEBUG asks the CLI for a bug's traceback instead of its one line."""
    return bool(os.environ.get(DEBUG_ENV))


def columns_requested() -> bool:
    """Whether COLUMNS asks for a width even when the output is not a terminal."""
    return bool(os.environ.get("COLUMNS"))


def named_secret(variable: str, what: str) -> str:
    """The secret a camera configuration names by its environment variable (a webhook's shared secret, a broker's
    password), so no secret is written in a file or on a command line (`ps` shows those); one line when unset."""
    value = os.environ.get(variable, "")
    if not value:
        raise InvalidArgument(f"{what} is read from the environment variable {variable}, which is not set")
    return value
