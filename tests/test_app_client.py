"""The web app's API, end to end: `python app.py` in a subprocess, called through `gradio_client`.

Every `api_name` of facerec/ui.py is called at least once (detect, enroll, identify, verify, list, rename,
add_photo, health, export, import, delete) and its answer checked; errors must reach the client as exceptions
carrying the app's readable message; with FACEREC_ADMIN_PASSWORD set, enrolling, managing and listing need the
password while identifying does not (tests/test_security.py covers the rest of what the password guards).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from PIL import Image

from app_server import running_app
from gradio_client import Client, handle_file

GUL = "Barack_Obama"  # a shipped portrait (tests/faces): enrolled from photo 1, identified from photo 2 (0.78 apart)
OTHER = "Joe_Biden"  # a shipped portrait of someone else
POWELL = "Colin_Powell"  # LFW: enrolled, given a second and third photo, renamed, exported, deleted and imported back
ADMIN_PASSWORD = "correct horse battery staple"


def lfw(data_dir: Path, person: str, index: int) -> Path:
    path = data_dir / "lfw" / person / f"{person}_{index:04d}.jpg"
    assert path.is_file(), f"missing LFW photo {path}"
    return path


def call(client: Client, api_name: str, *args):
    return client.predict(*args, api_name=api_name)


def shown(picture: dict) -> Image.Image:
    """A picture the app answered with: sent inside the answer as a data: image (never a file on the server)."""
    import base64
    import io

    assert picture.get("path") is None and picture["url"].startswith("data:image/webp;base64,"), picture
    return Image.open(io.BytesIO(base64.b64decode(picture["url"].split(",", 1)[1])))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("client-app") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def client(app) -> Client:
    return Client(app.url, verbose=False)


@pytest.fixture(scope="module")
def gul(client, portrait) -> dict:
    """Barack Obama enrolled through the API; returns enroll's JSON."""
    crop, message, details = call(client, "/enroll", handle_file(str(portrait(GUL, 1))), "Barack Obama",
                                  None, False, "", "")
    assert "Enrolled **Barack Obama**" in message
    assert shown(crop).size == (112, 112)  # the aligned crop, inside the answer
    return details


