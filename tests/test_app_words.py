"""What a new user reads on the page, round 5 (#51 rows 6, 7, 8, 11), in a real browser against `python app.py`;
each test fails on the code before its fix. The command line's side is tests/test_user_words.py.

Barack Obama, Joe Biden and Eileen Collins are enrolled from shipped public-domain portraits (tests/faces), one
photo each, with no admin password and the threshold pinned at a score of 8.0 (`FACEREC_THRESHOLD`): Obama's photo
3 is named (above 8.0), so a Confirm on the page learns it (tests/test_app_templates.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
from PIL import Image

from app_server import REPO_ROOT, running_app
from browser_helpers import IMAGE_INPUT, assert_no_toast, assert_no_traceback, expect, open_tab

from facerec.gallery import Gallery
from facerec.settings import Settings

OBAMA, OTHERS, STRANGER = "Barack_Obama", ("Joe_Biden", "Eileen_Collins"), "Grace_Hopper"


@pytest.fixture(scope="module")
def app(tmp_path_factory, portrait):
    home = tmp_path_factory.mktemp("words-app") / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(portrait(OBAMA, 1), "Barack Obama")
        for person in OTHERS:
            gallery.enroll(portrait(person, 1), person.replace("_", " "), allow_low_quality=True)
    with running_app(home, extra_env={"FACEREC_THRESHOLD": "8.0"}) as running:
        yield running


@pytest.fixture(scope="module")
def stacked(portrait_square, tmp_path_factory):
    """Obama (photo 2) above a stranger (Grace Hopper): two faces one on top of the other, in a 250 x 500 photo."""
    top, bottom = (Image.open(portrait_square(*who)).convert("RGB") for who in ((OBAMA, 2), (STRANGER, 1)))
    canvas = Image.new("RGB", (250, 500))
    canvas.paste(top, (0, 0))
    canvas.paste(bottom, (0, 250))
    path = tmp_path_factory.mktemp("stacked") / "stacked.jpg"
    canvas.save(path, "JPEG", quality=95)
    return path


# ----- row 8: the Enroll tab's picture boxes say what they show --------------------------------------------------
def test_the_enroll_tab_says_what_each_picture_box_shows(page, shoot, portrait):
    panel = open_tab(page, "Enroll")
    for caption, box in (("Faces found", "#enroll-faces"), ("Aligned face (what is stored)", "#enroll-crop")):
        label = panel.get_by_text(caption, exact=True)
        expect(label).to_be_visible()  # before: only the picture's alternative text, and no picture yet
        above, under = label.bounding_box(), page.locator(box).bounding_box()
        assert 0 <= under["y"] - (above["y"] + above["height"]) <= 40, (caption, above, under)
        assert above["x"] < under["x"] + under["width"] and under["x"] < above["x"] + above["width"], caption
    panel.locator(IMAGE_INPUT).set_input_files(str(portrait(OBAMA, 2)))
    expect(page.locator("#detect-status")).to_have_text("One face found.")
    expect(panel.get_by_text("Faces found", exact=True)).to_be_visible()  # still said with the photo in the box
    shoot("01-enroll-captions")
    assert_no_traceback(page)


# ----- row 7: Verify points to the numbers drawn, not to a direction the photo may not have -----------------------
def test_verify_on_faces_stacked_top_to_bottom_points_to_the_numbers_drawn(page, shoot, stacked, portrait):
    panel = open_tab(page, "Verify")
    photos = panel.locator(IMAGE_INPUT)
    photos.nth(0).set_input_files(str(stacked))
    photos.nth(1).set_input_files(str(portrait(OBAMA, 1)))
    expect(page.locator("#verify-a-faces-note")).to_have_text(
        "2 faces found in the first photo: pick the one to compare by the number on its box.")
    expect(page.locator("#verify-a-faces img")).to_be_visible()  # the photo, each box with its number
    # the second photo's faces found too: pressing Compare before its upload is answered raced it (a loaded CI run
    # answered "the uploaded photo is no longer on the server")
    expect(page.locator("#verify-b-faces-note")).to_have_text("One face found.")
    panel.get_by_role("button", name="Compare").click()
    expect(page.locator("#verify-status")).to_have_text(
        "Error: The first photo has 2 faces: pick the one to compare under it, by the number on its box, then press "
        "Compare.")
    assert "left to right" not in panel.inner_text()
    shoot("01-stacked-faces", full_page=True)
    assert_no_toast(page)


# ----- rows 6 and 7: one Confirm on the page is one learned face, said plainly --------------------------------------
def test_a_confirm_on_the_page_is_a_learned_face_not_a_second_photo(app, page, shoot, portrait):
    panel = open_tab(page, "Identify")
    expect(panel.get_by_label("Or pin a score threshold (optional)")).to_have_value("8")
    panel.locator(IMAGE_INPUT).set_input_files(str(portrait(OBAMA, 3)))
    expect(page.locator("#identify-status")).to_have_text("")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(page.locator("#identify-status")).to_contain_text("#0 Barack Obama")
    page.locator("#confirm-sighting").click()
    expect(page.locator("#sighting-status")).to_contain_text("Learned as a template of this person")

    panel = open_tab(page, "Gallery")  # read again as the tab opens
    table = page.locator("#people-table")
    expect(table.get_by_role("columnheader")).to_contain_text(["id", "name", "photos", "learned", "enrolled"])
    ana = table.get_by_role("row").filter(has_text="Barack Obama")
    expect(ana.get_by_role("gridcell")).to_contain_text(["Barack Obama", "1", "1"])
    expect(page.locator("#people-faces figcaption").filter(has_text="Barack Obama")).to_have_text(
        "Barack Obama (1 photo, 1 learned)")

    name = panel.locator("#templates-name textarea, #templates-name input").first
    panel.get_by_role("button", name="Templates: the faces a person is recognised by").click()
    name.fill("Barack Obama")
    panel.get_by_role("button", name="Show templates").click()
    expect(page.locator("#templates-status")).to_contain_text("Barack Obama: 1 photo, 1 learned.")
    learned = page.locator("#templates-faces figcaption").filter(has_text="learned")
    expect(learned).to_contain_text(", confirmed on the page with no admin password set, ")
    assert "((" not in learned.inner_text() and "(the page" not in learned.inner_text(), learned.inner_text()
    shoot("01-learned-counted-apart", full_page=True)

    done = subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "read", "--home",
                           str(app.home), "--json"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    key = json.loads(done.stdout)["key"]
    with httpx.Client(base_url=f"{app.url}api/v1", timeout=120, trust_env=False) as api:
        (person,) = api.get("/people", params={"search": "Obama"}, headers={"X-API-Key": key}).json()["people"]
    assert (person["photos"], person["learned"]) == (2, 1)  # photos keeps its meaning; learned is added
    assert_no_toast(page)
    assert_no_traceback(page)


# ----- row 11: pairs far below the threshold are shown as the closest, not as confusable ----------------------------
def test_health_says_no_two_people_are_close_to_the_threshold(page, shoot):
    open_tab(page, "Health")  # read as the tab opens
    pairs = page.locator("#confusable-pairs")
    expect(pairs.get_by_role("heading")).to_contain_text(
        "No two people are close to the threshold (a cosine similarity of ")
    expect(pairs.get_by_role("heading")).to_contain_text("); the closest pairs by similarity:")
    assert "Most confusable" not in pairs.inner_text()
    assert 1 <= pairs.locator("figure.pair").count() <= 3
    shoot("01-closest-pairs", full_page=True)
    assert_no_traceback(page)
