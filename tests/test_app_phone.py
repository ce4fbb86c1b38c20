"""#51 item 4 in a real browser at 390 px (a phone): every reading of the Health tab and every column of the Gallery
tab's people table is readable, nothing cut at the screen's edge, no reading one word per line.

Three people are enrolled (one with a long name), so the Health tab has all its figures and the table all its
columns. The same checks at 1280 px pass too (the layout there is unchanged); at 390 px the old three-column
figures table put "what it means" one word per line and cut it, which the checks below measure."""

from __future__ import annotations

import pytest

from app_server import running_app
from browser_helpers import TIMEOUT_MS, assert_no_traceback, expect, open_tab

from facerec.gallery import Gallery
from facerec.settings import Settings

PHONE = {"width": 390, "height": 844}
PEOPLE = (("Barack_Obama", "Barack Hussein Obama"), ("Joe_Biden", "Joseph Robinette Biden"),
          ("Grace_Hopper", "Grace Brewster Murray Hopper"))  # shipped portraits (tests/faces), one long name

# Every element inside `root` (a CSS selector) whose content is wider than its box and not scrollable there, or
# that reaches past the right edge of the screen: what a reader would find cut off. An element that scrolls on
# purpose (overflow auto/scroll) counts when it does scroll sideways: a table to be swiped is not readable at once.
CLIPPED_JS = """(root) => {
  const out = [];
  const width = document.documentElement.clientWidth;
  for (const el of document.querySelector(root).querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height) continue;  // hidden
    const style = getComputedStyle(el);
    const wider = el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible';
    if (wider || box.right > width + 1) {
      out.push(`${el.tagName}.${el.className} '${(el.innerText || '').slice(0, 40)}' right ${Math.round(box.right)}`
               + ` scroll ${el.scrollWidth}/${el.clientWidth}`);
    }
  }
  return out;
}"""

# For each element matched by the selector with at least `words` words: (its text, its line count, its word count).
LINES_JS = """([selector, words]) => Array.from(document.querySelectorAll(selector)).flatMap((el) => {
  const text = el.innerText.trim();
  const count = text.split(/\\s+/).length;
  if (count < words) return [];
  const tops = new Set();  // the lines its text is laid on: the tops of its text's own boxes, not its elements'
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    if (!walker.currentNode.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(walker.currentNode);
    for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
  }
  return [[text.slice(0, 60), tops.size, count]];
})"""


@pytest.fixture(scope="module")
def app(tmp_path_factory, portrait):
    home = tmp_path_factory.mktemp("phone-app") / "home"
    with Gallery(Settings(home=home)) as gallery:
        for folder, name in PEOPLE:
            gallery.enroll(portrait(folder, 1), name, allow_low_quality=True)
    with running_app(home) as running:
        yield running


@pytest.fixture
def phone(browser, app):
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(app.url, timeout=TIMEOUT_MS)
    expect(page.get_by_role("tab", name="Enroll")).to_be_visible()
    try:
        yield page
    finally:
        context.close()


def assert_readable(page, root: str, cells: str) -> None:
    """Nothing under `root` is cut off, and no cell of `cells` with several words is laid one word per line."""
    assert page.evaluate(CLIPPED_JS, root) == [], f"cut off at {PHONE['width']} px"
    measured = page.evaluate(LINES_JS, [cells, 6])
    assert measured, f"no reading of 6 words or more in {cells}: nothing was measured"
    narrow = [(text, lines, words) for text, lines, words in measured if lines * 2 > words]
    assert narrow == [], f"readings at about one or two words a line (text, lines, words): {narrow}"


def test_every_health_reading_is_readable_on_a_phone(phone, shots):
    open_tab(phone, "Health")  # read as the tab opens
    report = phone.locator("#health-report")
    expect(report).to_contain_text("ClosestIsPositiveAccuracy")
    phone.screenshot(path=str(shots / "01-health-390.png"), full_page=True)
    assert_readable(phone, "#health-report", "#health-report td")
    # Each reading still says which column it is, now that the header row is not above it.
    expect(report.locator("td[data-label='what it means']").first).to_be_visible()
    # #64 row 9: with no sightings yet there is no trend to draw, and no empty plot box with a broken-picture icon
    expect(phone.locator("#sightings-trend")).to_be_hidden()
    assert_no_traceback(phone)


def test_every_column_of_the_people_table_is_readable_on_a_phone(phone, shots):
    open_tab(phone, "Gallery")
    expect(phone.locator("#people-status")).to_have_text("3 people enrolled.")
    table = phone.locator("#people-table")
    expect(table).to_contain_text("Grace Brewster Murray Hopper")
    phone.screenshot(path=str(shots / "02-gallery-390.png"), full_page=True)
    assert phone.evaluate(CLIPPED_JS, "#people-table") == [], f"cut off at {PHONE['width']} px"
    for header in ("id", "name", "photos", "learned", "enrolled"):  # every column in sight, not scrolled to
        cell = table.get_by_role("columnheader", name=header, exact=True)
        expect(cell).to_be_in_viewport()
    # No word is broken across lines: a header or a date on one line, a name wrapped only between its words.
    for text, lines, words in phone.evaluate(LINES_JS, ["#people-table [role=columnheader], "
                                                        "#people-table [role=gridcell]", 1]):
        assert lines <= words, f"'{text}' is broken inside a word: {lines} lines for {words} word(s)"
    assert_no_traceback(phone)
