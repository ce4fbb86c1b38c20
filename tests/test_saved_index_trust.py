"""A saved index is searched only when the database vouches for every vector in it, whoever can read the database.

The attack (#48 row 11): the seal of index.json was keyed by a secret kept in gallery.db, so anyone with a copy of
the database (a backup) could rewrite index.faiss with a stranger's face in place of an enrolled one, recompute
every checksum, re-seal index.json, and the stranger was named at similarity 1.000 with no notice. Now opening
compares every face the index holds with the database's own vector, so an index the database cannot vouch for is
rebuilt, and no secret is kept.

Real faces: LFW photo 1 of forty people, more than the 32 faces opening sampled before; the stranger is Art
Hoffmann, who has one photo in LFW and is not among them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from facerec.faces.choice import largest_face_index
from facerec.gallery import Gallery
from facerec.provenance import file_sha256
from facerec.settings import Settings

STRANGER = "Art_Hoffmann"
SAMPLED_BEFORE = 32  # faces a spread sample of which opening compared with the database before


@pytest.fixture(scope="module")
def forty(tmp_path_factory, lfw, lfw_photo) -> Path:
    """A closed gallery of forty LFW people (photo 1 each), with its saved index."""
    home = tmp_path_factory.mktemp("forty") / "home"
    people = sorted(p.name for p in lfw.iterdir() if (p / f"{p.name}_0002.jpg").exists())[:40]
    with Gallery(Settings(home=home)) as gallery:
        for person in people:
            photo, faces = gallery.detect(lfw_photo(person, 1))
            gallery.enroll(photo, person.replace("_", " "), face_index=largest_face_index(faces),
                           allow_lookalike=True, allow_low_quality=True)
    return home


def database(home: Path, statement: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(home / "gallery.db") as connection:
        return connection.execute(statement, params).fetchall()


def stranger_vector(tmp_path: Path, lfw_photo) -> np.ndarray:
    with Gallery(Settings(home=tmp_path / "scratch")) as scratch:
        photo = scratch.read(lfw_photo(STRANGER, 1))
        (face,) = scratch.detect(photo)[1]
        return scratch.pipeline.embed(photo, [face])[1][0]


def vouch(home: Path, meta: dict) -> dict:
    """index.json made to pass every check its own fields allow, by someone holding a copy of the database: the
    index file's sha256, and the digest or seal of the fields (an HMAC keyed by the database's secret, where the
    database keeps one)."""
    meta = {**meta, "sha256": file_sha256(home / "index.faiss")}
    fields = json.dumps({k: v for k, v in meta.items() if k not in ("seal", "meta_sha256")}, sort_keys=True).encode()
    if "meta_sha256" in meta:
        meta["meta_sha256"] = hashlib.sha256(fields).hexdigest()
    if "seal" in meta:
        (secret,), = database(home, "SELECT value FROM settings WHERE key = 'index_secret'")
        meta["seal"] = hmac.new(bytes.fromhex(secret), fields, hashlib.sha256).hexdigest()
    return meta


def test_a_forged_index_is_rebuilt_even_by_someone_holding_the_database(forty, tmp_path, lfw_photo):
    import faiss

    home = tmp_path / "home"
    shutil.copytree(forty, home)
    stranger = stranger_vector(tmp_path, lfw_photo)
    index = faiss.read_index(str(home / "index.faiss"))
    ids = faiss.vector_to_array(index.id_map)
    sampled = set(np.linspace(0, len(ids) - 1, min(SAMPLED_BEFORE, len(ids))).astype(int).tolist())
    position = next(i for i in range(len(ids)) if i not in sampled)
    victim = int(ids[position])
    flat = faiss.downcast_index(index.index)
    stored = faiss.rev_swig_ptr(flat.get_xb(), flat.ntotal * flat.d).reshape(flat.ntotal, flat.d)
    stored[position] = stranger  # the same ids in the same order, one enrolled face swapped for the stranger's
    faiss.write_index(index, str(home / "index.faiss"))
    meta = json.loads((home / "index.json").read_text())
    (home / "index.json").write_text(json.dumps(vouch(home, meta)))

    with Gallery(Settings(home=home)) as gallery:
        (match,) = gallery.identify(lfw_photo(STRANGER, 1), remember=False)
        assert match.name is None and match.similarity < 0.9, (match.name, match.similarity)
        notice = " ".join(gallery.notices)
        assert "rebuilt" in notice and f"face {victim}" in notice, gallery.notices
        held = dict(zip(*gallery.index.reconstruct_all()))
        (stored,), = database(home, "SELECT embedding FROM faces WHERE id = ?", (victim,))
        assert np.allclose(held[victim], np.frombuffer(stored, np.float32), atol=1e-6)


def test_no_secret_is_kept_and_an_index_sealed_the_old_way_still_opens(forty, tmp_path, lfw_photo):
    """A gallery saved by the facerec before this change (index.json sealed with a secret kept in the database)
    opens and names its people; the secret, which a backup carried, is deleted from the database."""
    home = tmp_path / "home"
    shutil.copytree(forty, home)
    secret = secrets.token_hex(32)
    database(home, "INSERT OR REPLACE INTO settings (key, value) VALUES ('index_secret', ?)", (secret,))
    meta = {k: v for k, v in json.loads((home / "index.json").read_text()).items() if k != "meta_sha256"}
    fields = json.dumps({k: v for k, v in meta.items() if k != "seal"}, sort_keys=True).encode()
    meta["seal"] = hmac.new(bytes.fromhex(secret), fields, hashlib.sha256).hexdigest()
    (home / "index.json").write_text(json.dumps(meta))
    with Gallery(Settings(home=home)) as gallery:
        assert len(gallery.index) == 40
        person = sorted(p.name for p in gallery.list())[0]
        (match,) = gallery.identify(lfw_photo(person.replace(" ", "_"), 1), remember=False)
        assert match.name == person
    assert database(home, "SELECT COUNT(*) FROM settings WHERE key = 'index_secret'") == [(0,)]
    assert "seal" not in json.loads((home / "index.json").read_text())
    with Gallery(Settings(home=home)) as reopened:  # saved the new way: opened without a rebuild
        assert not reopened.notices, reopened.notices
