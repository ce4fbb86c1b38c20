"""The web app in a real browser: Playwright (sync API) driving Debian's Chromium against `python app.py`.

Through the page: enroll one photo, identify the person's other photo (the threshold shown in stranger-match
terms: the accepted rate, the threshold it implies for this gallery, the expected rate and a plain sentence),
read the gallery health report and the plot of the threshold as the gallery grows; and
check that bad uploads (no face, not an image) end in a readable message next to the button, never a
traceback, a toast or a bare "Error". A screenshot of every step is taken (`browser_helpers`: where they go).
tests/test_app_pages.py covers the page staying true (gallery view, errors replacing results, Verify's choice
of face, sizes).
"""

from __future__ import annotations

import re

import pytest
from PIL import Image

from app_server import running_app
from browser_helpers import IMAGE_INPUT, assert_no_toast, assert_no_traceback, expect, open_tab, toast_text

# Shipped public-domain portraits (tests/faces): they run on a clone without the research datasets.
PERSON, NAME = "Barack_Obama", "Barack Obama"  # photo 1 enrolled, photo 2 identified (similarity 0.78 > ~0.61)
OTHER = "Joe_Biden"  # one photo: enrolled under a hostile name, and identified from that photo
STRANGER = "Grace_Hopper"  # never enrolled


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("browser-app") / "home") as running:
        yield running


def _threshold(sentence: str) -> float:
    """The score threshold a policy sentence states ('Score threshold 5.15, set for ...')."""
    return float(sentence.split("Score threshold", 1)[1].split()[0].rstrip(","))


