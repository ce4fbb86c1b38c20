"""The admin password: it accepts any Unicode, limits guessing and is not read from `ps`; with it set, the web
app shows no face, name or embedding without it, shows names as text (never markup), and serves nothing of a
deleted person; five wrong guesses lock out."""

from __future__ import annotations
import importlib.util
import stat
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
import pytest
from facerec.access.admin import AdminGuard
from facerec.settings import ServerSettings
from facerec.errors import AccessDenied

from hardening import (  # noqa: F401 - pytest finds the shared fixtures by name in this module
    BUSH, REPO_ROOT, SERENA, display,
)


def test_password_check_accepts_any_unicode_and_limits_guessing():
    now = [1000.0]
    guard = AdminGuard("pässwörd 🔑", max_failures=5, window_s=60, clock=lambda: now[0])
    guard.check("pässwörd 🔑", "10.0.0.1")
    guard.check("pa\u0308sswo\u0308rd 🔑", "10.0.0.1")  # the same password, decomposed (NFD)
    with pytest.raises(AccessDenied, match="needs the admin password"):
        guard.check("", "10.0.0.1")  # not a guess: does not count
    for guess in ("wrong", "pässwörd", "ü" * 5, "🔑", "x"):
        with pytest.raises(AccessDenied, match="Wrong admin password"):
            guard.check(guess, "10.0.0.1")
    with pytest.raises(AccessDenied, match="Too many wrong admin passwords.*60 s"):
        guard.check("pässwörd 🔑", "10.0.0.1")  # locked out: even the right password
    guard.check("pässwörd 🔑", "10.0.0.2")  # another client is not
    now[0] += 61
    guard.check("pässwörd 🔑", "10.0.0.1")
    assert AdminGuard(None).is_admin("", "x") and not AdminGuard("pw").is_admin("", "x")


