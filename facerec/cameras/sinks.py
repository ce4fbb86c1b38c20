"""Where a camera's events go: a JSON Lines file, a webhook (and MQTT, `facerec.cameras.mqtt_sink`).

Every sink is fed through a bounded queue and sends from a thread of its own, so a slow or dead sink never stalls
recognition: `put` never waits, and when a sink's queue is full (`QUEUE_EVENTS`) the event is dropped for that sink
and counted (`dropped`). A webhook is a JSON POST signed with the shared secret (`X-Facerec-Signature: sha256=<HMAC
of the body>` and `X-Facerec-Timestamp`, in the body's signature too, so a receiver can refuse replays), tried at
most `WEBHOOK_TRIES` times with a growing pause, each within `WEBHOOK_TIMEOUT_S`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import queue
import threading
import time
from pathlib import Path

from facerec.cameras.source import redacted
from facerec.cameras.visits import Event
from facerec.words.phrasing import one_line

QUEUE_EVENTS = 1_000
WEBHOOK_TRIES = 3
WEBHOOK_TIMEOUT_S = 5.0
WEBHOOK_PAUSE_S = 1.0  # before the second try; doubled before each further one


class Sink:
    """A bounded queue and the thread that empties it into `send` (which subclasses write)."""

    name = "sink"

    def __init__(self) -> None:
        self._queue: queue.Queue = queue.Queue(QUEUE_EVENTS)
        self.sent = self.failed = self.dropped = 0
        self.problem: str | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"sink {self.name}", daemon=True)

    def start(self) -> "Sink":
        self._thread.start()
        return self

    def put(self, event: Event) -> None:
        """Queue the event; never waits."""
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1

    def stop(self, drain_s: float = 5.0) -> None:
        """Send what is queued for at most `drain_s` seconds, then stop."""
        deadline = time.monotonic() + drain_s
        while not self._queue.empty() and time.monotonic() < deadline:
            time.sleep(0.05)
        self._stopped.set()
        self._thread.join(timeout=1.0)
        self.close()

    def status(self) -> dict:
        return {"sink": self.name, "sent": self.sent, "failed": self.failed, "dropped": self.dropped,
                "problem": self.problem}

    def send(self, event: Event) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Let go of what the sink holds (a file, a connection)."""

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                event = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self.send(event)
                self.sent += 1
                self.problem = None
            except Exception as error:  # a sink's failure is counted and said, never recognition's
                self.failed += 1
                self.problem = one_line(error) or type(error).__name__


class JsonLinesSink(Sink):
    """Each event as one line of JSON, appended to an owner-only file (`tail -f` it, or feed it to anything)."""

    name = "jsonl"

    def __init__(self, path: Path) -> None:
        super().__init__()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8")

    def send(self, event: Event) -> None:
        self._handle.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def signature(secret: bytes, timestamp: str, body: bytes) -> str:
    """What `X-Facerec-Signature` carries: sha256=<hex HMAC-SHA256 of "<timestamp>." + body, keyed by the secret>."""
    return "sha256=" + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


class WebhookSink(Sink):
    """Each event POSTed as JSON to `url`, signed with `secret`."""

    name = "webhook"

    def __init__(self, url: str, secret: bytes, tries: int = WEBHOOK_TRIES, timeout_s: float = WEBHOOK_TIMEOUT_S,
                 pause_s: float = WEBHOOK_PAUSE_S) -> None:
        import httpx

        super().__init__()
        self.url, self._secret, self.tries, self.pause_s = url, secret, tries, pause_s
        self._client = httpx.Client(timeout=timeout_s, trust_env=False, follow_redirects=False)

    def send(self, event: Event) -> None:
        body = json.dumps(event.to_dict(), ensure_ascii=False).encode()
        pause = self.pause_s
        for attempt in range(1, self.tries + 1):
            timestamp = str(int(time.time()))
            try:
                answer = self._client.post(self.url, content=body, headers={
                    "Content-Type": "application/json", "X-Facerec-Timestamp": timestamp,
                    "X-Facerec-Signature": signature(self._secret, timestamp, body)})
                if answer.status_code < 300:
                    return
                problem = f"{redacted(self.url)} answered {answer.status_code}"
            except Exception as error:  # httpx's timeouts and connection errors alike
                problem = f"{redacted(self.url)}: {type(error).__name__}"
            if attempt < self.tries and not self._stopped.wait(pause):
                pause *= 2
                continue
            raise ConnectionError(f"{problem} (after {attempt} tries)")

    def close(self) -> None:
        self._client.close()
