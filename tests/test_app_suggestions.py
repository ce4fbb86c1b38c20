"""#41 item 4 against `python app.py` with FACEREC_SUGGESTIONS=on and an admin password: the REST routes are for
admin keys only (a read key gets 403, no key 401), and in a real browser a stranger seen three times is
suggested in the Gallery tab, named there, enrolled (the tab's people list shows them at once), and named by the
next identify.

Ana Guevara is enrolled. Andre Agassi (photos 1-3, REST) and Alvaro Uribe (photos 1-3, the page) are not: each
comes back unknown three times, from three photos, and their faces match each other at the grouping threshold."""

from __future__ import annotations

import base64

import httpx
import pytest

from api_client import create_key
from app_server import running_app
from browser_helpers import assert_no_toast, assert_no_traceback, expect, identify_one_face, lfw, open_gallery_as_admin

from facerec.gallery import Gallery
from facerec.settings import Settings

PASSWORD = "open sesame"
URIBE, AGASSI = "Alvaro_Uribe", "Andre_Agassi"


@pytest.fixture(scope="module")
def app(tmp_path_factory, data_dir):
    home = tmp_path_factory.mktemp("suggestions-app") / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(lfw(data_dir, "Ana_Guevara", 1), "Ana Guevara")
    with running_app(home, admin_password=PASSWORD, extra_env={"FACEREC_SUGGESTIONS": "on"}) as running:
        yield running


def test_only_an_admin_key_sees_names_or_dismisses_suggestions(app, data_dir):
    admin, read = {"X-API-Key": create_key(app.home, "admin", "admin")["key"]}, {"X-API-Key": create_key(app.home, "read", "read")["key"]}
    with httpx.Client(base_url=f"{app.url}api/v1", timeout=120, trust_env=False) as api:
        for index in (1, 2, 3):
            photo = lfw(data_dir, AGASSI, index)
            found = api.post("/identify", files={"photo": (photo.name, photo.read_bytes(), "image/jpeg")},
                             headers=read).json()
            assert [face["name"] for face in found["faces"]] == ["unknown"]
        for headers, status in (({}, 401), (read, 403)):
            for method, path in (("get", "/suggestions"), ("get", "/suggestions/1/faces"),
                                 ("delete", "/suggestions/1")):
                assert api.request(method, path, headers=headers).status_code == status
            assert api.post("/suggestions/1/name", json={"name": "x"}, headers=headers).status_code == status
        listed = api.get("/suggestions", headers=admin).json()
        assert listed["on"] and listed["off_because"] is None
        assert (listed["total"], listed["offset"], listed["limit"], listed["refreshing"]) == (1, 0, 20, False)
        assert api.get("/suggestions", params={"limit": 101}, headers=admin).status_code == 422  # a bounded page
        assert api.get("/suggestions", params={"offset": 1}, headers=admin).json()["suggestions"] == []
        (suggestion,) = listed["suggestions"]
        assert (suggestion["faces"], suggestion["photos"]) == (3, 3)
        faces = api.get(f"/suggestions/{suggestion['id']}/faces", headers=admin).json()["faces"]
        assert [f["face_id"] for f in faces] == suggestion["face_ids"]
        assert all(base64.b64decode(f["jpeg_base64"])[:3] == b"\xff\xd8\xff" for f in faces)
        assert api.delete(f"/suggestions/{suggestion['id']}", headers=admin).json()["forgotten"] == 3
        assert api.get("/suggestions", headers=admin).json()["suggestions"] == []
        missing = api.post(f"/suggestions/{suggestion['id']}/name", json={"name": "Andre Agassi"}, headers=admin)
        assert missing.status_code == 404 and missing.json()["code"] == "unknown_suggestion"


def show_suggestions_once_grouped(page, panel, tries: int = 20) -> None:
    """Press Show suggestions until the kept faces are grouped. Grouping runs in the background after each kept
    face; on a loaded 2-core CI machine it can still be running when the button is first pressed, and the page then
    says so and asks to press again (seen in CI at 412e126), which is what a user would do."""
    status = page.locator("#suggestions-status")
    panel.get_by_role("button", name="Show suggestions").click()
    expect(status).to_contain_text("suggest")  # the first answer, grouped or not
    for _ in range(tries):
        try:
            expect(status).not_to_contain_text("being grouped", timeout=3000)
            return
        except AssertionError:
            panel.get_by_role("button", name="Show suggestions").click()
    raise AssertionError(f"the kept faces were still being grouped after {tries} presses")


def test_a_suggestion_named_in_the_gallery_tab_is_enrolled(page, shoot, data_dir):
    for index in (1, 2, 3):
        assert "#0 unknown" in identify_one_face(page, lfw(data_dir, URIBE, index))
    panel = open_gallery_as_admin(page, PASSWORD, "1 person enrolled.")
    panel.get_by_role("button", name="Suggested people: seen again and again, not enrolled").click()
    show_suggestions_once_grouped(page, panel)
    expect(page.locator("#suggestions-status")).to_contain_text("1 suggested person. Pick one")
    expect(page.locator("#suggestions-faces")).to_contain_text("seen 3 times in 3 photos, not enrolled")
    page.locator("#suggestions-choice").get_by_role("combobox").click()
    page.get_by_role("option").filter(has_text="seen 3 times").first.click()
    expect(page.locator("#suggestion-faces img")).to_have_count(3)  # every face of the group, to check them
    shoot("01-suggested", full_page=True)

    page.locator("#suggestion-name textarea, #suggestion-name input").first.fill("Alvaro Uribe")
    panel.get_by_role("button", name="Enroll with this name").click()
    expect(page.locator("#suggestions-status")).to_contain_text("Enrolled Alvaro Uribe from 3 photos.")
    expect(page.locator("#suggestions-status")).to_contain_text("No suggestions yet")
    # The Gallery tab's list above follows at once, with no reload and no tab switch (#51 item 1).
    expect(page.locator("#people-status")).to_have_text("2 people enrolled.")
    expect(page.locator("#people-table")).to_contain_text("Alvaro Uribe")
    expect(page.locator("#people-faces figcaption").filter(has_text="Alvaro Uribe")).to_have_text(
        "Alvaro Uribe (3 photos)")
    shoot("02-named", full_page=True)
    assert "#0 Alvaro Uribe" in identify_one_face(page, lfw(data_dir, URIBE, 5))  # enrolled: named now
    assert_no_toast(page)
    assert_no_traceback(page)
