"""What an engine that keeps its own copy of the embeddings implements: the vectors, searched, and their file.

Everything else a local copy needs (following the database's journal, rebuilding, the count check, saving it
beside the database, refusing another gallery's database) is the same for every such engine and lives in
`facerec.vectors.following`. A new engine (Annoy, USearch, a Qdrant local collection) writes one of these.
"""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path

import numpy as np

from facerec.vectors.base import FaceVectors


class LocalVectors(FaceVectors):
    """`FaceVectors` held in this process (`search` is asked for 1 <= k <= len). Not thread-safe: the follower
    holds the lock."""

    @abstractmethod
    def ids(self) -> np.ndarray:
        """The face ids a search can return."""

    @abstractmethod
    def vector(self, face_id: int) -> np.ndarray:
        """The stored vector of a held face (as stored: fp16 kinds round it)."""

    def vectors(self, face_ids: np.ndarray) -> np.ndarray:
        """The stored vectors [N, D] of held faces, in the order asked (what opening compares with the database;
        an engine that can read many at once overrides it)."""
        return np.stack([self.vector(int(face_id)) for face_id in face_ids]).reshape(len(face_ids), self.dimension)

    @property
    def reads_kinds(self) -> tuple[str, ...]:
        """The kinds of saved index this engine opens: its own (an engine that can take over another's file, as
        `auto` takes `flat`'s, names it too)."""
        return (self.kind,)

    @abstractmethod
    def built(self, ids: np.ndarray, embeddings: np.ndarray) -> "LocalVectors":
        """A new instance of the same kind and options holding exactly these faces, built in one go."""

    def cannot_replay(self, changed: list[int], new: list[int]) -> bool:
        """True when these journal changes (faces whose vector changed; faces new to it) need a rebuild."""
        return False

    def wants_rebuild(self) -> bool:
        """True when the copy has degraded enough (e.g. a graph's tombstones) that a rebuild pays."""
        return False

    @abstractmethod
    def write(self, path: Path) -> dict:
        """Write the vectors to `path`; returns what `read` needs besides the file (JSON-able)."""

    @abstractmethod
    def read(self, path: Path, saved: dict) -> "LocalVectors":
        """A new instance holding what `write` wrote (ValueError when the file is not usable as one)."""

    @abstractmethod
    def stored_count(self) -> int:
        """Vectors physically held (tombstoned ones included): what the saved metadata records."""