# ----- the happy path ------------------------------------------------------------------------------------
def test_enroll_identify_and_health_through_the_page(app, page, shoot, portrait):
    shoot("01-loaded")

    # Enroll: upload -> faces drawn and one face found -> type the name -> Enroll -> success message
    panel = open_tab(page, "Enroll")
    panel.locator(IMAGE_INPUT).set_input_files(str(portrait(PERSON, 1)))
    expect(panel.get_by_text("One face found.")).to_be_visible()
    shoot("02-enroll-detected")
    panel.get_by_label("Name", exact=True).fill(NAME)
    panel.get_by_role("button", name="Enroll", exact=True).click()
    status = page.locator("#enroll-status")
    expect(status).to_contain_text(f"Enrolled {NAME}")
    expect(status).to_contain_text("The gallery now has 1 person")
    expect(page.locator("#enroll-quality")).to_contain_text("Enrollment quality")
    assert panel.inner_text().count("Enrollment quality") == 1  # said once, in its note (#31 item 6)
    shoot("03-enrolled")
    assert_no_traceback(page)

    # Identify: the threshold note speaks in stranger-match terms for this one-person gallery
    panel = open_tab(page, "Identify")
    note = page.locator("#identify-threshold-note")
    expect(note).to_contain_text("set for an accepted stranger-match rate of 1%, for a gallery of 1 person "
                                 "(1 enrolled face)")
    expect(note).to_contain_text("Expected stranger-match rate 1%")
    expect(note).to_contain_text("people who are not enrolled would wrongly be given a name")
    default_note = note.inner_text()
    panel.get_by_label("number input for Accepted stranger-match rate (%)").fill("5")
    panel.get_by_label("number input for Accepted stranger-match rate (%)").press("Enter")
    expect(note).to_contain_text("accepted stranger-match rate of 5%")
    assert _threshold(note.inner_text()) < _threshold(default_note)  # a looser rate, a lower threshold
    panel.get_by_label("number input for Accepted stranger-match rate (%)").fill("1")
    panel.get_by_label("number input for Accepted stranger-match rate (%)").press("Enter")
    expect(note).to_contain_text("accepted stranger-match rate of 1%")
    shoot("04a-identify-policy")

    # Identify: the other photo of the same person -> the name in the status line and in the table
    panel.locator(IMAGE_INPUT).set_input_files(str(portrait(PERSON, 2)))
    expect(panel.locator("img").first).to_be_visible()  # the uploaded photo's preview
    shoot("04-identify-uploaded")
    panel.get_by_role("button", name="Identify", exact=True).click()
    status = page.locator("#identify-status")
    expect(status).to_contain_text(f"1 face(s): #0 {NAME}")
    # The threshold's sentence is said once (#31 item 6): in the note, for the rule this answer used.
    expect(note).to_contain_text(f"Score threshold {_threshold(default_note):.2f}, set for an accepted "
                                 "stranger-match rate of 1%")
    expect(status).not_to_contain_text("Score threshold")
    assert panel.inner_text().count("Score threshold") == 1
    table = panel.get_by_role("grid", name="Top candidates per face")
    expect(table).to_contain_text(NAME)
    shoot("05-identified")
    assert_no_traceback(page)

    # Asked again about the photo on the page, at a pinned 12: answered ("unknown"), though the server deleted
    # the upload once answered (#29 row 3): the page's session keeps it in memory, not on disk.
    photo = portrait(PERSON, 2).read_bytes()
    web_cache = app.home.with_name(app.home.name + "-gradio-tmp")
    assert not [f for f in web_cache.rglob("*") if f.is_file() and f.read_bytes() == photo]
    pin = panel.get_by_label("Or pin a score threshold (optional)")
    pin.fill("12")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(status).to_contain_text("1 face(s): #0 unknown")
    pin.fill("")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(status).to_contain_text(f"1 face(s): #0 {NAME}")
    assert_no_traceback(page)

    # Health: the metrics table; the identification is a sighting, a second face of the person, so the
    # positive-based figures are defined and say what they rest on
    panel = open_tab(page, "Health")
    panel.get_by_role("button", name="Check gallery health").click()
    report = page.locator("#health-report")
    expect(report).to_contain_text("ClosestIsPositiveAccuracy")
    expect(report).to_contain_text("MedianDistance")
    expect(report).to_contain_text("1 person, 1 face")
    expect(report).to_contain_text("100.0% of faces whose person has several photos")
    expect(report).to_contain_text("Over 1 enrolled face and 1 sighting of 1 person")
    expect(report).to_contain_text("Undefined: fewer than two people.")
    expect(page.locator("#sightings-report")).to_contain_text("rest on 1 enrolled face and 1 sighting")
    growth = page.locator("#policy-growth")
    expect(growth).to_contain_text("The threshold as the gallery grows")
    # a real table, not a code block of pipes (it showed as raw text)
    expect(growth.locator("table td", has_text="1,000,000")).to_be_visible()
    expect(growth.locator("pre")).to_have_count(0)
    # the growth plot (matplotlib), its title drawn in it: no label badge over it (#64 row 9)
    expect(page.locator("#growth-plot img[src^='data:image/png']")).to_be_visible()
    shoot("06-health", full_page=True)
    assert_no_traceback(page)


# ----- bad uploads end in a readable message -------------------------------------------------------------
def test_identify_photo_without_a_face_shows_a_message(page, shoot, tmp_path):
    wall = tmp_path / "wall.png"
    Image.new("RGB", (320, 240), (128, 128, 128)).save(wall)
    panel = open_tab(page, "Identify")
    panel.locator(IMAGE_INPUT).set_input_files(str(wall))
    expect(panel.locator("img").first).to_be_visible()
    shoot("01-no-face-uploaded")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(page.locator("#identify-status")).to_contain_text("Error: No face found in the photo")
    shoot("02-no-face-message")
    assert_no_toast(page)
    assert_no_traceback(page)


def test_identify_text_file_shows_a_message(page, shoot, tmp_path):
    """A .txt is refused by the upload widget itself; Identify then asks for a photo."""
    notes = tmp_path / "notes.txt"
    notes.write_text("this is not a photo\n")
    panel = open_tab(page, "Identify")
    panel.locator(IMAGE_INPUT).set_input_files(str(notes))
    assert "Invalid file type" in toast_text(page)
    shoot("01-text-file-refused")
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(page.locator("#identify-status")).to_contain_text("Error: Upload a photo first.")
    shoot("02-text-file-message")
    assert_no_traceback(page)


