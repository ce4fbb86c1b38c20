"""What the gallery asks of a vector engine: search the enrolled faces' embeddings, and follow the database.

The database is the source of truth for which faces exist and what their embeddings are. An index holds (or
reaches) those embeddings keyed by face id and answers nearest-neighbour queries by inner product, which is the
cosine similarity for the gallery's unit-length embeddings. `sync` brings it up to date with every change
committed so far, by this or any other process; `seq` is the journal position it reflects.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from facerec.storage import Store


class FaceVectors(ABC):
    """Face ids -> unit vectors, searched by inner product: what every engine and every index does."""

    kind: str  # the name `Settings.index_kind` selects it by
    dimension: int = 512

    @abstractmethod
    def __len__(self) -> int:
        """Faces a search can return."""

    @abstractmethod
    def add(self, ids: np.ndarray, embeddings: np.ndarray) -> None:
        """Take in faces the database committed: ids [N] int64, embeddings [N, D] float32 unit vectors."""

    @abstractmethod
    def remove(self, ids: np.ndarray) -> None:
        """Forget faces the database deleted."""

    @abstractmethod
    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(similarities [Q, k'] float32, best first, face ids [Q, k'] int64) for queries [Q, D] with
        k' = min(k, faces held), at least 1; ids are -1 where the index is empty."""


class VectorIndex(FaceVectors):
    """What the gallery asks of a vector engine: `FaceVectors` that follow the database."""

    seq: int = 0  # journal sequence this index reflects
    notice: str | None = None  # one line for the user when opening it had to repair something

    @abstractmethod
    def sync(self, store: Store) -> None:
        """Apply every database change committed since `seq` (by this or any other process)."""

    @abstractmethod
    def rebuild(self, store: Store) -> None:
        """Start again from the database, after changes `sync` cannot apply one by one (a re-embedding)."""

    @abstractmethod
    def reconstruct_all(self) -> tuple[np.ndarray, np.ndarray]:
        """(face ids, embeddings) the index returns: what tests compare with the database."""

    def reconstruct_ids(self) -> np.ndarray:
        return self.reconstruct_all()[0]

    def describe(self) -> dict:
        """Which index serves the gallery's searches, for Health: {"engine": the kind, "index": "exact" or
        "approximate", "faces", "recall": an approximate index's recall@1 measured when it was built, where it
        measures one, "building": a graph under construction in the background}."""
        return {"engine": self.kind, "index": "approximate", "faces": len(self), "recall": None, "building": False}

    def memory(self) -> dict | None:
        """What the engine needs in memory against what it has, where a server holds it (pgvector: the HNSW index
        against PostgreSQL's `shared_buffers`), for stats and the operator's warning; None in this process."""
        return None

    def after_write(self, store: Store) -> None:
        """This process committed a write: take it in now, so it reads its own writes."""
        self.sync(store)

    def flush(self, store: Store) -> None:
        """Keep now whatever the database does not already hold (nothing, unless the index is a local copy)."""

    def close(self, store: Store) -> None:
        self.sync(store)
        self.flush(store)
