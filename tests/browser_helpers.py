"""What the browser tests share (not a test module): Debian's Chromium driven by Playwright, a page on the app,
screenshots, and reading the page as a user does.

Playwright's own browser download is not used: the browser is `/usr/bin/chromium` (or $FACEREC_CHROMIUM). Without
it the browser tests are skipped, or fail under CI (CI=true). Screenshots go to $FACEREC_SHOTS/<test name>/ when
that is set (e.g. /tmp/facerec-shots, to look at them), else under the test's tmp_path; never into the repository.

The fixtures (`browser`, `page` on the module's `app`, `shots`, `shoot`) are in tests/conftest.py.
"""

from __future__ import annotations


import os
from pathlib import Path

import pytest
from PIL import Image
from group_photos import group_photo  # noqa: F401 - re-exported for the page tests

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect

CHROMIUM = Path(os.environ.get("FACEREC_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
TIMEOUT_MS = 60_000  # page loads and uploads can take seconds on a busy 2-core machine; inference is < 1 s
# Assertions wait for what they expect (a status line, a table) up to the same bound, not Playwright's 5 s default:
# on a loaded machine identify took over 3.6 s and a test failed on the clock, not on the page (#31 item 10).
expect.set_options(timeout=TIMEOUT_MS)
IMAGE_INPUT = 'input[type=file][accept="image/*"]'  # the Image upload (a Dataframe has a CSV one too)
VIEWPORT = {"width": 1280, "height": 1000}


def lfw(data_dir: Path, person: str, index: int) -> Path:
    path = data_dir / "lfw" / person / f"{person}_{index:04d}.jpg"
    assert path.is_file(), f"missing LFW photo {path}"
    return path


def open_tab(page, name: str):
    page.get_by_role("tab", name=name, exact=True).click()
    panel = page.get_by_role("tabpanel")  # only the visible tab's panel has an accessible role
    expect(panel).to_have_count(1)
    return panel


def open_gallery_as_admin(page, password: str, people_line):
    """The Gallery tab with the admin password typed; waits for the people list to say `people_line` (text or a
    pattern, e.g. "1 person enrolled."). Opening the tab reads the gallery again; on a busy machine that answer (still without the
    password) could land after the password's and undo it (seen in CI with two test workers): it lands first."""
    from facerec.ui.password_field import LABEL

    panel = open_tab(page, "Gallery")
    expect(page.locator("#people-status")).to_contain_text("Type the admin password")
    field = page.locator("#admin-password").get_by_label(LABEL)
    field.fill(password)
    field.press("Enter")
    expect(page.locator("#people-status")).to_have_text(people_line)
    return panel


def assert_no_traceback(page) -> None:
    text = page.locator("body").inner_text()
    assert "Traceback" not in text and 'File "' not in text, text[-2000:]


def assert_no_toast(page) -> None:
    """Results and errors appear next to their buttons: Gradio's toast (and its 'Error (3)' pile) never shows,
    nor its red 'Error' badge over an output whose event failed."""
    page.wait_for_timeout(500)
    assert page.get_by_test_id("toast-body").count() == 0, page.get_by_test_id("toast-body").all_inner_texts()
    badges = page.locator('[data-testid="status-tracker"]').filter(has_text="Error")
    assert badges.count() == 0, f"{badges.count()} output(s) marked 'Error' by Gradio"


def toast_text(page, timeout_ms: int = TIMEOUT_MS) -> str:
    """The text of the toast Gradio itself shows (only for what the browser refuses before any action runs,
    such as a file type the upload widget does not take)."""
    toast = page.get_by_test_id("toast-body").first
    expect(toast).to_be_visible(timeout=timeout_ms)
    page.wait_for_timeout(500)  # let it finish flying in, for the screenshot
    return toast.inner_text()


def upload(panel, photo: Path) -> None:
    """Put `photo` in the panel's photo box and wait until the box shows it, from the server's copy. A button
    pressed before the upload is in sends no photo, or the one before (which an answered add or identify has
    already deleted: seen in CI on a busy machine)."""
    panel.locator(IMAGE_INPUT).set_input_files(str(photo))
    expect(panel.locator(f"img[src*='{photo.name}']").first).to_be_visible()


def identify_one_face(page, photo: Path) -> str:
    """Identify a photo of one face on the Identify tab, at the page's default rate; the status line it says."""
    panel = open_tab(page, "Identify")
    upload(panel, photo)
    expect(page.locator("#identify-status")).to_have_text("")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(page.locator("#identify-status")).to_contain_text("1 face(s)")
    return page.locator("#identify-status").inner_text()


def enroll(page, photo: Path, name: str) -> None:
    """Enroll `name` from `photo` through the Enroll tab; waits for the success line.

    The new photo's detection also empties the last enrollment's line; until that has happened the detect line
    still describes the previous photo, and a click on Enroll would race the detection (which then empties the
    new result: seen in CI on a busy machine, and again once detection also scored the face's enrollment quality).
    So with a previous line on the page, wait for it to be emptied first."""
    panel = open_tab(page, "Enroll")
    status = page.locator("#enroll-status")
    previous = status.inner_text().strip()
    panel.locator(IMAGE_INPUT).set_input_files(str(photo))
    if previous:
        # Not merely "not the previous line": while detection runs, Gradio prefixes that line with
        # "processing | 0.3s", which already differs. Emptied means the detection has finished.
        expect(status).to_have_text("")
    expect(page.locator("#detect-status")).to_contain_text("face")
    panel.get_by_label("Name", exact=True).fill(name)
    panel.get_by_role("button", name="Enroll", exact=True).click()
    expect(page.locator("#enroll-status")).to_contain_text(f"Enrolled {name}")


def below(page, first: str, second, within_px: float = 120) -> bool:
    """Whether the element `second` (selector or locator) starts just under `first` (within `within_px`)."""
    a = page.locator(first).bounding_box() if isinstance(first, str) else first.bounding_box()
    b = page.locator(second).bounding_box() if isinstance(second, str) else second.bounding_box()
    return a is not None and b is not None and 0 <= b["y"] - (a["y"] + a["height"]) <= within_px
