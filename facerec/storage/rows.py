"""How rows cross the store's boundary: embeddings as float32 NumPy vectors (bytes in the database's column
type), long id lists in chunks (SQLite bounds the parameters of one statement)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def chunked(ids: Iterable, size: int = 500):
    """Split long id lists: SQLite limits the number of bound parameters in one statement."""
    ids = list(ids)
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def encoded(vector: np.ndarray) -> bytes:
    return np.asarray(vector, np.float32).tobytes()


def decoded(value: bytes) -> np.ndarray:
    return np.frombuffer(value, dtype=np.float32)