def test_identify_corrupt_image_file_shows_a_message(page, shoot, tmp_path):
    """Text named .jpg passes the upload widget's type check and reaches the server: the page must say the file
    is not a readable image (not just mark the outputs 'Error' with no explanation)."""
    fake = tmp_path / "holiday.jpg"
    fake.write_text("this is not a photo\n")
    panel = open_tab(page, "Identify")
    panel.locator(IMAGE_INPUT).set_input_files(str(fake))
    status = page.locator("#identify-status")
    # Said on upload, as Enroll and Verify do (#31 item 3), before Identify is pressed...
    expect(status).to_contain_text("Error: holiday.jpg is not an image")  # the user's file name, as it is
    shoot("01-corrupt-uploaded")
    panel.get_by_role("button", name="Identify", exact=True).click()
    # ...and one clear line again when pressed: the bad file's reason, or, once the page has taken it out of the
    # photo box (#42 item 8: no broken-image icon), that there is no photo. Which one depends on whether the box
    # was emptied in the browser before the click (seen both ways in CI).
    expect(status).to_contain_text(re.compile(r"Error: (holiday\.jpg is not an image|Upload a photo first)"))
    shoot("02-corrupt-message")
    assert_no_toast(page)
    assert_no_traceback(page)


# ----- names are text, never markup (issue #12, item 9) --------------------------------------------------------
@pytest.fixture
def beacon():
    """A local web server that counts what browsers fetch from it: a name must never make the page load it."""
    import http.server
    import threading

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server API
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()


def test_a_name_with_markdown_and_html_is_shown_as_text(page, shoot, portrait, beacon):
    """The name is shown literally wherever it appears (what it asserts is the name, so the photo identified is
    the one enrolled: the only shipped photo of this person)."""
    port, hits = beacon
    name = f"![t](http://127.0.0.1:{port}/md.png) <img src=http://127.0.0.1:{port}/html.png> *bold*"
    panel = open_tab(page, "Enroll")
    panel.locator(IMAGE_INPUT).set_input_files(str(portrait(OTHER, 1)))
    expect(panel.get_by_text("One face found.")).to_be_visible()
    panel.get_by_label("Name", exact=True).fill(name)
    panel.get_by_role("button", name="Enroll", exact=True).click()
    status = page.locator("#enroll-status")
    expect(status).to_contain_text(f"Enrolled {name}")  # the name, literally
    shoot("01-enrolled")

    panel = open_tab(page, "Gallery")  # an error line quoting the name; the list and its thumbnail show it too
    expect(page.locator("#people-faces")).to_contain_text(name)
    panel.get_by_role("button", name="Rename").first.click()  # opens the accordion
    panel.get_by_label("Current name").fill(name + " 2")
    panel.get_by_label("New name").fill("Someone")
    panel.get_by_role("button", name="Rename", exact=True).last.click()
    expect(page.locator("#rename-status")).to_contain_text(f"No enrolled person called '{name} 2'")
    shoot("02-error-line")

    panel = open_tab(page, "Identify")
    panel.locator(IMAGE_INPUT).set_input_files(str(portrait(OTHER, 1)))
    expect(panel.locator("img").first).to_be_visible()
    panel.get_by_role("button", name="Identify", exact=True).click()
    expect(page.locator("#identify-status")).to_contain_text(f"1 face(s): #0 {name}")
    shoot("03-identified")

    page.wait_for_timeout(1000)
    assert page.locator(f"img[src*='{port}']").count() == 0
    assert page.locator("#enroll-status em, #identify-status em, #rename-status em").count() == 0
    assert page.locator("#people-faces img[alt]").count() >= 1  # the name as alt text, escaped
    assert hits == [], f"the page fetched {hits} from the name's URLs"


