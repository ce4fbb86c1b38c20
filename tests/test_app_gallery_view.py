"""The Gallery tab never shows a stale list (issue #15, point 1), in a real browser on a fresh app (and on one
with an admin password, where opening a tab before typing it is not an error).

Without a Refresh button: the list is there when the tab opens, and after an enrollment (in the Enroll tab), a
rename, a failed rename, an added photo, a delete and an import it shows exactly what the gallery holds. Each
action's result or error appears under its own button and replaces the previous one; no toast appears.
Screenshots of each step (`browser_helpers`: where they go).
"""

from __future__ import annotations

import shutil

import pytest

from app_server import running_app
from facerec.ui.password_field import LABEL as PASSWORD_LABEL
from facerec.words.people import faces_text
from browser_helpers import assert_no_toast, assert_no_traceback, below, enroll, expect, lfw, open_tab, upload

ALAN, BILJANA, ART = "Alan_Ball", "Biljana_Plavsic", "Art_Hoffmann"  # single-face LFW photos (tests/gallery/)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("gallery-view") / "home") as running:
        yield running


def captions(page) -> list[str]:
    """The names under the thumbnails, as shown."""
    return page.locator("#people-faces figcaption").all_inner_texts()


def column(page, index: int):
    """The cells of one column of the people table (1: id, 2: name, 3: photos), top to bottom."""
    return page.locator(f'#people-table [role=gridcell][aria-colindex="{index}"]')


def expect_people(page, expected: dict[str, int]) -> None:
    """The table and the thumbnails show exactly these people, in name order, with these photo counts."""
    people = sorted(expected.items())
    expect(page.locator("#people-faces figcaption")).to_have_text([f"{n} ({faces_text(c)})" for n, c in people])
    expect(column(page, 2)).to_have_text([n for n, _ in people])
    expect(column(page, 3)).to_have_text([str(c) for _, c in people])


def pick(page, name: str) -> None:
    """Click the people table's cell holding `name` (a visible cell, whatever Gradio nests inside it)."""
    page.locator(f"#people-table :text-is({name!r}):visible").first.click()


def test_the_gallery_view_follows_every_change(page, shoot, data_dir, tmp_path):
    panel = open_tab(page, "Gallery")
    expect(page.locator("#people-status")).to_have_text("Nobody is enrolled yet: enroll someone in the Enroll tab.")
    assert panel.get_by_role("button", name="Refresh").count() == 0  # nothing to press: the list keeps itself true
    shoot("01-empty")

    # Enrolled in the Enroll tab: the Gallery tab shows them as soon as it opens.
    enroll(page, lfw(data_dir, ALAN, 1), "Alan Ball")
    enroll(page, lfw(data_dir, BILJANA, 1), "Biljana Plavsic")
    open_tab(page, "Gallery")
    expect(page.locator("#people-status")).to_have_text("2 people enrolled.")
    expect_people(page, {"Alan Ball": 1, "Biljana Plavsic": 1})
    shoot("02-after-enroll", full_page=True)

    # Rename: the result under the Rename button, the list and the thumbnail caption renamed at once.
    panel = page.get_by_role("tabpanel")
    panel.get_by_role("button", name="Rename").first.click()  # opens the accordion
    # The person is picked from the table, not typed (#31 item 7): a click on their row fills every name box.
    pick(page, "Alan Ball")
    expect(page.locator("#rename-from").get_by_label("Current name")).to_have_value("Alan Ball")
    page.locator("#rename-to").get_by_label("New name").fill("Alan W Ball")
    rename_button = panel.get_by_role("button", name="Rename", exact=True).last
    rename_button.click()
    expect(page.locator("#rename-status")).to_have_text("Renamed to Alan W Ball.")
    expect_people(page, {"Alan W Ball": 1, "Biljana Plavsic": 1})
    assert below(page, rename_button, "#rename-status"), "the result is not next to its button"
    shoot("03-renamed", full_page=True)

    # The boxes now hold the new state (#64 row 7); the old name again fails: the error replaces the success line,
    # once, and the list is unchanged.
    expect(page.locator("#rename-from").get_by_label("Current name")).to_have_value("Alan W Ball")
    page.locator("#rename-from").get_by_label("Current name").fill("Alan Ball")
    page.locator("#rename-to").get_by_label("New name").fill("Alan W Ball")
    rename_button.click()
    status = page.locator("#rename-status")
    expect(status).to_have_text("Error: No enrolled person called 'Alan Ball'.")
    assert "Renamed to" not in page.locator("body").inner_text()
    assert page.locator("body").inner_text().count("No enrolled person called") == 1
    expect_people(page, {"Alan W Ball": 1, "Biljana Plavsic": 1})
    assert_no_toast(page)
    shoot("04-rename-failed")

    # Add a photo: the count goes up in the table and the caption; the rename line is gone (only the latest).
    panel.get_by_role("button", name="Add a photo to a person").click()
    pick(page, "Alan W Ball")  # picked, not typed
    expect(page.locator("#add-photo-name").get_by_label("Name")).to_have_value("Alan W Ball")
    upload(panel, lfw(data_dir, ALAN, 2))
    panel.get_by_role("button", name="Add photo", exact=True).click()
    expect(page.locator("#add-photo-status")).to_have_text("Added a photo to Alan W Ball (2 photos).")
    expect(page.locator("#rename-status")).to_have_text("")
    expect_people(page, {"Alan W Ball": 2, "Biljana Plavsic": 1})
    shoot("05-photo-added", full_page=True)

    # Delete: refused without the tick (said under Delete), then done; the person leaves table and thumbnails.
    panel.get_by_role("button", name="Delete").first.click()
    pick(page, "Biljana Plavsic")  # picked, not typed
    expect(page.locator("#delete-name").get_by_label("Name")).to_have_value("Biljana Plavsic")
    delete_button = panel.get_by_role("button", name="Delete", exact=True).last
    delete_button.click()
    expect(page.locator("#delete-status")).to_contain_text("Error: Nothing was deleted: tick 'yes, delete")
    expect_people(page, {"Alan W Ball": 2, "Biljana Plavsic": 1})
    panel.get_by_label("Yes, delete this person and all their photos").check()
    delete_button.click()
    expect(page.locator("#delete-status")).to_have_text("Deleted Biljana Plavsic (1 photo).")
    expect_people(page, {"Alan W Ball": 2})
    expect(page.locator("#people-status")).to_have_text("1 person enrolled.")
    assert below(page, delete_button, "#delete-status")
    shoot("06-deleted", full_page=True)

    # Import: an export of a gallery holding Art Hoffmann, imported through the page, shows him at once.
    other = tmp_path / "other-home"
    export = _export_of(other, lfw(data_dir, ART, 1), "Art Hoffmann", tmp_path / "art.zip")
    panel.get_by_role("button", name="Export / import").click()
    panel.locator("input[type=file][accept='.zip']").set_input_files(str(export))
    panel.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("#import-status")).to_have_text("Imported 1 face(s); 0 already present.")
    expect_people(page, {"Alan W Ball": 2, "Art Hoffmann": 1})
    shoot("07-imported", full_page=True)
    assert_no_toast(page)
    assert_no_traceback(page)
    shutil.rmtree(other, ignore_errors=True)


