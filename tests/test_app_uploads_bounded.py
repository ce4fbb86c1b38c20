"""Uploads against the running app: one file per request with its length first, the quota counted as bytes arrive,
the API key checked before the body, uploads and pictures gone once answered, a locked-out identify answered as
anonymous, a full disk, a photo over the working size, an EPS upload that never starts a program."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hardening import EPS, REPO_ROOT, assert_one_line, stub_ghostscript
from PIL import Image

from facerec.errors import InvalidImage
from facerec.gallery import Gallery
from facerec.settings import Settings

ADMIN_PASSWORD = "uploads bounded"


# ----- against the running app ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def app(tmp_path_factory, portrait):
    """The real app, with an admin password, a stub Ghostscript on its PATH, an upload quota of 2 MB, one person
    enrolled and an admin API key."""
    from app_server import running_app

    root = tmp_path_factory.mktemp("uploads")
    record = stub_ghostscript(root / "bin")
    home = root / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
    created = subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "admin", "--json",
                              "--home", str(home)], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                             check=True)
    key = json.loads(created.stdout)["key"]
    env = {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}", "FACEREC_UPLOAD_QUOTA_MB": "2"}
    with running_app(home, admin_password=ADMIN_PASSWORD, extra_env=env) as running:
        running.key, running.gs_record = key, record
        running.cache = root / "home-gradio-tmp"
        yield running


@pytest.fixture(scope="module")
def client(app):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=False)


def cached_files(app) -> list[Path]:
    return [p for p in app.cache.rglob("*") if p.is_file()]


def raw_request(app, head: str, body: bytes = b"", timeout: float = 20.0) -> str:
    """Send `head` (request line and headers) and `body` as they are; returns the status line of the answer."""
    with socket.create_connection(("127.0.0.1", app.port), timeout=timeout) as connection:
        connection.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        return connection.recv(65536).decode("latin-1").split("\r\n", 1)[0]


def send_until_answered(connection: socket.socket, body: bytes, piece: int = 16384) -> bytes:
    """Send `body` a piece at a time until the server answers (it refuses mid-body, then closes: bytes sent after
    that would reset the connection before its answer is read); returns the answer."""
    import select

    for start in range(0, len(body), piece):
        if select.select([connection], [], [], 0.05)[0]:
            break
        connection.sendall(body[start:start + piece])
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    return answer


def test_an_eps_upload_never_starts_ghostscript_in_the_app(app, client, tmp_path):
    import httpx
    from gradio_client import handle_file

    path = tmp_path / "holiday.eps"
    path.write_bytes(EPS)
    with pytest.raises(Exception) as refused:
        client.predict(handle_file(str(path)), None, 3, "", api_name="/identify")
    assert "JPEG, PNG, WebP or BMP" in str(refused.value)
    answer = httpx.post(f"{app.url}api/v1/identify", headers={"X-API-Key": app.key},
                        files={"photo": ("holiday.eps", EPS, "application/postscript")}, timeout=60)
    assert answer.status_code == 422 and "JPEG, PNG, WebP or BMP" in answer.json()["error"]
    assert not app.gs_record.exists(), "Ghostscript was started"


def test_an_upload_request_holds_one_file_and_says_its_length_first(app):
    """Row 4: one POST of 60 files of 15 MB wrote 901 MB (Gradio takes 1,000 files a request)."""
    import httpx

    files = [("files", (f"photo{n}.jpg", os.urandom(1000), "image/jpeg")) for n in range(3)]
    answer = httpx.post(f"{app.url}gradio_api/upload", files=files, timeout=60)
    assert answer.status_code == 413 and answer.json()["code"] == "too_many_files"
    head = (f"POST /gradio_api/upload HTTP/1.1\nHost: 127.0.0.1\nContent-Type: multipart/form-data; boundary=x\n"
            f"Content-Length: {60 * 15 << 20}\n")
    assert " 413 " in raw_request(app, head)  # refused on its announced length, before any byte of the body
    head = "POST /gradio_api/upload HTTP/1.1\nHost: 127.0.0.1\nTransfer-Encoding: chunked\n"
    assert " 411 " in raw_request(app, head)
    assert sum(p.stat().st_size for p in cached_files(app)) < 1 << 20


def test_the_quota_counts_upload_bytes_as_they_arrive(app):
    """Row 4: 12 concurrent uploads all passed, each seeing the web cache still empty. The bytes of the uploads in
    flight count as they arrive (#48 row 3: a reservation of the announced length was held by bytes that never
    came): an upload held open mid-body holds only what it sent, so the next one passes, and the held one is ended
    (507) when its bytes would pass the quota, its partial file deleted."""
    boundary = "facerec"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + os.urandom(1_500_000) + f"\r\n--{boundary}--\r\n".encode()
    head = (f"POST /gradio_api/upload HTTP/1.1\nHost: 127.0.0.1\nContent-Type: multipart/form-data; "
            f"boundary={boundary}\nContent-Length: {len(body)}\n")
    with socket.create_connection(("127.0.0.1", app.port), timeout=30) as slow:
        slow.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body[:1000])  # and waits
        time.sleep(1.0)
        assert " 200 " in raw_request(app, head, body)  # 1.5 MB + the 1,000 bytes that arrived: within 2 MB
        answer = send_until_answered(slow, body[1000:])  # 1.5 MB kept + what arrives of this one > 2 MB
    assert " 507 " in answer.split(b"\r\n", 1)[0].decode() and b"upload_quota" in answer, answer
    assert [p.name for p in app.cache.iterdir() if p.is_file()] == []  # no partial upload left behind


def test_a_request_without_a_key_is_refused_before_its_body(app):
    """Row 10: the key was checked after the body was read; a keyless request announcing 30 MB held the server."""
    head = (f"POST /api/v1/identify HTTP/1.1\nHost: 127.0.0.1\nContent-Type: multipart/form-data; boundary=x\n"
            f"Content-Length: {30 << 20}\n")
    assert " 401 " in raw_request(app, head, timeout=10)  # no byte of the body sent: answered anyway
    assert " 401 " in raw_request(app, head.replace("Host:", "X-API-Key: frk_guess\nHost:"), timeout=10)


def test_uploads_and_pictures_leave_the_server_when_answered_or_refused(app, client, portrait, tmp_path):
    """Row 9: uploads stayed after a detect answer and failed identifies, and an annotated image.webp of the whole
    photo stayed after a successful one."""
    from gradio_client import handle_file

    not_an_image = tmp_path / "notes.jpg"
    not_an_image.write_text("not a photo")
    blank = tmp_path / "blank.png"
    Image.new("RGB", (200, 200), "white").save(blank)
    photo = str(portrait("Barack_Obama", 2))
    earlier = set(cached_files(app))  # uploads of other tests, never asked about (they expire)
    attempts = [(handle_file(photo), "wrong password"), (handle_file(str(not_an_image)), ""),
                (handle_file(str(blank)), "")]
    for upload, password in attempts:
        with pytest.raises(Exception):
            client.predict(upload, None, 3, password, api_name="/identify")
        assert set(cached_files(app)) == earlier
    client.predict(handle_file(photo), api_name="/detect")
    assert set(cached_files(app)) == earlier
    picture, _table, status, _details = client.predict(handle_file(photo), None, 3, "", api_name="/identify")
    assert "Barack Obama" in status
    assert str(picture["url"]).startswith("data:image/webp;base64,") and not picture.get("path")
    assert set(cached_files(app)) == earlier


def test_a_locked_out_address_is_answered_as_anonymous_by_identify(app, client, portrait):
    """Row 11: while locked out, identify with the password filled in (even correctly) was refused. Runs last
    against this app: it locks the test client out."""
    from gradio_client import handle_file

    for _ in range(5):
        with pytest.raises(Exception):
            client.predict("", "wrong", api_name="/list")
    _picture, _table, status, _details = client.predict(handle_file(str(portrait("Barack_Obama", 2))), None, 3,
                                                        ADMIN_PASSWORD, api_name="/identify")
    assert "Barack Obama" in status and "password was not checked" in status and "Too many" in status


def test_a_full_disk_refuses_an_upload_in_one_line_and_identify_goes_on(tmp_path, portrait):
    """Row 8: with the disk full, Gradio's upload was a bare 500 (so Identify in the page could not run) and left
    0-byte files. An upload that would not fit is refused (507 `storage_full`) before a byte is written; with the
    uploads on another filesystem than the gallery (the app's default puts them in memory), a full gallery disk
    does not stop identify in the page."""
    import httpx
    from app_server import running_app
    from gradio_client import Client, handle_file
    from test_storage_full import fill, small_disk

    with small_disk(tmp_path / "disk", megabytes=24) as disk:
        uploads = disk / "uploads"
        uploads.mkdir()
        home = tmp_path / "home"
        with Gallery(Settings(home=home)) as gallery:
            gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
        with running_app(home, extra_env={"GRADIO_TEMP_DIR": str(uploads)}) as app:
            fill(disk)
            answer = httpx.post(f"{app.url}gradio_api/upload",
                                files={"files": ("photo.jpg", portrait("Barack_Obama", 2).read_bytes(),
                                                 "image/jpeg")}, timeout=60)
            assert answer.status_code == 507 and answer.json()["code"] == "storage_full", answer.text
            assert "disk is full" in assert_one_line(answer.json()["error"])
            assert [p for p in uploads.rglob("*") if p.is_file()] == []  # no empty file left behind

    with small_disk(tmp_path / "gallery-disk", megabytes=24) as disk:
        home = disk / "home"
        with Gallery(Settings(home=home)) as gallery:
            gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
        with running_app(home, extra_env={"GRADIO_TEMP_DIR": str(tmp_path / "elsewhere")}) as app:
            fill(disk)
            _picture, _table, status, _details = Client(app.url, verbose=False, download_files=False).predict(
                handle_file(str(portrait("Barack_Obama", 2))), None, 3, "", api_name="/identify")
            assert "Barack Obama" in status


def test_a_photo_over_the_working_size_is_shrunk_while_decoding_and_answered_in_its_own_coordinates(tmp_path,
                                                                                                    portrait):
    """A 40 MP photo held 120 MB (and more in copies) for the whole request, in each of the requests at once: it is
    now decoded at (or shrunk to) 16 MP, and its faces are still reported where they are in the photo."""
    face = Image.open(portrait("Eileen_Collins", 1)).convert("RGB")  # 512 px square
    scale = 1500 / face.width
    face = face.resize((1500, 1500))
    canvas = Image.new("RGB", (7200, 4800), (90, 90, 90))
    canvas.paste(face, (4000, 1500))
    path = tmp_path / "large.jpg"
    canvas.save(path, quality=92)
    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        photo = gallery.services().photos.read(path)
        assert photo.scale < 0.7 and photo.pixels.shape[0] * photo.pixels.shape[1] <= Settings().working_pixels
        assert photo.shape == (4800, 7200, 3)
        (found,) = gallery.services().photos.detect(photo)[1]
        (small,) = gallery.services().photos.detect(portrait("Eileen_Collins", 1))[1]  # the same face in the 512 px original
        expected = [scale * small.box[0] + 4000, scale * small.box[1] + 1500, scale * small.box[2] + 4000,
                    scale * small.box[3] + 1500]
        assert np.allclose(found.box, expected, atol=40), (found.box, expected)
        gallery.enroll(portrait("Eileen_Collins", 1), "Eileen Collins")
        (match,) = gallery.identify(photo)
    assert match.name == "Eileen Collins" and match.similarity > 0.9


def test_an_upload_deleted_before_it_is_read_says_so_without_a_server_path(tmp_path):
    """Found while making uploads leave at once: a photo answered by one action and asked about by another that
    started just before read "no such file: /<the web cache>/<hash>/photo.jpg" (a server path) or failed with
    "Something went wrong (FileNotFoundError)"."""
    from facerec.faces.pipeline import Photo
    from facerec.ui.kept_photos import KeptPhotos
    from facerec.ui.uploads import GONE, photo_to_answer

    missing = str(tmp_path / "cache" / "0123abcd" / "photo.jpg")
    with pytest.raises(InvalidImage) as refused:
        photo_to_answer(missing, None, lambda path: pytest.fail("nothing to read"))
    assert str(refused.value) == GONE and str(tmp_path) not in str(refused.value)
    photo = Photo(np.zeros((4, 4, 3), np.uint8), "0" * 64)
    kept = KeptPhotos(max_age_s=60).keep(missing, photo)
    assert photo_to_answer(missing, kept, lambda path: pytest.fail("nothing to read")).photo is photo


def video_request_head(app, length: int) -> str:
    return (f"POST /api/v1/videos/identify HTTP/1.1\nHost: 127.0.0.1\nX-API-Key: {app.key}\n"
            f"Content-Type: multipart/form-data; boundary=x\nContent-Length: {length}\n")


def first_answer(app, head: str, timeout: float = 20.0) -> str:
    """The first bytes the server answers `head` with (no body sent): status line, headers, the start of the body."""
    import re

    answer = b""
    with socket.create_connection(("127.0.0.1", app.port), timeout=timeout) as connection:
        connection.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        while chunk := connection.recv(65536):  # the head, then the body (its length said in the head)
            answer += chunk
            top, _, body = answer.partition(b"\r\n\r\n")
            length = re.search(rb"content-length: (\d+)", top, re.I)
            if length and len(body) >= int(length.group(1)):
                break
    return answer.decode("latin-1")


def test_rest_videos_wait_within_the_quota_and_past_two_waiting_are_refused_before_their_body(app):
    """#63 row 7: a REST video was written whole (a spool and a copy in the web cache) before it waited for the one
    video slot, in any number: +1 GB in /dev/shm and in /tmp, page uploads refused meanwhile. Now a REST video is
    counted by the upload quota as the page's uploads are (one that cannot fit is refused before its body), and
    takes a place in a room of three (one followed, two waiting) before its body is read: a fourth is refused at
    once (503 `busy`). Clients that go away give their places back and leave no file."""
    over_quota = first_answer(app, video_request_head(app, 3 << 20))  # the quota is 2 MB
    assert " 507 " in over_quota.split("\r\n", 1)[0] and "upload_quota" in over_quota, over_quota
    head = video_request_head(app, 100_000).replace("\n", "\r\n").encode() + b"\r\n"
    held = [socket.create_connection(("127.0.0.1", app.port), timeout=30) for _ in range(3)]
    try:
        for connection in held:  # each sends its head and the start of its body, then waits
            connection.sendall(head + b"--x\r\nContent-Disposition: form-data; name=\"video\"; filename=\"a.mp4\"\r\n")
        time.sleep(1.5)
        busy = first_answer(app, video_request_head(app, 100_000), timeout=10)
        assert " 503 " in busy.split("\r\n", 1)[0] and '"code":"busy"' in busy and "retry-after: 120" in busy.lower()
    finally:
        for connection in held:
            connection.close()
    time.sleep(1.5)
    body = (b"--x\r\nContent-Disposition: form-data; name=\"video\"; filename=\"a.mp4\"\r\n"
            b"Content-Type: video/mp4\r\n\r\nnot a video\r\n--x--\r\n")
    with socket.create_connection(("127.0.0.1", app.port), timeout=30) as connection:
        connection.sendall(video_request_head(app, len(body)).replace("\n", "\r\n").encode() + b"\r\n" + body)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
            if b"invalid_video" in answer:
                break
        answer = answer.decode("latin-1")
    assert " 422 " in answer.split("\r\n", 1)[0] and "invalid_video" in answer, answer  # taken again, and read
    assert not [p for p in app.cache.rglob("api-video-*")], "a video's folder was left behind"


def test_a_rest_upload_copied_out_frees_the_requests_own_spool_at_once(tmp_path) -> None:
    """#63 row 7, measured again: three 100 MB videos admitted held their spool in /tmp and their copy while they
    waited for their turn. The spool is now closed (its disk freed) as soon as it is copied."""
    import asyncio
    import tempfile as temporary

    from starlette.datastructures import UploadFile

    from facerec.api.uploads import save_upload

    spool = temporary.SpooledTemporaryFile(max_size=1 << 20)
    spool.write(os.urandom(3 << 20))  # over the in-memory size: on disk, as a real 100 MB upload's is
    spool.seek(0)
    upload = UploadFile(spool, filename="clip.mp4")
    asyncio.run(save_upload(upload, tmp_path / "upload", 10 << 20, "the video"))
    assert (tmp_path / "upload").stat().st_size == 3 << 20
    assert spool.closed
