"""A running app's REST API for the tests: the app in a subprocess (one per test module), its keys made by the CLI
while it runs, and the requests and refusals the tests repeat."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app_server import REPO_ROOT, running_app


@dataclass
class Keys:
    admin: str
    read: str
    revoked: str
    off: httpx.Response  # what a route answered before any key existed
    revoked_before: int  # the status the revoked key got while it was still valid


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def create_key(home: Path, role: str, name: str) -> dict:
    done = cli(home, "api-key", "create", "--role", role, "--name", name, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("api-app") / "home") as app:
        yield app


@pytest.fixture(scope="module")
def api(server) -> httpx.Client:
    with httpx.Client(base_url=f"{server.url}api/v1", timeout=120, trust_env=False) as client:
        yield client


@pytest.fixture(scope="module")
def keys(server, api) -> Keys:
    """Keys made by the CLI while the app runs (no restart): admin, read, and one revoked after it worked."""
    off = api.get("/people")
    admin = create_key(server.home, "admin", "tests admin")["key"]
    read = create_key(server.home, "read", "tests read")["key"]
    revoked = create_key(server.home, "read", "soon revoked")
    before = api.get("/people", headers={"X-API-Key": revoked["key"]}).status_code
    done = cli(server.home, "api-key", "revoke", str(revoked["id"]))
    assert done.returncode == 0 and "revoked" in done.stdout, done.stderr
    return Keys(admin, read, revoked["key"], off, before)


def photo(path: Path, name: str | None = None) -> tuple:
    return (name or path.name, path.read_bytes(), "image/jpeg")


def refused(response: httpx.Response, status: int, code: str) -> str:
    """Assert a one-line JSON refusal with `status` and `code`; returns the message."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["code"] == code, body
    assert "\n" not in response.text and "Traceback" not in response.text
    assert body["error"] and "\n" not in body["error"]
    return body["error"]


def enroll(api, keys, path: Path, name: str, **fields) -> dict:
    response = api.post("/people", files={"photo": photo(path)}, data={"name": name, **fields},
                        headers={"X-API-Key": keys.admin})
    assert response.status_code == 201, response.text
    return response.json()


def delete(api, keys, person_id: int) -> dict:
    response = api.delete(f"/people/{person_id}", headers={"X-API-Key": keys.admin})
    assert response.status_code == 200, response.text
    return response.json()


def people(api, keys, search: str = "") -> list[tuple[str, int]]:
    page = api.get("/people", params={"search": search, "limit": 500}, headers={"X-API-Key": keys.admin}).json()
    return [(p["name"], p["photos"]) for p in page["people"]]
