"""Can a saved FAISS index be trusted? Its bytes, its vectors' lengths, and its agreement with the database.

Why: the database is the source of truth and the index a cache of it, so a saved index that lies must be caught
and rebuilt, not searched. Two lies got through before (#29 row 2): another gallery's index.faiss + index.json
copied in (the journal check compared one journal entry, which every gallery shares, and a stranger was named),
and one flipped exponent byte (a vector of length 424: every query, strangers too, "matched" it with a
"similarity" of 6-25). Each check raises ValueError with the reason; `JournalFollowingIndex.open` then rebuilds
from the database and says why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from facerec.provenance import file_sha256
from facerec.storage import Store

UNIT_TOLERANCE = 1e-2  # fp16 storage (flat16) keeps lengths within ~1e-3; damage is orders of magnitude off
SAMPLED_FACES = 32  # faces compared with the database on load: enough to tell another gallery's index
CHUNK = 65_536


def check_checksum(path: Path, expected: str | None) -> None:
    """The file's sha256 must be the one its save recorded (an index saved before checksums were kept has none)."""
    if expected is not None and file_sha256(path) != expected:
        raise ValueError("index.faiss is not the file its last save wrote (damaged, or copied in)")


def check_unit_lengths(index, dimension: int) -> None:
    """Every stored vector must be of unit length: a longer one would out-score every real face."""
    count = int(index.ntotal)
    for start in range(0, count, CHUNK):
        vectors = index.reconstruct_n(start, min(CHUNK, count - start)).reshape(-1, dimension)
        norms = np.linalg.norm(vectors.astype(np.float64), axis=1)
        bad = np.flatnonzero(~np.isfinite(norms) | (np.abs(norms - 1.0) > UNIT_TOLERANCE))
        if len(bad):
            raise ValueError(f"stored vector {start + int(bad[0])} has length {norms[bad[0]]:.4g}, not 1 (damaged)")


def check_against_database(ids: np.ndarray, reconstruct, store: Store) -> None:
    """A spread sample of the index's faces must hold the database's own vectors for the same face ids."""
    if not len(ids):
        return
    sample = np.unique(ids[np.linspace(0, len(ids) - 1, min(SAMPLED_FACES, len(ids))).astype(int)])
    found, vectors = store.faces.embeddings([int(i) for i in sample])
    if len(found) != len(sample):
        raise ValueError("it holds faces the database does not have (another gallery's index)")
    for face_id, vector in zip(found, vectors):
        if np.max(np.abs(reconstruct(int(face_id)) - vector)) > UNIT_TOLERANCE:
            raise ValueError("its vectors differ from the database's (another gallery's index)")
