"""How many videos may be in the server at once, followed or waiting for their turn; past that, refused at once.

Why: one video is followed at a time (it takes both cores), so the others wait; a queue that accepts any number
let one anonymous client line up thirty 15 MB uploads, the last answered after ~6.5 h, each holding its upload on
disk meanwhile (#63 rows 5 and 7). With a room of `places`, the (places+1)-th video is refused in one line
("try again in a few minutes") before its upload is read (REST) or its work begins (the page), so every video
taken is answered within `places` x the time one may take. The room counts; whatever runs one video at a time
(a lock, a limiter) stays where the work is.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

from facerec.errors import Busy

PLACES = 3  # per door (REST, the page): the video being followed and two waiting


class WaitingRoom:
    """At most `places` videos inside: the one being followed and those waiting. Thread-safe."""

    def __init__(self, places: int) -> None:
        self.places = max(1, int(places))
        self._inside = 0
        self._lock = threading.Lock()

    @property
    def inside(self) -> int:
        return self._inside

    def enter(self) -> None:
        """Take a place; raises `Busy` at once when every place is taken. `leave` gives it back."""
        with self._lock:
            if self._inside >= self.places:
                raise Busy(f"{self.places} videos are already being followed or waiting here; try again in a few "
                           "minutes")
            self._inside += 1

    def leave(self) -> None:
        with self._lock:
            self._inside -= 1

    @contextlib.contextmanager
    def admitted(self) -> Iterator[None]:
        """Hold a place while the block runs (`enter`, then `leave`)."""
        self.enter()
        try:
            yield
        finally:
            self.leave()
