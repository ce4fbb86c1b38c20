"""#41 in a real browser against `python app.py`: a confirmed face becomes a template, the Gallery tab lists it
with its origin, and the next photo of that person is named where it was not; removing the template undoes it.

Ana Guevara is enrolled from photo 1, and the threshold is pinned at a score of 8.0 (`FACEREC_THRESHOLD`, which
the Identify tab's pin box shows, so the answers and the checks of learning use it): photo 3 is named (score 8.4),
photo 2 is not (7.5) until photo 3's face is learned (then 10.0)."""

from __future__ import annotations

import pytest

from app_server import running_app
from browser_helpers import IMAGE_INPUT, assert_no_toast, assert_no_traceback, expect, lfw, open_tab

from facerec.gallery import Gallery
from facerec.settings import Settings

ANA = "Ana_Guevara"


@pytest.fixture(scope="module")
def app(tmp_path_factory, data_dir):
    home = tmp_path_factory.mktemp("templates-app") / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(lfw(data_dir, ANA, 1), "Ana Guevara")
        gallery.enroll(lfw(data_dir, "Alan_Ball", 1), "Alan Ball", allow_low_quality=True)
    with running_app(home, extra_env={"FACEREC_THRESHOLD": "8.0"}) as running:
        yield running


def identify(page, photo) -> str:
    panel = open_tab(page, "Identify")
    # The app's FACEREC_THRESHOLD is in the pin box, so the page answers at it as REST and the CLI do.
    expect(panel.get_by_label("Or pin a score threshold (optional)")).to_have_value("8")
    panel.locator(IMAGE_INPUT).set_input_files(str(photo))
    expect(page.locator("#identify-status")).to_have_text("")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(page.locator("#identify-status")).to_contain_text("1 face(s)")
    return page.locator("#identify-status").inner_text()


def show_templates(page):
    panel = open_tab(page, "Gallery")
    name = panel.locator("#templates-name textarea, #templates-name input").first
    if not name.is_visible():
        panel.get_by_role("button", name="Templates: the faces a person is recognised by").click()  # opens it
    name.fill("Ana Guevara")
    panel.get_by_role("button", name="Show templates").click()
    return panel


def test_a_confirmed_face_is_listed_and_names_the_next_photo(page, shoot, data_dir):
    assert "#0 unknown" in identify(page, lfw(data_dir, ANA, 2))
    assert "#0 Ana Guevara" in identify(page, lfw(data_dir, ANA, 3))
    page.locator("#confirm-sighting").click()
    expect(page.locator("#sighting-status")).to_contain_text("Learned as a template of this person")
    shoot("01-learned", full_page=True)

    show_templates(page)
    expect(page.locator("#templates-status")).to_contain_text("Ana Guevara: 1 photo, 1 learned.")
    expect(page.locator("#templates-faces")).to_contain_text("learned from sighting")
    expect(page.locator("#templates-faces img")).to_have_count(2)  # both faces shown, from their stored crops
    shoot("02-listed", full_page=True)

    assert "#0 Ana Guevara" in identify(page, lfw(data_dir, ANA, 2))  # named where it was not

    panel = show_templates(page)
    expect(page.locator("#templates-status")).to_contain_text("1 learned")
    ana = page.locator("#people-faces figcaption").filter(has_text="Ana Guevara")
    expect(ana).to_have_text("Ana Guevara (1 photo, 1 learned)")  # the tab's list, read as it opened
    page.locator("#templates-face").get_by_role("combobox").click()
    page.get_by_role("option").filter(has_text="learned from sighting").first.click()
    panel.get_by_role("button", name="Remove this face").click()
    expect(page.locator("#templates-status")).to_contain_text("Removed face")
    expect(page.locator("#templates-status")).to_contain_text("Ana Guevara: 1 photo.")
    # The people list above follows at once, with no reload and no tab switch (#51 item 1): thumbnail and table.
    expect(ana).to_have_text("Ana Guevara (1 photo)")
    row = page.locator("#people-table").get_by_role("row").filter(has_text="Ana Guevara")
    expect(row.get_by_role("gridcell")).to_contain_text(["Ana Guevara", "1", "0"])  # name, photos, learned
    assert "#0 unknown" in identify(page, lfw(data_dir, ANA, 2))  # undone
    assert_no_toast(page)
    assert_no_traceback(page)
