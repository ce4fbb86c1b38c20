"""What anonymous page sessions can make the running app keep in memory (SECURITY.md, "Limits on what anyone can
make the server do"): nothing of what their events sent once they are answered.

Each test starts the real app (`python app.py`) and measures its resident memory (psutil) while anonymous callers
do what the page's own events do, with no password.
"""

from __future__ import annotations

import time
import uuid

from app_server import running_app

PASSWORD = "page memory"
MB = 1 << 20
ALLOWANCE = 64 * MB  # what the allocator may keep of the requests' passing buffers, beside what is kept on purpose


def resident(app) -> int:
    import psutil

    return psutil.Process(app.process.pid).memory_info().rss


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