@pytest.fixture
def text_file(tmp_path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("this is not a photo\n")
    return path


@pytest.fixture
def blank_photo(tmp_path) -> Path:
    path = tmp_path / "wall.png"
    Image.new("RGB", (320, 240), (128, 128, 128)).save(path)
    return path


# ----- one call per api_name ------------------------------------------------------------------------------
def test_detect_finds_one_face(client, portrait):
    picture, choices, note = call(client, "/detect", handle_file(str(portrait(GUL, 1))))
    assert shown(picture).size == Image.open(portrait(GUL, 1)).size
    assert choices["value"] == "face #0"
    assert [c[0] if isinstance(c, (list, tuple)) else c for c in choices["choices"]] == ["face #0"]
    assert note == "One face found."


def test_enroll_returns_the_person(gul):
    assert gul["name"] == "Barack Obama"
    assert gul["photos"] == 1
    assert gul["identity_id"] >= 1 and gul["face_id"] >= 1
    assert len(gul["face"]["box"]) == 4 and len(gul["face"]["landmarks"]) == 5
    assert gul["lookalikes"] == []


def test_identify_names_the_enrolled_person(client, gul, portrait):
    picture, table, summary, matches = call(client, "/identify", handle_file(str(portrait(GUL, 2))), 3.0, 3)
    assert shown(picture).size == Image.open(portrait(GUL, 2)).size
    assert len(matches) == 1
    assert matches[0]["name"] == "Barack Obama" and matches[0]["known"] is True
    assert matches[0]["similarity"] >= 0.6
    assert matches[0]["candidates"][0]["name"] == "Barack Obama"
    assert "Barack Obama" in summary and summary.startswith("1 face(s)")
    assert table["headers"][:4] == ["face", "name", "score", "strangers who score this high"]
    assert table["data"][0][1] == "Barack Obama"
    assert table["data"][0][2] == f"{matches[0]['score']:.2f}"  # the number the decision compared, one format
    assert "strangers score this high" in table["data"][0][3]


def test_identify_below_threshold_is_unknown(client, gul, portrait):
    _picture, _table, _summary, matches = call(client, "/identify", handle_file(str(portrait(GUL, 2))),
                                               12.0, 3)
    assert matches[0]["known"] is False and matches[0]["name"] == "unknown"
    assert matches[0]["candidates"][0]["name"] == "Barack Obama"  # still listed as the closest candidate


def _copies_kept(app, photo: Path) -> list[Path]:
    """Files in the app's home or its web cache (GRADIO_TEMP_DIR, beside the home here) holding `photo`'s bytes."""
    data = photo.read_bytes()
    files = [*app.home.rglob("*"), *app.home.with_name(app.home.name + "-gradio-tmp").rglob("*")]
    return [f for f in files if f.is_file() and f.stat().st_size == len(data) and f.read_bytes() == data]


def test_identify_and_verify_keep_no_copy_of_the_upload_once_answered(app, gul, portrait):
    """#29 row 3: an upload goes away when answered (it stayed up to 10 minutes in the web cache). Asking again
    about the same photo, at another threshold, still answers: the page keeps it in its session's memory."""
    client = Client(app.url, verbose=False)  # one session, as one open page
    photo, other = portrait(GUL, 2), portrait(OTHER, 1)
    upload = handle_file(str(photo))
    _picture, _table, _summary, matches = call(client, "/identify", upload, None, 3)
    assert matches[0]["name"] == "Barack Obama" and _copies_kept(app, photo) == []
    _picture, _table, _summary, again = call(client, "/identify", upload, 12.0, 3)  # the same photo, stricter
    assert again[0]["known"] is False and again[0]["candidates"][0]["name"] == "Barack Obama"
    message, result = call(client, "/verify", upload, handle_file(str(other)), None)
    assert result["same_person"] is False and _copies_kept(app, photo) == _copies_kept(app, other) == []
    message, result = call(client, "/verify", upload, handle_file(str(other)), -10.0)  # asked again, pinned
    assert result["same_person"] is True, message


def test_verify_same_person(client, portrait):
    message, result = call(client, "/verify", handle_file(str(portrait(GUL, 1))),
                           handle_file(str(portrait(GUL, 2))), 3.0)
    assert result["same_person"] is True
    assert result["similarity"] >= 0.6
    assert message.startswith("**Same person**")


def test_verify_different_people(client, portrait):
    message, result = call(client, "/verify", handle_file(str(portrait(GUL, 1))),
                           handle_file(str(portrait(OTHER, 1))), 3.0)
    assert result["same_person"] is False
    assert message.startswith("**Different people**")


def test_list_returns_the_person(client, gul):
    table, thumbnails, people = call(client, "/list", "obama")
    assert [p["name"] for p in people] == ["Barack Obama"]
    assert people[0]["photos"] == 1 and people[0]["face_ids"] == [gul["face_id"]]
    assert table["data"][0][1] == "Barack Obama"
    # Thumbnails: one HTML tile per person, the stored crop inside the page (never a file the server keeps).
    assert thumbnails.count("<figure>") == 1 and thumbnails.count('src="data:image/jpeg;base64,') == 1
    assert "<figcaption>Barack Obama (1 photo)</figcaption>" in thumbnails
    _table, _thumbnails, nobody = call(client, "/list", "no such person")
    assert nobody == []


def test_health_returns_the_metrics(client, gul):
    text, plot, pairs, report = call(client, "/health")
    assert report["identities"] >= 1 and report["faces"] >= 1
    assert "closest_is_positive_accuracy" in report
    assert set(report["median_distances"]) >= {"MedianDistance", "MedianClosestDistance",
                                               "MedianClosestPositiveDistance",
                                               "MedianClosestVsClosestPositiveDistance"}
    assert set(report["readings"]) >= {"closest_is_positive_accuracy", "MedianDistance"}
    assert "ClosestIsPositiveAccuracy" in text and "MedianDistance" in text
    assert isinstance(pairs, str)  # HTML tiles of the most confusable pairs (none with one person)
    assert plot is None or plot.get("type") == "matplotlib"


def test_merge_and_move_through_the_page_api(client, gul, data_dir):
    """#62 item 4 on the page: one person enrolled twice merged, then one face moved to a new person."""
    call(client, "/enroll", handle_file(str(lfw(data_dir, POWELL, 1))), "Colin Powell", None, False, "", "")
    call(client, "/enroll", handle_file(str(lfw(data_dir, POWELL, 2))), "C. Powell", None, True, "", "")
    message, merged = call(client, "/merge", "C. Powell", "Colin Powell", False, "")
    assert "Merged **C. Powell** into **Colin Powell**" in message and len(merged["moved_face_ids"]) == 1
    message, moved = call(client, "/move_face", merged["moved_face_ids"][0], "Powell later", False, "")
    assert moved["name"] == "Powell later" and "Powell later" in message
    for name in ("Colin Powell", "Powell later"):
        call(client, "/delete", name, True, "")


def test_manage_a_person_through_the_api(client, gul, data_dir, tmp_path):
    """enroll -> add_photo -> rename -> export -> delete -> import -> delete, checking each answer."""
    _crop, message, details = call(client, "/enroll", handle_file(str(lfw(data_dir, POWELL, 1))), "Colin Powell",
                                   None, False, "secretary of state", "")
    assert details["name"] == "Colin Powell" and "Enrolled **Colin Powell**" in message

    message, added = call(client, "/add_photo", "Colin Powell", handle_file(str(lfw(data_dir, POWELL, 2))), "")
    assert added["name"] == "Colin Powell" and added["photos"] == 2
    assert "Colin Powell" in message and "2 photos" in message

    message, renamed = call(client, "/rename", "Colin Powell", "General Powell", "")
    assert renamed["name"] == "General Powell" and renamed["photos"] == 2
    assert "General Powell" in message
    _table, _thumbs, people = call(client, "/list", "")
    assert sorted(p["name"] for p in people) == ["Barack Obama", "General Powell"]

    # two photos of one person: identify finds the new name; health now defines ClosestIsPositiveAccuracy
    _picture, _table, _summary, matches = call(client, "/identify", handle_file(str(lfw(data_dir, POWELL, 3))),
                                               3.0, 3)
    assert matches[0]["name"] == "General Powell"
    _text, _plot, _pairs, report = call(client, "/health")
    assert report["identities"] == 2 and report["faces"] == 3
    assert report["closest_is_positive_accuracy"] is not None

    export_path, message = call(client, "/export", True)
    assert message.startswith("Exported 3 faces.")
    with zipfile.ZipFile(export_path) as archive:
        names = set(archive.namelist())
    assert {"gallery.json", "embeddings.npy"} <= names and any(n.startswith("crops/") for n in names)
    kept = tmp_path / "facerec-gallery.zip"
    kept.write_bytes(Path(export_path).read_bytes())

    message, deleted = call(client, "/delete", "General Powell", True, "")
    assert deleted["name"] == "General Powell" and deleted["photos"] == 2
    assert "Deleted **General Powell**" in message
    _table, _thumbs, people = call(client, "/list", "")
    assert [p["name"] for p in people] == ["Barack Obama"]

    message, counts = call(client, "/import", handle_file(str(kept)), "")
    assert counts == {"added": 2, "skipped": 1}
    assert message == "Imported 2 face(s); 1 already present."
    _table, _thumbs, people = call(client, "/list", "powell")
    assert [(p["name"], p["photos"]) for p in people] == [("General Powell", 2)]

    message, deleted = call(client, "/delete", "General Powell", True, "")
    assert deleted["photos"] == 2
    _table, _thumbs, people = call(client, "/list", "")
    assert [p["name"] for p in people] == ["Barack Obama"]


def test_delete_needs_confirmation(client, gul):
    with pytest.raises(Exception, match="yes, delete"):
        call(client, "/delete", "Barack Obama", False, "")
    _table, _thumbs, people = call(client, "/list", "obama")
    assert len(people) == 1


# ----- errors reach the client as readable exceptions -----------------------------------------------------
def _message(error: BaseException) -> str:
    return str(error)


def test_identify_without_a_face_raises_readable_error(client, gul, blank_photo):
    with pytest.raises(Exception) as caught:
        call(client, "/identify", handle_file(str(blank_photo)), 3.0, 3)
    assert "no face found" in _message(caught.value).lower()
    assert "Traceback" not in _message(caught.value)


def test_identify_with_a_text_file_raises_readable_error(client, gul, text_file):
    """A non-image upload must come back as the app's own message, not Gradio's generic 'has raised an exception'
    (which is what a failure inside gr.Image's preprocessing gives with show_error=False)."""
    with pytest.raises(Exception) as caught:
        call(client, "/identify", handle_file(str(text_file)), 3.0, 3)
    message = _message(caught.value)
    assert "Traceback" not in message
    assert "has not enabled verbose error reporting" not in message, message
    assert "image" in message.lower() or "photo" in message.lower(), message


def test_enroll_errors_are_readable(client, gul, portrait):
    with pytest.raises(Exception, match="already enrolled"):
        call(client, "/enroll", handle_file(str(portrait(GUL, 1))), "Barack Obama", None, False, "", "")
    with pytest.raises(Exception, match="name is required"):
        call(client, "/enroll", handle_file(str(portrait(GUL, 3))), "   ", None, False, "", "")
    with pytest.raises(Exception, match="(?i)no enrolled person called"):
        call(client, "/rename", "Nobody Here", "Somebody", "")


# ----- admin password -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def admin_client(tmp_path_factory) -> Client:
    with running_app(tmp_path_factory.mktemp("admin-app") / "home", admin_password=ADMIN_PASSWORD) as running:
        yield Client(running.url, verbose=False)


def test_admin_password_protects_enrollment_but_not_identification(admin_client, portrait):
    photo = handle_file(str(portrait(GUL, 1)))
    for password in ("", "wrong password"):
        with pytest.raises(Exception) as caught:
            call(admin_client, "/enroll", photo, "Barack Obama", None, False, "", password)
        assert "admin password" in _message(caught.value)
    _table, _thumbs, people = call(admin_client, "/list", "", ADMIN_PASSWORD)
    assert people == []

    # identification needs no password (nobody is enrolled yet: the face is unknown)
    _picture, _table, summary, matches = call(admin_client, "/identify", handle_file(str(portrait(GUL, 2))),
                                              3.0, 3)
    assert len(matches) == 1 and matches[0]["known"] is False and matches[0]["candidates"] == []

    _crop, message, details = call(admin_client, "/enroll", photo, "Barack Obama", None, False, "", ADMIN_PASSWORD)
    assert details["name"] == "Barack Obama"
    _picture, _table, _summary, matches = call(admin_client, "/identify",
                                               handle_file(str(portrait(GUL, 2))), 3.0, 3)
    assert matches[0]["name"] == "Barack Obama"

    for api_name, args in (("/rename", ("Barack Obama", "Someone Else")), ("/delete", ("Barack Obama", True)),
                           ("/add_photo", ("Barack Obama", handle_file(str(portrait(GUL, 2)))))):
        with pytest.raises(Exception, match="admin password"):
            call(admin_client, api_name, *args, "")
    _table, _thumbs, people = call(admin_client, "/list", "", ADMIN_PASSWORD)
    assert [(p["name"], p["photos"]) for p in people] == [("Barack Obama", 1)]
