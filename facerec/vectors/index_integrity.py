"""Can a saved FAISS index be trusted? Its seal, its bytes, its vectors' lengths, and its agreement with the database.

Why: the database is the source of truth and the index a cache of it, so a saved index that lies must be caught
and rebuilt, not searched. Two lies got through before (#29 row 2): another gallery's index.faiss + index.json
copied in (the journal check compared one journal entry, which every gallery shares, and a stranger was named),
and one flipped exponent byte (a vector of length 424: every query, strangers too, "matched" it with a
"similarity" of 6-25). Each check raises ValueError with the reason; `JournalFollowingIndex.open` then rebuilds
from the database and says why.

The seal (#39 rows 5 and 6): index.json's checksum of index.faiss could be recomputed by whoever rewrote the file (a
vector outside the sampled ones replaced, the sha256 updated, and a stranger was named at similarity 1.000). So
index.json is sealed with an HMAC keyed by a secret that only the database holds (`settings.index_secret`, made
once per gallery, never exported), and names the gallery it belongs to (`settings.gallery_id`): a missing or wrong
seal, or another gallery's id, means the index is rebuilt from the database, never searched, and never refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import uuid
from pathlib import Path

import numpy as np

from facerec.provenance import file_sha256
from facerec.storage import Store

UNIT_TOLERANCE = 1e-2  # fp16 storage (flat16) keeps lengths within ~1e-3; damage is orders of magnitude off
SAMPLED_FACES = 32  # faces compared with the database on load: enough to tell another gallery's index
CHUNK = 65_536


GALLERY_ID, INDEX_SECRET = "gallery_id", "index_secret"  # keys of the database's settings table


def gallery_seal_keys(store: Store) -> tuple[str, bytes]:
    """(this gallery's id, the secret its saved index files are sealed with), made the first time they are asked
    for and kept in the database."""
    gallery_id = store.setting_once(GALLERY_ID, lambda: str(uuid.uuid4()))
    secret = store.setting_once(INDEX_SECRET, lambda: secrets.token_hex(32))
    return gallery_id, bytes.fromhex(secret)


def seal(meta: dict, secret: bytes) -> str:
    """The HMAC-SHA256 of index.json's fields (every one but the seal itself), keyed by the gallery's secret."""
    fields = json.dumps({k: v for k, v in meta.items() if k != "seal"}, sort_keys=True).encode()
    return hmac.new(secret, fields, hashlib.sha256).hexdigest()


def check_seal(meta: dict, gallery_id: str, secret: bytes) -> None:
    """index.json must name this gallery and carry the seal only this database's secret makes."""
    if meta.get("gallery_id") != gallery_id:
        raise ValueError("it belongs to another gallery" if meta.get("gallery_id") else "it names no gallery")
    if not isinstance(meta.get("seal"), str) or not hmac.compare_digest(meta["seal"], seal(meta, secret)):
        raise ValueError("its seal does not match this gallery's (index.json was altered, or is unsealed)")


def check_checksum(path: Path, expected: str | None) -> None:
    """The file's sha256 must be the one its (sealed) save recorded; none recorded is a failure too."""
    if expected is None or file_sha256(path) != expected:
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
