"""Request bodies anyone can send the running web app: each route's body has a limit that fits its purpose, a body
keeps a pace or is ended, and the upload quota counts bytes as they arrive (SECURITY.md, "Limits on what anyone
can make the server do").

Against the real app (`python app.py`), with raw sockets where the test needs a body that never arrives.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time

import pytest

from facerec.web.body_limit import DEFAULT_LIMIT_BYTES
from facerec.web.request_body import STALL_S

from app_server import REPO_ROOT, running_app

QUOTA_MB = 2
BOUNDARY = "facerec"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    root = tmp_path_factory.mktemp("bodies")
    with running_app(root / "home", admin_password="bodies", extra_env={"FACEREC_UPLOAD_QUOTA_MB": str(QUOTA_MB)}) \
            as running:
        running.cache = root / "home-gradio-tmp"
        yield running


def connect(app, timeout: float = 20.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", app.port), timeout=timeout)


def send_head(connection: socket.socket, head: str, body: bytes = b"") -> None:
    connection.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)


def answer(connection: socket.socket) -> tuple[str, bytes]:
    """(the status line, the body) of the answer on `connection` (read until the server closes it)."""
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.decode("latin-1").split("\r\n", 1)[0], body


def upload_body(payload: bytes) -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + payload + f"\r\n--{BOUNDARY}--\r\n".encode()


def upload_head(length: int) -> str:
    return (f"POST /gradio_api/upload HTTP/1.1\nHost: 127.0.0.1\nContent-Type: multipart/form-data; "
            f"boundary={BOUNDARY}\nContent-Length: {length}\n")


def files_at_the_top(app) -> list[str]:
    """Files directly in the web cache: Gradio's partial uploads (whole ones are moved into subfolders)."""
    return sorted(p.name for p in app.cache.iterdir() if p.is_file())


@pytest.mark.parametrize("route", ["/gradio_api/queue/join", "/gradio_api/call/identify", "/gradio_api/call/rename",
                                   "/gradio_api/component_server", "/gradio_api/process_recording"])
def test_a_page_route_refuses_a_body_over_its_limit_before_reading_it(app, route):
    """Gradio's JSON routes read bodies of any size from anybody (4 of 250 MB peaked at +2.3 GB). A body announced
    over the limit is answered 413 in one line before a byte of it is sent."""
    with connect(app, timeout=15) as connection:
        send_head(connection, f"POST {route} HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
                              f"Content-Length: {250 << 20}\n")
        status, body = answer(connection)
    assert " 413 " in status, status
    refusal = json.loads(body)
    assert refusal["code"] == "too_large" and "1 MB" in refusal["error"] and "\n" not in refusal["error"]


def test_a_chunked_body_is_counted_as_it_arrives_and_ended_at_the_limit(app):
    """Without a length, the bytes are counted as they arrive: past the limit the body is ended and answered 413,
    and an ordinary call still works."""
    import httpx

    chunk = b"x" * (64 << 10)
    with connect(app) as connection:
        send_head(connection, "POST /gradio_api/call/rename HTTP/1.1\nHost: 127.0.0.1\n"
                              "Content-Type: application/json\nTransfer-Encoding: chunked\n")
        for _ in range(DEFAULT_LIMIT_BYTES // len(chunk) + 2):  # past the limit, and the body not ended
            if select.select([connection], [], [], 0.05)[0]:
                break  # answered: more bytes would reset the connection before its answer is read
            connection.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        status, body = answer(connection)
    assert " 413 " in status and json.loads(body)["code"] == "too_large", (status, body)
    called = httpx.post(f"{app.url}gradio_api/call/rename", json={"data": ["a", "b", "wrong"]}, timeout=30)
    assert called.status_code == 200 and "event_id" in called.json()


def test_uploads_that_trickle_hold_no_quota_and_are_ended(app):
    """17 connections announcing 1.5 MB and trickling a few bytes used to reserve the quota they announced, so
    every other upload was refused (507) and every photo action on the page blocked. The quota now counts what
    arrived: ordinary uploads pass while they trickle, and each trickle is ended (408) once it falls under the
    pace, leaving no partial file behind."""
    import httpx

    body = upload_body(os.urandom(1_500_000))
    tricklers = [connect(app, timeout=STALL_S + 30) for _ in range(17)]
    try:
        for connection in tricklers:
            send_head(connection, upload_head(len(body)), body[:12])
        time.sleep(1.0)
        for n in range(3):  # 3 x 500 kB: within the quota of 2 MB only if the trickles hold nothing
            uploaded = httpx.post(f"{app.url}gradio_api/upload",
                                  files={"files": (f"photo{n}.jpg", os.urandom(500_000), "image/jpeg")}, timeout=60)
            assert uploaded.status_code == 200, uploaded.text
        statuses, sent = {}, 12
        deadline = time.monotonic() + STALL_S + 30
        while len(statuses) < len(tricklers) and time.monotonic() < deadline:
            for number, connection in enumerate(tricklers):
                if number in statuses:
                    continue
                if select.select([connection], [], [], 0)[0]:
                    statuses[number] = answer(connection)
                else:
                    try:
                        connection.sendall(body[sent:sent + 1])  # a byte every two seconds
                    except OSError:
                        statuses[number] = ("closed without an answer", b"")
            sent += 1
            time.sleep(2.0)
    finally:
        for connection in tricklers:
            connection.close()
    assert len(statuses) == len(tricklers), f"{len(tricklers) - len(statuses)} trickles were never ended"
    assert all(" 408 " in status and json.loads(text)["code"] == "too_slow" for status, text in statuses.values()), \
        statuses
    assert files_at_the_top(app) == []  # the partial files Gradio was writing are gone


def test_a_rest_body_keeps_the_pace_a_page_body_keeps(app):
    """#65 item 5: one body limit with one pace rule for the page and the REST API alike. A REST body that stops
    arriving held its worker for as long as the client kept the connection (the REST limit counted bytes only);
    it is now ended like a page's, 408 in one line."""
    created = subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "read", "--name",
                              "pace", "--json", "--home", str(app.home)], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=120)
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)["key"]
    body = upload_body(os.urandom(100_000)).replace(b'name="files"', b'name="photo"')
    with connect(app, timeout=STALL_S + 30) as connection:
        send_head(connection, f"POST /api/v1/identify HTTP/1.1\nHost: 127.0.0.1\nX-API-Key: {key}\n"
                              f"Content-Type: multipart/form-data; boundary={BOUNDARY}\nContent-Length: {len(body)}\n",
                  body[:100])
        began = time.monotonic()
        status, text = answer(connection)
    assert " 408 " in status and json.loads(text)["code"] == "too_slow", (status, text)
    assert time.monotonic() - began < STALL_S + 10
