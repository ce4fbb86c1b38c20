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


def test_onnx_weights_reproduce_the_shipped_model(aligned_faces: np.ndarray) -> None:
    import onnxruntime as ort

    model_path = Settings().model_path
    model = load_onnx_weights(model_path, aligned_faces[:32])
    batch = aligned_faces[32:].transpose(0, 3, 1, 2).astype(np.float32)
    expected = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).run(
        None, {"images": batch})[0]
    with torch.no_grad():
        actual = torch.nn.functional.normalize(model(torch.from_numpy(batch)), dim=1).numpy()
    assert np.abs(actual - expected).max() < 1e-4
    # Batch-norms were rebuilt from real statistics: training-mode output stays close to the exported function.
    model.train()
    with torch.no_grad():
        in_training = torch.nn.functional.normalize(model(torch.from_numpy(batch)), dim=1).numpy()
    assert float((in_training * expected).sum(axis=1).mean()) > 0.8


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
