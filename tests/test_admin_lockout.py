"""Guessing the admin password: a lockout no header can dodge, a cap over all addresses, and a lockout that guards
the password only (identify and verify stay open).

Reproduced before the fix (main @9086fda): wrong passwords to the web app, each with another `X-Forwarded-For`,
were never locked out (uvicorn believed the header from 127.0.0.1, the app's own address); while 127.0.0.1 was
locked out, a made-up header got in; and a locked-out address could not even identify.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from facerec.access.admin import AdminGuard
from facerec.errors import AccessDenied

PASSWORD = "correct horse"


def test_a_locked_out_address_still_gets_what_needs_no_password() -> None:
    guard = AdminGuard(PASSWORD, max_failures=5)
    for _ in range(5):
        with pytest.raises(AccessDenied, match="Wrong admin password"):
            guard.is_admin("wrong", "10.0.0.1")
    assert guard.is_admin("", "10.0.0.1") is False  # identify without a password: answered, not refused
    with pytest.raises(AccessDenied, match="Too many wrong admin passwords from this address"):
        guard.is_admin(PASSWORD, "10.0.0.1")


def test_wrong_passwords_from_many_addresses_are_capped_overall() -> None:
    now = [0.0]
    guard = AdminGuard(PASSWORD, max_failures=5, window_s=60, clock=lambda: now[0], max_failures_overall=30)
    for address in range(30):  # one guess each from 30 addresses: no address reaches its own limit
        with pytest.raises(AccessDenied, match="Wrong admin password"):
            guard.is_admin("guess", f"10.0.{address}.1")
    with pytest.raises(AccessDenied, match="several addresses; admin actions are paused, try again in 60 s"):
        guard.is_admin(PASSWORD, "192.168.1.1")  # even the right password from a new address
    assert guard.is_admin("", "192.168.1.1") is False
    now[0] += 61
    assert guard.is_admin(PASSWORD, "192.168.1.1")


def _client(app, forwarded_for: str):
    from gradio_client import Client

    return Client(app.url, verbose=False, download_files=False, headers={"X-Forwarded-For": forwarded_for})


def _refusal(client, password: str) -> str:
    with pytest.raises(Exception) as caught:
        client.predict("", password, api_name="/list")
    return str(caught.value)


def test_forwarded_headers_are_ignored_unless_the_proxy_is_trusted(tmp_path: Path, portrait) -> None:
    from gradio_client import handle_file

    from app_server import running_app

    with running_app(tmp_path / "home", admin_password=PASSWORD) as app:
        messages = [_refusal(_client(app, f"10.0.0.{n}"), "wrong") for n in range(1, 8)]
        assert all("Wrong admin password" in m for m in messages[:5]), messages
        assert all("Too many wrong admin passwords" in m for m in messages[5:]), messages  # one address: this one
        assert "Too many wrong admin passwords" in _refusal(_client(app, "10.9.9.9"), PASSWORD)  # no way around
        matches = _client(app, "10.0.0.1").predict(handle_file(str(portrait("Barack_Obama", 1))), "", 3, "", 1.0,
                                                   api_name="/identify")[-1]
        assert len(matches) == 1 and matches[0]["name"] == "unknown"  # identify stays open while locked out

    # Behind a proxy the operator names, the header is the client: one client's guesses lock that client only.
    with running_app(tmp_path / "proxied", admin_password=PASSWORD,
                     extra_env={"FACEREC_TRUSTED_PROXIES": "127.0.0.1"}) as app:
        guesser = _client(app, "10.0.0.1")
        messages = [_refusal(guesser, "wrong") for _ in range(6)]
        assert "Too many wrong admin passwords from this address" in messages[-1], messages
        _table, _thumbs, people = _client(app, "10.0.0.2").predict("", PASSWORD, api_name="/list")
        assert people == []


def test_anonymous_uploads_have_a_quota(tmp_path: Path) -> None:
    """Gradio's upload route takes files from anyone; 30 x 10 MB filled the gallery's disk in seconds (#29 row 3).
    With a quota of 2 MB, uploads of 600 kB are taken while the web cache, with this one, stays within 2 MB, then
    refused with 507 (the quota is reserved before the body is read: it is never passed)."""
    import os

    import httpx

    from app_server import running_app
    from facerec.web.upload_quota import folder_bytes

    with running_app(tmp_path / "home", admin_password=PASSWORD,
                     extra_env={"FACEREC_UPLOAD_QUOTA_MB": "2"}) as app:
        cache = tmp_path / "home-gradio-tmp"
        statuses = []
        for n in range(8):
            answer = httpx.post(f"{app.url}gradio_api/upload",
                                files={"files": (f"photo{n}.jpg", os.urandom(600_000), "image/jpeg")}, timeout=60)
            statuses.append(answer.status_code)
        assert statuses[:3] == [200] * 3 and statuses[3:] == [507] * 5, statuses
        assert answer.json()["code"] == "upload_quota" and "try again in a few minutes" in answer.json()["error"]
        assert folder_bytes(cache) <= 2 * (1 << 20)
