"""The saved vector index is never trusted over the database: a forged vector with a recomputed checksum, an index
file without its digest, a flipped bit or another gallery's index each rebuild it from the database."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hardening import display

from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings


# ----- the saved index ------------------------------------------------------------------------------------------
def forty_people(lfw) -> list[str]:
    return sorted(p.name for p in lfw.iterdir() if (p / f"{p.name}_0002.jpg").exists())[:40]


@pytest.fixture(scope="module")
def forty(tmp_path_factory, lfw, lfw_photo):
    """A closed gallery of 40 LFW people (photo 1 each): more faces than the 32 that opening samples."""
    home = tmp_path_factory.mktemp("forty") / "home"
    from facerec.faces.choice import largest_face_index

    with Gallery(Settings(home=home)) as gallery:
        for person in forty_people(lfw):
            photo, faces = gallery.services().photos.detect(lfw_photo(person, 1))
            gallery.enroll(photo, display(person), face_index=largest_face_index(faces), allow_lookalike=True,
                           allow_low_quality=True)
    return home


def copy_of(home: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(home, target)
    return target


def test_a_forged_vector_with_a_recomputed_checksum_is_never_searched(forty, tmp_path, lfw_photo):
    """Row 5: replacing a vector outside the sampled ones and recomputing index.json's sha256 made a stranger
    "someone" at similarity 1.000. Opening now compares every vector with the database's (#48 row 11; a seal keyed
    by a secret in the database came between, and a copy of the database forged it)."""
    import faiss

    from facerec.provenance import file_sha256
    from facerec.vectors.index_integrity import meta_digest

    SAMPLED_FACES = 32  # the faces opening sampled then

    home = copy_of(forty, tmp_path / "home")
    stranger = lfw_photo("Art_Hoffmann", 1)  # one photo in LFW: not among the forty
    with Gallery(Settings(home=tmp_path / "scratch")) as scratch:
        (face,) = scratch.services().photos.detect(stranger)[1]
        vector = parts_of(scratch).pipeline.embed(scratch.services().photos.read(stranger), [face])[1][0]
    index = faiss.read_index(str(home / "index.faiss"))
    ids = faiss.vector_to_array(index.id_map)
    sampled = set(np.linspace(0, len(ids) - 1, min(SAMPLED_FACES, len(ids))).astype(int).tolist())
    position = next(i for i in range(len(ids)) if i not in sampled)
    victim = int(ids[position])
    index.remove_ids(np.array([victim], np.int64))
    index.add_with_ids(vector[None].astype(np.float32), np.array([victim], np.int64))
    faiss.write_index(index, str(home / "index.faiss"))
    meta = json.loads((home / "index.json").read_text())
    meta["sha256"] = file_sha256(home / "index.faiss")
    meta["meta_sha256"] = meta_digest(meta)
    (home / "index.json").write_text(json.dumps(meta))
    with Gallery(Settings(home=home)) as gallery:
        assert gallery.services().maintenance.notices and f"vector of face {victim} is not the database's" in " ".join(gallery.services().maintenance.notices)
        (match,) = gallery.identify(stranger)
    assert match.name is None and match.similarity < 0.9, (match.name, match.similarity)


def test_an_index_json_without_its_digest_is_rebuilt_not_trusted(forty, tmp_path):
    home = copy_of(forty, tmp_path / "home")
    meta = json.loads((home / "index.json").read_text())
    del meta["meta_sha256"]
    (home / "index.json").write_text(json.dumps(meta))
    with Gallery(Settings(home=home)) as gallery:
        assert "damaged" in " ".join(gallery.services().maintenance.notices)
        assert len(parts_of(gallery).index) == 40


def test_a_flipped_bit_or_another_gallerys_index_rebuilds_instead_of_refusing(forty, tmp_path, lfw_photo):
    """Row 6: one flipped bit of `seq`, or another gallery's index with a higher seq, stopped the app from
    opening ("gallery.db was replaced ..."). The index is a cache of the database: it is rebuilt."""
    flipped = copy_of(forty, tmp_path / "flipped")
    meta = json.loads((flipped / "index.json").read_text())
    meta["seq"] ^= 1 << 20
    (flipped / "index.json").write_text(json.dumps(meta))
    with Gallery(Settings(home=flipped)) as gallery:
        assert "damaged" in " ".join(gallery.services().maintenance.notices) and len(parts_of(gallery).index) == 40

    small = tmp_path / "small"
    with Gallery(Settings(home=small)) as gallery:
        gallery.enroll(lfw_photo("Colin_Powell", 1), "Colin Powell")
    for name in ("index.faiss", "index.json"):  # the 40-face gallery's index, at a far higher journal position
        (small / name).write_bytes((forty / name).read_bytes())
    with Gallery(Settings(home=small)) as gallery:
        assert "another gallery" in " ".join(gallery.services().maintenance.notices)
        assert [p.name for p in gallery.people()] == ["Colin Powell"] and len(parts_of(gallery).index) == 1
