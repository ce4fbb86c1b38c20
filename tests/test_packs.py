"""Model packs (#61): every pack's whole path on the shipped public-domain portraits, choosing a pack by name,
`facerec models`, and switching a gallery's pack with `facerec reindex` (which says what it costs first)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from facerec.errors import InvalidArgument
from facerec.faces.align import ARCFACE_TEMPLATE, align_face
from facerec.faces.dlib_detect import DLIB_POINTS_IN_CROP, arcface_points
from facerec.faces.pipeline import FacePipeline
from facerec.gallery import Gallery
from facerec.packs.catalog import DEFAULT_PACK, FUSED_PACK, PACKS, PUBLIC_DOMAIN_PACK
from facerec.settings import Settings, pack_file
from tests.test_user_words import facerec

REPO_ROOT = Path(__file__).resolve().parents[1]
PORTRAITS = Path(__file__).resolve().parent / "faces"  # the shipped public-domain portraits


@functools.cache
def portraits_by(pack: str) -> tuple[FacePipeline, np.ndarray, np.ndarray]:
    """(the pack's pipeline, the largest face's embedding of each shipped portrait, whose portrait)."""
    pipeline = FacePipeline(Settings(model_path=pack_file(pack)))
    vectors, names = [], []
    for path in sorted(PORTRAITS.glob("*/*.jpg")):
        photo = pipeline.read(path)
        faces = pipeline.detect(photo)
        assert faces, f"{pack} found no face in {path.name}"
        _crops, embedded = pipeline.embed(photo, [max(faces, key=lambda face: face.area)])
        vectors.append(embedded[0])
        names.append(path.parent.name)
    return pipeline, np.array(vectors), np.array(names)


@pytest.mark.parametrize("pack", list(PACKS))
def test_every_pack_tells_the_portraits_apart(pack: str) -> None:
    """Each pack's own detector, alignment and network: unit 512-d embeddings, and Barack Obama's three portraits
    closer to each other than to anyone else's."""
    _pipeline, vectors, names = portraits_by(pack)
    assert vectors.shape[1] == 512
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    same, other = names[:, None] == names[None, :], names[:, None] != names[None, :]
    np.fill_diagonal(same, False)
    assert same.any()
    assert similarity[same].min() > similarity[other].max(), pack


def test_the_public_domain_pack_stores_dlibs_128_numbers_then_zeros() -> None:
    pipeline, vectors, _names = portraits_by(PUBLIC_DOMAIN_PACK)
    assert np.all(vectors[:, 128:] == 0)
    assert pipeline.embedder.model_id.startswith(f"{PUBLIC_DOMAIN_PACK}@")


def test_the_fused_score_is_the_weighted_sum_of_its_parts() -> None:
    """The join keeps its promise on real faces: a dot product of fused vectors is (1 - w) x facerec's cosine in
    its 384 directions + w x dlib's cosine."""
    _pipeline, vectors, _names = portraits_by(FUSED_PACK)
    card = json.loads((REPO_ROOT / "models" / f"{FUSED_PACK}.json").read_text())
    weight = card["pack"]["dlib_weight"]
    dlib_part = vectors[:, 384:] / np.sqrt(weight)
    facerec_part = vectors[:, :384] / np.sqrt(1 - weight)
    assert np.allclose(np.linalg.norm(dlib_part, axis=1), 1, atol=1e-4)
    expected = (1 - weight) * facerec_part @ facerec_part.T + weight * dlib_part @ dlib_part.T
    assert np.allclose(vectors @ vectors.T, expected, atol=1e-5)


def test_dlibs_points_become_the_alignment_they_imply() -> None:
    """Points where dlib's five fall in an aligned crop give facerec's template back, and an image whose dlib
    points sit there is aligned onto itself."""
    assert np.allclose(arcface_points(DLIB_POINTS_IN_CROP), ARCFACE_TEMPLATE, atol=1e-4)
    image = np.random.default_rng(0).integers(0, 256, (112, 112, 3), dtype=np.uint8)
    crop = align_face(image, arcface_points(DLIB_POINTS_IN_CROP))
    assert np.abs(crop.astype(int) - image.astype(int))[4:-4, 4:-4].max() <= 1