# ----- #31 items 1 and 8: the API's docs offline; labels readable at phone width ------------------------------
def test_the_api_docs_render_with_nothing_from_the_internet(browser, app):
    """Swagger UI's script and style come from the package: with every request off this machine refused, the page
    still renders the API (#31 item 1: it was a blank page offline)."""
    from browser_helpers import TIMEOUT_MS

    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []

    def only_local(route):
        if route.request.url.startswith(app.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    try:
        page.goto(f"{app.url}api/v1/docs", timeout=TIMEOUT_MS)
        expect(page.get_by_text("facerec REST API").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.get_by_text("/people/{person_id}").first).to_be_visible(timeout=TIMEOUT_MS)
        assert outside == []
    finally:
        context.close()


def test_box_labels_stay_readable_at_phone_width(browser, app, portrait, tmp_path):
    """#31 item 8: a large group photo, identified on a 390 px-wide screen: the label drawn over a face, as the
    page shows the picture, is at least 11 px high."""
    import io

    import numpy as np

    from browser_helpers import TIMEOUT_MS

    faces = [Image.open(portrait(PERSON, 1)).convert("RGB").resize((800, 800)),
             Image.open(portrait(STRANGER, 1)).convert("RGB").resize((800, 800))]
    group = Image.new("RGB", (1600, 800))
    for i, face in enumerate(faces):
        group.paste(face, (800 * i, 0))
    photo = tmp_path / "group.jpg"
    group.save(photo, quality=90)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        page.goto(app.url, timeout=TIMEOUT_MS)
        panel = open_tab(page, "Identify")
        panel.locator(IMAGE_INPUT).set_input_files(str(photo))
        panel.get_by_role("button", name="Identify", exact=True).click()
        expect(page.locator("#identify-status")).to_contain_text("face(s)")
        shown = panel.locator('img[alt="Who is who"]')  # sent inside the page: a data: image, no file
        expect(shown).to_be_visible()
        natural = shown.evaluate("img => img.naturalWidth")
        displayed = shown.bounding_box()["width"]
        import base64

        source = shown.get_attribute("src")
        assert source.startswith("data:image/webp;base64,")
        shown_bytes = base64.b64decode(source.split(",", 1)[1])
        pixels = np.asarray(Image.open(io.BytesIO(shown_bytes)).convert("RGB")).astype(int)
        label = np.all(np.abs(pixels - np.array([230, 60, 60])) < 40, axis=2) | \
            np.all(np.abs(pixels - np.array([40, 200, 80])) < 40, axis=2)
        rows = np.flatnonzero(label.sum(axis=1) > 0.1 * pixels.shape[1] / 2)  # a label's fill spans its width
        tallest = max((len(run) for run in np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)), default=0)
        assert natural == pixels.shape[1] and displayed < natural  # the page shrinks the photo to the screen
        assert tallest * displayed / natural >= 11, (tallest, displayed, natural)
    finally:
        context.close()


def test_the_boxes_follow_a_rename_and_a_delete(page, lfw_photo):
    """#64 row 7: after Rename the "current name" box still held the old name, after Delete the name box still
    held the deleted person."""
    panel = open_tab(page, "Enroll")
    panel.locator(IMAGE_INPUT).set_input_files(str(lfw_photo("Colin_Powell", 1)))
    expect(panel.get_by_text("One face found.")).to_be_visible()
    panel.get_by_label("Name", exact=True).fill("Colin Powell")
    panel.get_by_role("button", name="Enroll", exact=True).click()
    expect(page.locator("#enroll-status")).to_contain_text("Enrolled Colin Powell")
    panel = open_tab(page, "Gallery")
    panel.get_by_role("button", name="Rename").first.click()
    panel.get_by_label("Current name").fill("Colin Powell")
    panel.get_by_label("New name").fill("General Powell")
    panel.get_by_role("button", name="Rename", exact=True).last.click()
    expect(page.locator("#rename-status")).to_contain_text("Renamed to General Powell")
    expect(panel.get_by_label("Current name")).to_have_value("General Powell")
    expect(panel.get_by_label("New name")).to_have_value("")
    panel.get_by_role("button", name="Delete").first.click()
    panel.locator("#delete-name textarea, #delete-name input").first.fill("General Powell")
    panel.get_by_label("Yes, delete this person and all their photos").check()
    panel.get_by_role("button", name="Delete", exact=True).last.click()
    expect(page.locator("#delete-status")).to_contain_text("Deleted General Powell")
    expect(panel.locator("#delete-name textarea, #delete-name input").first).to_have_value("")
    expect(panel.get_by_label("Current name")).to_have_value("")