def _export_of(home, photo, name, out):
    """An export file of a one-person gallery (made with the Python API, as another installation would)."""
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    with Gallery(Settings.from_env(home=home)) as gallery:
        gallery.enroll(photo, name)
        gallery.export(out)
    return out


def test_with_a_password_the_views_ask_for_it_and_then_stay_true(browser, shots, data_dir, tmp_path):
    """Opening the Gallery or Health tab before typing the password is not an error (and not a wrong guess): the
    page asks for it; a wrong one is one error line; the right one shows the list, which then follows changes.
    The password is typed once, at the top of the page, for every tab (it was asked again in each tab), and
    "Forget the password" empties it."""
    from browser_helpers import TIMEOUT_MS, VIEWPORT

    home = tmp_path / "home"
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    with Gallery(Settings.from_env(home=home)) as gallery:
        gallery.enroll(lfw(data_dir, ALAN, 1), "Alan Ball")
    with running_app(home, admin_password="open sesame") as app:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        try:
            page.goto(app.url)
            panel = open_tab(page, "Gallery")
            expect(page.locator("#people-status")).to_have_text(
                "Type the admin password at the top of the page and press Enter to see the enrolled people.")
            expect(page.locator("#people-faces figcaption")).to_have_count(0)
            assert_no_toast(page)
            password = page.locator("#admin-password").get_by_label(PASSWORD_LABEL)
            password.fill("wrong")
            password.press("Enter")
            expect(page.locator("#people-status")).to_have_text("Error: Wrong admin password.")
            expect(page.locator("#people-faces figcaption")).to_have_count(0)
            password.fill("open sesame")
            password.press("Enter")
            expect_people(page, {"Alan Ball": 1})
            panel.get_by_role("button", name="Rename").first.click()
            page.locator("#rename-from").get_by_label("Current name").fill("Alan Ball")
            page.locator("#rename-to").get_by_label("New name").fill("Alan W Ball")
            panel.get_by_role("button", name="Rename", exact=True).last.click()
            expect(page.locator("#rename-status")).to_have_text("Renamed to Alan W Ball.")
            expect_people(page, {"Alan W Ball": 1})
            page.screenshot(path=str(shots / "01-password-gallery.png"), full_page=True)

            open_tab(page, "Health")
            expect(page.locator("#health-report")).to_contain_text("1 person, 1 face")  # no second password
            expect(page.locator("#policy-growth")).to_contain_text("The threshold as the gallery grows")
            assert_no_toast(page)
            page.screenshot(path=str(shots / "02-password-health.png"))
            page.get_by_role("button", name="Forget the password").click()
            expect(password).to_have_value("")
            page.get_by_role("button", name="Check gallery health").click()
            expect(page.locator("#health-status")).to_have_text(
                "Type the admin password at the top of the page and press Check gallery health.")
        finally:
            context.close()