def test_a_pack_is_chosen_by_name_and_an_unknown_one_is_refused() -> None:
    assert pack_file(PUBLIC_DOMAIN_PACK).name == f"{PUBLIC_DOMAIN_PACK}.onnx"
    with pytest.raises(ValueError, match="no model pack called 'nope'; the packs here: .*dlib-public-domain"):
        pack_file("nope")
    with pytest.raises(ValueError, match="no model pack"):
        pack_file("../models/facerec-r18-arcface")


def test_the_environment_chooses_one_model(monkeypatch) -> None:
    monkeypatch.setenv("FACEREC_PACK", PUBLIC_DOMAIN_PACK)
    assert Settings.from_env().model_path == pack_file(PUBLIC_DOMAIN_PACK)
    monkeypatch.setenv("FACEREC_MODEL", str(pack_file(DEFAULT_PACK)))
    with pytest.raises(InvalidArgument, match="FACEREC_MODEL and FACEREC_PACK both choose the model"):
        Settings.from_env()


def test_facerec_models_lists_every_pack_with_its_licence_and_figures(tmp_path) -> None:
    result = facerec("models", "--json", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    packs = {row["name"]: row for row in json.loads(result.stdout)["packs"]}
    assert set(packs) == set(PACKS)
    assert packs[DEFAULT_PACK]["in_use"] and not packs[PUBLIC_DOMAIN_PACK]["in_use"]
    assert packs[PUBLIC_DOMAIN_PACK]["commercial_use"].startswith("yes")
    assert packs[DEFAULT_PACK]["commercial_use"].startswith("no")
    assert all(part["licence"].startswith("public domain") for part in packs[PUBLIC_DOMAIN_PACK]["parts"])
    for row in packs.values():
        assert row["installed"]
        assert 0 < row["held_out_tar_at_far"]["1e-04"] < 1
    text = facerec("models", "--pack", PUBLIC_DOMAIN_PACK, home=tmp_path / "home")
    assert f"* {PUBLIC_DOMAIN_PACK}" in text.stdout
    wrong = facerec("models", "--pack", "nope", home=tmp_path / "home")
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "no model pack called 'nope'" in wrong.stderr


def test_switching_a_gallerys_pack_says_the_cost_then_re_embeds(tmp_path, portrait) -> None:
    """A gallery enrolled with the default pack: opened with the public-domain pack it refuses to search with
    the other pack's embeddings, `reindex --estimate` states the faces and time, `reindex` re-embeds, and the
    person is named again by the new pack."""
    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as gallery:
        for person in ("Barack_Obama", "Joe_Biden"):
            gallery.enroll(portrait(person, 1), person.replace("_", " "), allow_low_quality=True)
    probe = str(portrait("Barack_Obama", 3))
    before = facerec("identify", probe, "--pack", PUBLIC_DOMAIN_PACK, home=home)
    assert "facerec reindex" in before.stdout + before.stderr
    estimate = facerec("reindex", "--estimate", "--pack", PUBLIC_DOMAIN_PACK, "--json", home=home)
    assert estimate.returncode == 0, estimate.stderr
    cost = json.loads(estimate.stdout)["estimate"]
    assert cost["faces"] == 2 and cost["ms_per_face"] > 0 and cost["model_id"].startswith(PUBLIC_DOMAIN_PACK)
    done = facerec("reindex", "--pack", PUBLIC_DOMAIN_PACK, home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2 face(s) to re-embed with dlib-public-domain@") and "ms a face" in done.stdout
    after = facerec("identify", probe, "--pack", PUBLIC_DOMAIN_PACK, "--json", home=home)
    assert after.returncode == 0, after.stderr
    assert "Barack Obama" in after.stdout


def test_without_dlib_a_dlib_pack_says_how_to_install_it(tmp_path, portrait) -> None:
    """dlib blocked from importing: one line naming the extra, no traceback."""
    code = ("import sys; sys.modules['dlib'] = None\n"
            "from facerec.cli import main\n"
            f"sys.exit(main(['identify', {str(portrait('Barack_Obama', 1))!r}, '--pack', "
            f"{PUBLIC_DOMAIN_PACK!r}, '--home', {str(tmp_path / 'home')!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: this model pack runs dlib's landmarks and detector, and dlib is not installed: "
        "pip install 'facerec[packs]'."]
