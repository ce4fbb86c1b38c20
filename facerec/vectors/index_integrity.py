"""Can a saved FAISS index be trusted? Whose it is, whether its files are intact, and every vector in it.

Why: the database is the source of truth and the index a cache of it, so a saved index that lies must be caught
and rebuilt, not searched. What got through before: another gallery's index.faiss + index.json copied in (#29 row
2), one flipped exponent byte (a vector of length 424 that every query "matched" at 6-25), a vector replaced
outside a sampled few with its checksum recomputed (#39 row 5), and, once index.json was sealed with an HMAC keyed
by a secret kept in the database, the same forgery by anyone holding a copy of the database (#48 row 11: the secret
travelled with every backup and never rotated; a stranger was named at 1.000, no notice).

So trust rests on the database alone, with no secret: after the saved index is loaded and brought up to the
journal's head, every face it can return is compared with the database's own vector (`check_against_database`),
and every face of the database must be in it. The vectors are read once, in batches, at open: the cost of reading
the embeddings, without the cost of building the index (which, for an HNSW graph, is the larger one). index.json
still names the gallery (`settings.gallery_id`: another gallery's index is rebuilt, never refused) and carries a
digest of its own fields, and the file's sha256: damage there (a flipped bit of the journal position) rebuilds
instead of refusing. Neither is a secret, nor needs one: a forged index.json can at worst claim to be newer than
the database and so stop the gallery from opening (`saved_files.refuse_foreign_database`), which whoever can
write the gallery folder could do anyway; it can never make the index search a vector the database lacks. (An
HNSW graph's candidates are re-scored with its exact vectors, which are the ones compared; the graph itself, which
proposes the candidates, is covered by the file's sha256 only: forged, it can hide a face, never raise a score.) An
index.json sealed the old way is still believed as far as its seal goes (checked with the old secret, so an
upgrade costs no rebuild), saved anew, and the secret deleted from the database.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from pathlib import Path

import numpy as np

from facerec.provenance import file_sha256
from facerec.storage import Store

# Euclidean distance allowed between a stored vector and the database's: float16 storage (flat16) rounds a unit
# vector by at most ~5e-4, and no similarity can then differ from the database's by more than this.
VECTOR_TOLERANCE = 1e-3
VERIFY_BATCH = 8192  # faces read from the database at a time while verifying

GALLERY_ID = "gallery_id"  # key of the database's settings table
OLD_SECRET = "index_secret"  # what facerec before #48 row 11 sealed index.json with: deleted when seen


def gallery_id(store: Store) -> str:
    """This gallery's id, made the first time it is asked for and kept in the database (not a secret: it tells
    this gallery's index from another's)."""
    return store.setting_once(GALLERY_ID, lambda: str(uuid.uuid4()))


def old_secret(store: Store) -> bytes | None:
    """The secret an older facerec sealed index.json with, while the database still holds it."""
    value = store.get_setting(OLD_SECRET)
    return bytes.fromhex(value) if value else None


def forget_old_secret(store: Store) -> None:
    if store.get_setting(OLD_SECRET) is not None:
        store.delete_setting(OLD_SECRET)


def _fields(meta: dict) -> bytes:
    """index.json's fields but its digest or seal, as digested (the old seal's HMAC took the same bytes)."""
    return json.dumps({k: v for k, v in meta.items() if k not in ("meta_sha256", "seal")}, sort_keys=True).encode()


def meta_digest(meta: dict) -> str:
    """The sha256 of index.json's fields: catches damage (anyone can recompute it; see the module)."""
    return hashlib.sha256(_fields(meta)).hexdigest()


def check_meta(meta: dict, gallery: str, secret: bytes | None = None) -> None:
    """index.json must name this gallery and hold its fields' digest, or (saved by an older facerec) the seal
    the database's old `secret` makes; otherwise it is damaged and the index is rebuilt."""
    if meta.get("gallery_id") != gallery:
        raise ValueError("it belongs to another gallery" if meta.get("gallery_id") else "it names no gallery")
    if "meta_sha256" not in meta and secret is not None and isinstance(meta.get("seal"), str):
        if not hmac.compare_digest(meta["seal"], hmac.new(secret, _fields(meta), hashlib.sha256).hexdigest()):
            raise ValueError("its seal does not match (index.json was altered)")
        return
    if meta.get("meta_sha256") != meta_digest(meta):
        raise ValueError("index.json is damaged (the digest of its fields does not match)")


def check_checksum(path: Path, expected: str | None) -> None:
    """The file's sha256 must be the one its save recorded; none recorded is a failure too."""
    if expected is None or file_sha256(path) != expected:
        raise ValueError("index.faiss is not the file its last save wrote (damaged, or copied in)")


def check_against_database(ids: np.ndarray, vectors_of, store: Store) -> None:
    """The faces an index can return (`ids`) must be exactly the database's, each holding the database's vector
    within VECTOR_TOLERANCE (`vectors_of(ids)` gives them [N, D], as stored). ValueError naming the first face
    that differs. Reads every embedding once, VERIFY_BATCH at a time."""
    held = np.sort(np.asarray(ids, np.int64))
    if len(np.unique(held)) != len(held):
        raise ValueError("it holds a face twice")
    checked = 0
    for face_ids, embeddings in store.faces.batches(VERIFY_BATCH):
        where = np.minimum(np.searchsorted(held, face_ids), max(len(held) - 1, 0))
        missing = face_ids[held[where] != face_ids] if len(held) else face_ids
        if len(missing):
            raise ValueError(f"it lacks face {int(missing[0])} of the database")
        difference = vectors_of(face_ids) - embeddings
        squared = np.einsum("ij,ij->i", difference, difference)  # float32: far finer than the tolerance
        wrong = np.flatnonzero(~(squared <= VECTOR_TOLERANCE**2))  # NaN is wrong too
        if len(wrong):
            raise ValueError(f"its vector of face {int(face_ids[wrong[0]])} is not the database's")
        checked += len(face_ids)
    if checked != len(held):
        raise ValueError("it holds faces the database does not have (another gallery's index)")
