"""Something costly to load (a network's session, dlib's predictor), loaded on first use and once, whichever thread
asks first: what is loaded is read-only afterwards, so threads share it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class LoadedOnce(Generic[T]):
    """`load()` run by the first `get()`, under a lock so that two threads asking at once load it once."""

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._load()
        return self._value
