"""What anonymous page sessions can make the running app keep in memory (SECURITY.md, "Limits on what anyone can
make the server do"): decoded photos kept to be asked about again, at most 256 MiB for every page together, and
nothing of what their events sent once they are answered.

Each test starts the real app (`python app.py`) and measures its resident memory (psutil) while anonymous callers
do what the page's own events do, with no password.
"""

from __future__ import annotations

import io
import json
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from PIL import Image

from facerec.ui.kept_photos import DEFAULT_LIMIT_BYTES
from facerec.ui.uploads import FORGOTTEN

from app_server import running_app

PASSWORD = "page memory"
MB = 1 << 20
ALLOWANCE = 64 * MB  # what the allocator may keep of the requests' passing buffers, beside what is kept on purpose


def resident(app) -> int:
    import psutil

    return psutil.Process(app.process.pid).memory_info().rss


def sixteen_megapixels() -> bytes:
    """A JPEG of 4,000 x 4,000 pixels in a few hundred kB: decoded, 48 MB."""
    rng = np.random.default_rng(48)
    small = rng.integers(0, 255, (125, 125, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(small).resize((4000, 4000), Image.NEAREST).save(buffer, "JPEG", quality=40)
    return buffer.getvalue()


class Page:
    """The page's own events, sent as the page sends them (`/gradio_api/queue/join` with a session of its own),
    including the private ones no API lists."""

    def __init__(self, app) -> None:
        import httpx

        self.url = app.url
        self.http = httpx.Client(timeout=120)
        self.dependencies = self.http.get(f"{app.url}config").json()["dependencies"]

    def event(self, api_name: str) -> dict:
        (found,) = [d for d in self.dependencies if d.get("api_name") == api_name]
        return found

    def upload(self, name: str, data: bytes) -> dict:
        answer = self.http.post(f"{self.url}gradio_api/upload", files={"files": (name, data, "image/jpeg")})
        answer.raise_for_status()
        (path,) = answer.json()
        return {"path": path, "orig_name": name, "meta": {"_type": "gradio.FileData"}}

    def run(self, api_name: str, data: list, session: str) -> list:
        """Run the event in `session` and return its outputs once it is answered."""
        event = self.event(api_name)
        joined = self.http.post(f"{self.url}gradio_api/queue/join",
                                json={"data": data, "fn_index": event["id"], "session_hash": session,
                                      "trigger_id": (event["targets"] or [[None]])[0][0], "event_data": None})
        joined.raise_for_status()
        with self.http.stream("GET", f"{self.url}gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                message = json.loads(line[5:]) if line.startswith("data:") else {}
                if message.get("msg") == "process_completed":
                    assert message.get("success"), message
                    return message["output"]["data"]
        raise AssertionError("the event was never answered")


def test_photos_kept_for_anonymous_pages_stay_within_their_bound(tmp_path):
    """40 page sessions each chose a 16 MP photo for Add photo (its upload event needs no password): the sessions
    kept each decoded photo for 10 minutes, +1.9 GB. Now the photos are kept for every page together within
    256 MiB, the oldest forgotten first; a page whose photo was forgotten is asked to upload it again, and the
    latest one is still answered about."""
    photo = sixteen_megapixels()
    with running_app(tmp_path / "home", admin_password=PASSWORD) as app:
        page = Page(app)
        sessions = [uuid.uuid4().hex[:11] for _ in range(41)]
        page.run("received", [page.upload("warm.jpg", photo)], sessions[0])  # the decoder and its threads
        before = resident(app)

        def choose(session: str) -> dict:
            upload = page.upload("big.jpg", photo + session.encode())  # bytes after the image: a file of its own
            outputs = page.run("received", [upload], session)
            assert "Error" not in json.dumps(outputs), outputs
            return upload

        with ThreadPoolExecutor(4) as pool:
            uploads = dict(zip(sessions[1:], pool.map(choose, sessions[1:])))
        time.sleep(5.0)
        grown = resident(app) - before
        print(f"40 page sessions of a 16 MP photo ({len(photo) / 1000:.0f} kB): +{grown / MB:.0f} MB resident")
        assert grown <= DEFAULT_LIMIT_BYTES + ALLOWANCE, f"40 page sessions grew the app by {grown / MB:.0f} MB"

        def add_photo(session: str) -> str:
            """Add photo pressed on that page: its upload's file is gone, so the photo comes from what is kept."""
            outputs = page.run("add_photo_1", ["Nobody", uploads[session], PASSWORD, False, False, None], session)
            return json.dumps(outputs)

        forgotten = "no longer keeps this photo"
        assert forgotten in FORGOTTEN and forgotten in add_photo(sessions[1])  # the oldest: upload it again
        latest = add_photo(sessions[-1])  # still kept: answered about (the photo has no face)
        assert "No face found" in latest, latest


def test_what_anonymous_events_sent_is_not_kept_once_answered(tmp_path):
    """Gradio copied every value an event received into its session and kept 10,000 sessions: 6 events of 100 MB
    nobody read held 872 MB a minute later. Bodies are now at most 1 MiB, and 200 events of 0.9 MB each (180 MB
    sent, half through the API's route, half as page events, every one in a session of its own) leave the app's
    memory as it was."""
    import httpx

    value = "x" * 900_000
    with running_app(tmp_path / "home", admin_password=PASSWORD) as app:
        http = httpx.Client(timeout=120)
        rename = [d for d in http.get(f"{app.url}config").json()["dependencies"] if d.get("api_name") == "rename"][0]

        def send(number: int) -> None:
            if number % 2:
                answer = http.post(f"{app.url}gradio_api/call/rename", json={"data": [value, "b", "wrong"]})
            else:
                answer = http.post(f"{app.url}gradio_api/queue/join",
                                   json={"data": [value, "b", "wrong"], "fn_index": rename["id"],
                                         "session_hash": uuid.uuid4().hex[:11], "trigger_id": None})
            assert answer.status_code == 200, answer.text

        for number in range(40):  # the allocator's arenas settle
            send(number)
        time.sleep(5.0)
        before = resident(app)
        for number in range(200):
            send(number)
        time.sleep(10.0)  # every event answered (none is read)
        grown = resident(app) - before
    print(f"200 anonymous events of 0.9 MB: +{grown / MB:.0f} MB resident")
    assert grown <= ALLOWANCE, f"200 events of 0.9 MB grew the app by {grown / MB:.0f} MB"