def test_app_help_says_to_use_the_environment_variable():
    spec = importlib.util.spec_from_file_location("facerec_app", REPO_ROOT / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    help_text = app.build_parser().format_help()
    assert "FACEREC_ADMIN_PASSWORD" in help_text and "ps" in help_text
    args = app.build_parser().parse_args(["--admin-password", "secret"])
    password, warnings = app.admin_password(args, ServerSettings())
    assert password == "secret" and "ps" in warnings[0]
    password, warnings = app.admin_password(app.build_parser().parse_args([]),
                                            ServerSettings.from_env({"FACEREC_ADMIN_PASSWORD": "pw"}))
    assert password == "pw" and warnings == []
    _password, warnings = app.admin_password(app.build_parser().parse_args(["--host", "0.0.0.0"]), ServerSettings())
    assert "no admin password" in warnings[0]


ADMIN_PASSWORD = "Grüße, Ålesund — 🔑 (not ASCII)"


BEACON = "![t](http://127.0.0.1:9/t.png) <img src=x onerror=alert(1)> *Bush*"


@pytest.fixture(scope="module")
def admin_app(tmp_path_factory):
    from app_server import running_app

    root = tmp_path_factory.mktemp("admin-app")
    private_tmp = root / "tmp"
    private_tmp.mkdir()
    with running_app(root / "home", admin_password=ADMIN_PASSWORD,
                     extra_env={"TMPDIR": str(private_tmp)}) as running:
        running.private_tmp = private_tmp
        running.gradio_tmp = root / "home-gradio-tmp"
        yield running


@pytest.fixture(scope="module")
def admin_client(admin_app):
    from gradio_client import Client

    return Client(admin_app.url, verbose=False, download_files=False)


def _call(client, api_name, *args):
    return client.predict(*args, api_name=api_name)


def _path(file_data) -> str:
    """The server-side path of a file output (the client downloads nothing: `download_files=False`)."""
    return file_data["path"] if isinstance(file_data, dict) else file_data.path


def _get(app, server_path: str) -> int:
    try:
        with urllib.request.urlopen(f"{app.url}gradio_api/file={server_path}", timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _upload_path(app, photo: Path) -> Path:
    """Where Gradio keeps an upload: a folder named by the seeded sha256 of its bytes (same install, same seed)."""
    from gradio.processing_utils import hash_bytes

    return app.gradio_tmp / hash_bytes(photo.read_bytes()) / photo.name


def test_without_the_password_no_faces_names_or_embeddings(admin_app, admin_client, lfw_photo, tmp_path):
    from gradio_client import handle_file

    bush, powell = lfw_photo(BUSH, 1), lfw_photo("Colin_Powell", 1)
    some_zip = tmp_path / "gallery.zip"
    with zipfile.ZipFile(some_zip, "w") as archive:
        archive.writestr("gallery.json", "{}")
    _crop, message, _ = _call(admin_client, "/enroll", handle_file(str(bush)), display(BUSH), None, False, "",
                              ADMIN_PASSWORD)
    _call(admin_client, "/enroll", handle_file(str(powell)), "Colin Powell", None, False, "", ADMIN_PASSWORD)
    for api_name, args in (("/list", ("",)), ("/health", ()), ("/export", (True,)),
                           ("/enroll", (handle_file(str(lfw_photo(SERENA, 1))), "Serena", None, False, "")),
                           ("/add_photo", (display(BUSH), handle_file(str(lfw_photo(BUSH, 2))))),
                           ("/rename", (display(BUSH), "Someone")), ("/delete", (display(BUSH), True)),
                           ("/merge", (display(BUSH), "Colin Powell", False)), ("/move_face", (1, "Colin Powell", False)),
                           ("/import", (handle_file(str(some_zip)),))):
        with pytest.raises(Exception) as caught:
            _call(admin_client, api_name, *args, "")
        assert "needs the admin password" in str(caught.value), (api_name, caught.value)

    # Identify stays open, but names only a face that matches, at no less than the gallery's threshold.
    _picture, table, summary, matches = _call(admin_client, "/identify", handle_file(str(lfw_photo(BUSH, 2))),
                                              1.5, 10)
    assert [m["name"] for m in matches] == [display(BUSH)] and len(matches[0]["candidates"]) == 1
    assert "Only matching names" in summary
    _picture, _table, _summary, matches = _call(admin_client, "/identify", handle_file(str(lfw_photo(SERENA, 1))),
                                                1.5, 10)
    assert matches[0]["name"] == "unknown" and matches[0]["candidates"] == [] and matches[0]["similarity"] is None
    # ... and with the password, everything.
    _picture, _table, _summary, matches = _call(admin_client, "/identify", handle_file(str(lfw_photo(SERENA, 1))),
                                                1.5, 10, ADMIN_PASSWORD)
    assert {c["name"] for c in matches[0]["candidates"]} == {display(BUSH), "Colin Powell"}
    # Detect and verify see only the uploads and need no password.
    _call(admin_client, "/detect", handle_file(str(bush)))
    _call(admin_client, "/verify", handle_file(str(bush)), handle_file(str(powell)), 3.0)

    # The export needs the password; it lives in the app's own cache folder (owner only), nowhere else.
    exported, message = _call(admin_client, "/export", True, ADMIN_PASSWORD)
    assert "2 minutes" in message
    server_zip = Path(_path(exported))
    assert admin_app.gradio_tmp in server_zip.parents and server_zip.suffix == ".zip"
    assert stat.S_IMODE(server_zip.stat().st_mode) == 0o600
    assert not list(admin_app.private_tmp.glob("facerec-export-*"))


def test_names_are_shown_as_text_not_markup(admin_client, lfw_photo):
    from gradio_client import handle_file

    from facerec.ui import markdown_text

    photo = lfw_photo("Alan_Ball", 1)
    _crop, message, details = _call(admin_client, "/enroll", handle_file(str(photo)), BEACON, None, False, "",
                                    ADMIN_PASSWORD)
    assert details["name"] == BEACON  # stored as typed...
    assert markdown_text(BEACON) in message  # ... shown escaped
    for shown in (message,):
        assert "<img" not in shown and "![t](" not in shown and "*Bush*" not in shown
    _picture, _table, summary, _matches = _call(admin_client, "/identify", handle_file(str(lfw_photo("Alan_Ball", 2))),
                                                3.0, 3)
    assert markdown_text(BEACON) in summary and "<img" not in summary
    with pytest.raises(Exception) as caught:  # an error toast naming the person: HTML-escaped
        _call(admin_client, "/enroll", handle_file(str(lfw_photo("Alan_Ball", 2))), BEACON, None, True, "",
              ADMIN_PASSWORD)
    assert "&lt;img src=x" in str(caught.value) and "<img" not in str(caught.value)
    assert "![t](" not in markdown_text(BEACON) and "\\!\\[t\\]\\(" in markdown_text(BEACON)


def test_nothing_of_a_deleted_person_stays_downloadable(admin_app, admin_client, lfw_photo):
    from gradio_client import handle_file

    photo, second = lfw_photo("Abdullah_Gul", 1), lfw_photo("Abdullah_Gul", 2)
    _picture, _table, _summary, _ = _call(admin_client, "/identify", handle_file(str(photo)), 3.0, 3)
    assert not _upload_path(admin_app, photo).exists()  # an upload to identify is gone once answered (#29)
    assert _get(admin_app, str(_upload_path(admin_app, photo))) == 403
    _call(admin_client, "/enroll", handle_file(str(photo)), "Abdullah Gul", None, False, "", ADMIN_PASSWORD)
    _call(admin_client, "/add_photo", "Abdullah Gul", handle_file(str(second)), ADMIN_PASSWORD)
    for upload in (photo, second):  # stored faces: the uploads themselves are gone at once
        assert not _upload_path(admin_app, upload).exists()
        assert _get(admin_app, str(_upload_path(admin_app, upload))) == 403
    _table, thumbnails, _people = _call(admin_client, "/list", "gul", ADMIN_PASSWORD)
    # Thumbnails travel inside the page (data: URIs of the stored crops): no file, nothing to serve later.
    assert 'src="data:image/jpeg;base64,' in thumbnails and "/gradio_api/file=" not in thumbnails
    picture, *_ = _call(admin_client, "/identify", handle_file(str(second)), 3.0, 3, ADMIN_PASSWORD)
    # The annotated photo travels inside the answer (a data: image), never a file the server could serve later.
    assert picture["url"].startswith("data:image/webp;base64,") and not picture.get("path")
    exported, _message = _call(admin_client, "/export", True, ADMIN_PASSWORD)
    assert _get(admin_app, _path(exported)) == 200
    files = [p for p in admin_app.gradio_tmp.rglob("*") if p.is_file()]
    assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)

    _call(admin_client, "/delete", "Abdullah Gul", True, ADMIN_PASSWORD)
    for server_path in (_path(exported), str(_upload_path(admin_app, photo))):
        assert _get(admin_app, server_path) == 403, server_path


def test_non_ascii_password_then_lockout_after_five_wrong_guesses(admin_client, lfw_photo):
    """Runs last against this app: it locks the test client out for a minute."""
    _table, _thumbs, people = _call(admin_client, "/list", "", ADMIN_PASSWORD)  # the non-ASCII password works
    assert people
    started = time.perf_counter()
    messages = []
    for guess in ["wrong", "Grüße", "ÅÅÅÅ", "🔑", "guess five", ADMIN_PASSWORD, ADMIN_PASSWORD]:
        with pytest.raises(Exception) as caught:
            _call(admin_client, "/list", "", guess)
        messages.append(str(caught.value))
    assert all("Wrong admin password" in m for m in messages[:5]), messages
    assert all("Too many wrong admin passwords" in m for m in messages[5:]), messages  # even the right one
    assert time.perf_counter() - started < 60


def test_enroll_says_up_front_that_it_needs_the_password(admin_app):
    """#64 row 13: the photo, faces and quality worked, and only pressing Enroll said the password was needed;
    the tab now says so before anything is tried, as Gallery and Health do."""
    import httpx

    config = httpx.get(f"{admin_app.url}config", timeout=30, trust_env=False).json()
    texts = [c.get("props", {}).get("value") for c in config["components"] if c.get("type") == "markdown"]
    assert any(isinstance(t, str) and t.startswith("Enrolling needs the admin password") for t in texts)
