"""Centering (`facerec center`): the edited ONNX model subtracts a share of its mean training embedding and
renormalises, exactly; the edit undoes cleanly (what a warm start builds on); it spreads different people apart."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnx", reason="centering needs the 'train' extra")

from facerec.settings import Settings  # noqa: E402
from facerec.train.centering import (  # noqa: E402
    center_onnx, centered_copy, centering_crops, embedding_center, mean_embedding, uncentered_copy,
)


def _embed(model, crops: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return session.run(None, {"images": crops.transpose(0, 3, 1, 2).astype(np.float32)})[0]


@pytest.fixture(scope="module")
def crops(celeba112) -> np.ndarray:
    return centering_crops(celeba112, 64)  # 64 seeded training photos: never a held-out identity


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    """The shipped model's network without the edit it ships with (centering or a similarity map)."""
    from facerec.train.similarity_map import unmapped_copy

    folder = tmp_path_factory.mktemp("centering")
    return uncentered_copy(unmapped_copy(Settings().model_path, folder / "unmapped.onnx"), folder / "network.onnx")


def test_the_centered_model_computes_the_renormalised_difference(network, crops, tmp_path) -> None:
    mean = mean_embedding(network, crops)
    assert np.allclose(mean, _embed(network, crops).mean(axis=0), atol=1e-5)
    centered = centered_copy(network, tmp_path / "centered.onnx", crops, 0.5)
    assert np.allclose(embedding_center(centered), 0.5 * mean) and embedding_center(network) is None
    plain, moved = _embed(network, crops[:16]), _embed(centered, crops[:16])
    expected = plain - 0.5 * mean
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.abs(moved - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(moved, axis=1), 1, atol=1e-5)
    # undone exactly: the network a warm start reads; centering twice is refused
    assert np.array_equal(_embed(uncentered_copy(centered, tmp_path / "undone.onnx"), crops[:16]), plain)
    with pytest.raises(ValueError, match="centered already"):
        center_onnx(centered, tmp_path / "twice.onnx", mean)


def test_centering_spreads_different_people_apart(network, crops, tmp_path) -> None:
    # 64 photos drawn from ~6,000 people: nearly every pair is two different people. The network's faces share
    # a direction (mean cosine well above 0); fully centered, the mean of the others' similarities falls to ~0.
    plain = _embed(network, crops)
    centered = _embed(centered_copy(network, tmp_path / "full.onnx", crops, 1.0), crops)
    off_diagonal = ~np.eye(len(crops), dtype=bool)
    before, after = (plain @ plain.T)[off_diagonal].mean(), (centered @ centered.T)[off_diagonal].mean()
    assert before > 0.05 and abs(after) < 0.02


def test_the_cli_centers_and_rejects_a_strength_outside_zero_to_one(network, celeba112, tmp_path) -> None:
    def center(strength: str):
        return subprocess.run([sys.executable, "-m", "facerec.cli", "center", str(network),
                               str(tmp_path / f"c{strength}.onnx"), "--strength", strength, "--celeba",
                               str(celeba112)], capture_output=True, text=True, timeout=600)

    refused = center("1.5")
    assert refused.returncode != 0 and "--strength must be in (0, 1]" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "c1.5.onnx").exists()
    done = center("0.5")
    assert done.returncode == 0, done.stderr
    assert "centered model (strength 0.5)" in done.stdout and embedding_center(tmp_path / "c0.5.onnx") is not None
