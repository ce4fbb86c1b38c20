"""The admin password: who may see and change the gallery in the web app.

Why each part: the comparison is constant-time over UTF-8 bytes (any Unicode password works; `hmac.compare_digest`
refuses non-ASCII `str`) after NFC normalisation (the same password typed on two keyboards is the same bytes).
Guessing is limited: after `max_failures` wrong passwords from one client within `window_s` seconds, every admin
call from that client is refused, right password or not, until the window has passed. An empty password is not a
guess (a user who forgot to type it is not locked out), and a locked-out client still reaches what needs no password
(identify, verify): the lockout guards the password, not the app. Clients are told apart by their network address
(the proxy's, behind a reverse proxy, unless the app is told to trust it: `--trusted-proxy`). Guessing from many
addresses is capped too: after `max_failures_overall` wrong passwords from all clients within the window, every
admin call is refused until the window has passed.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable

from facerec.errors import AccessDenied, LockedOut

MAX_CLIENTS_TRACKED = 10_000


class AdminGuard:
    def __init__(self, password: str | None, max_failures: int = 5, window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, max_failures_overall: int = 30) -> None:
        self._password = _normalised(password) if password else None
        self.max_failures, self.window_s, self._clock = max_failures, window_s, clock
        self.max_failures_overall = max_failures_overall
        self._failures: dict[str, deque[float]] = {}
        self._all_failures: deque[float] = deque()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._password is not None

    def check(self, given: str | None, client: str) -> None:
        """Return if `given` is the admin password (or none is set); raise AccessDenied otherwise."""
        if not self.is_admin(given, client):
            raise AccessDenied("This action needs the admin password.")

    def is_admin(self, given: str | None, client: str) -> bool:
        """True for the right password (or when none is set), False for no password; a wrong one, or any while
        this client is locked out, raises AccessDenied."""
        if self._password is None:
            return True
        if not given:
            return False  # not a guess, and what needs no password stays open even while locked out
        with self._lock:
            failures = self._recent(client)
            if len(failures) >= self.max_failures:
                wait = math.ceil(failures[0] + self.window_s - self._clock())
                raise LockedOut(f"Too many wrong admin passwords from this address; try again in {wait} s.")
            self._forget_old(self._all_failures)
            if len(self._all_failures) >= self.max_failures_overall:
                wait = math.ceil(self._all_failures[0] + self.window_s - self._clock())
                raise LockedOut(f"Too many wrong admin passwords from several addresses; admin actions are "
                                   f"paused, try again in {wait} s.")
        if hmac.compare_digest(_normalised(given), self._password):
            with self._lock:
                self._failures.pop(client, None)
            return True
        with self._lock:
            if client not in self._failures and len(self._failures) >= MAX_CLIENTS_TRACKED:
                self._failures.pop(next(iter(self._failures)))  # the longest-tracked client
            self._failures.setdefault(client, deque()).append(self._clock())
            self._all_failures.append(self._clock())
        raise AccessDenied("Wrong admin password.")

    def _recent(self, client: str) -> deque[float]:
        failures = self._failures.get(client, deque())
        self._forget_old(failures)
        if not failures:
            self._failures.pop(client, None)
        return failures

    def _forget_old(self, failures: deque[float]) -> None:
        while failures and failures[0] <= self._clock() - self.window_s:
            failures.popleft()


def _normalised(password: str) -> bytes:
    return unicodedata.normalize("NFC", str(password)).encode("utf-8")
