"""Warm start: the shipped ONNX model's weights map back onto the torch modules exactly, and a high-resolution
stem moves to the standard stem computing the same first features at half the resolution."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training tests need the 'train' extra")

from facerec.settings import Settings  # noqa: E402
from facerec.train.backbone import FaceEmbedder  # noqa: E402
from facerec.train.warm_start import load_onnx_weights, to_standard_stem  # noqa: E402


@pytest.fixture(scope="module")
def aligned_faces(celeba112) -> np.ndarray:
    from PIL import Image

    photos = sorted(p for folder in sorted(celeba112.iterdir())[:40] for p in folder.iterdir())[:48]
    return np.stack([np.asarray(Image.open(p).convert("RGB")) for p in photos])


def _onnx_embeddings(path, batch: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"images": batch})[0]


def _torch_embeddings(model, batch: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return torch.nn.functional.normalize(model(torch.from_numpy(batch)), dim=1).numpy()


def test_onnx_weights_map_back_exactly_from_an_fp32_export(aligned_faces: np.ndarray, tmp_path) -> None:
    from facerec.train.export import export_onnx

    torch.manual_seed(0)
    trained = FaceEmbedder("high_res").eval()
    for module in trained.modules():  # non-trivial batch-norm parameters and statistics, as after training
        if isinstance(module, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            with torch.no_grad():
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    export_onnx(trained, tmp_path / "model.onnx")
    model = load_onnx_weights(tmp_path / "model.onnx", aligned_faces[:32])
    batch = aligned_faces[32:].transpose(0, 3, 1, 2).astype(np.float32)
    expected = _onnx_embeddings(tmp_path / "model.onnx", batch)
    assert np.abs(_torch_embeddings(model, batch) - expected).max() < 1e-4


def test_the_shipped_int8_model_warm_starts_a_run(aligned_faces: np.ndarray, tmp_path) -> None:
    """The shipped model is int8 (QDQ): its dequantised weights start the next round of training."""
    model = load_onnx_weights(Settings().model_path, aligned_faces[:32])
    model_path = Settings().model_path
    batch = aligned_faces[32:].transpose(0, 3, 1, 2).astype(np.float32)
    shipped = _onnx_embeddings(model_path, batch)
    assert float((_torch_embeddings(model, batch) * shipped).sum(axis=1).min()) > 0.99
    # Batch-norms were rebuilt from real statistics: training-mode output stays close to the shipped function.
    model.train()
    assert float((_torch_embeddings(model, batch) * shipped).sum(axis=1).mean()) > 0.8


def test_standard_stem_samples_the_high_resolution_stem_every_second_pixel() -> None:
    torch.manual_seed(0)
    high_res = FaceEmbedder("high_res").eval()
    standard = to_standard_stem(high_res)
    assert standard.stem_name == "standard"
    images = torch.rand(2, 3, 112, 112) * 255
    with torch.no_grad():
        first_high = high_res.features[0](images)
        first_standard = standard.features[0](images)
        assert torch.allclose(first_standard, first_high[:, :, ::2, ::2], atol=1e-4)
        assert standard.features(images).shape == (2, 512, 4, 4)
        assert standard(images).shape == (2, 512)
