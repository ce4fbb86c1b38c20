"""Weight averaging (`facerec-train average`): the averaged file's weights are the weighted mean of the stages', it is
the same network (same inputs, unit outputs), and files that cannot be averaged meaningfully are refused in one
line (int8, centered, mapped, another architecture)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="averaging tests need the 'train' extra")

from facerec.settings import Settings  # noqa: E402
from facerec.train.averaging import average_onnx  # noqa: E402
from facerec.train.backbone import FaceEmbedder  # noqa: E402
from facerec.train.export import export_onnx  # noqa: E402


def _export(tmp_path, name: str, seed: int, stem: str = "high_res"):
    torch.manual_seed(seed)
    model = FaceEmbedder(stem).eval()
    for module in model.modules():  # distinct batch-norms, so the folded weights differ between seeds too
        if isinstance(module, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            with torch.no_grad():
                module.running_var.uniform_(0.5, 2.0)
    path = tmp_path / f"{name}.onnx"
    export_onnx(model, path)
    return path


def _initializers(path) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    return {init.name: numpy_helper.to_array(init) for init in onnx.load(str(path)).graph.initializer}


def _embed(path, faces: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"images": faces.transpose(0, 3, 1, 2).astype(np.float32)})[0]


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stages")
    return _export(folder, "a", 0), _export(folder, "b", 1), _export(folder, "c", 2)


def test_the_average_holds_the_weighted_mean_of_every_weight(stages, tmp_path) -> None:
    out = average_onnx(stages[:2], tmp_path / "mean.onnx", weights=[3, 1])
    first, second, mean = (_initializers(p) for p in (stages[0], stages[1], out))
    floats = [name for name, a in first.items() if a.dtype == np.float32]
    assert len(floats) > 20  # the convolutions, the head and its batch-norms
    for name in floats:
        assert np.allclose(mean[name], 0.75 * first[name] + 0.25 * second[name], atol=1e-6), name
    assert any(not np.allclose(first[name], second[name]) for name in floats)  # the stages did differ


def test_the_average_is_the_same_network(stages, celeba112, tmp_path) -> None:
    from PIL import Image

    photos = sorted(p for folder in sorted(celeba112.iterdir())[:4] for p in folder.iterdir())[:6]
    faces = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in photos])
    only_first = average_onnx(stages, tmp_path / "first.onnx", weights=[1, 0, 0])
    assert np.allclose(_embed(only_first, faces), _embed(stages[0], faces), atol=1e-5)
    embeddings = _embed(average_onnx(stages, tmp_path / "mean.onnx"), faces)
    assert embeddings.shape == (6, 512)
    assert np.allclose(np.linalg.norm(embeddings, axis=1), 1, atol=1e-5)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.train.cli", "average", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_what_cannot_be_averaged_is_refused_in_one_line(stages, tmp_path) -> None:
    standard = _export(tmp_path, "standard", 3, stem="standard")
    cases = {
        (Settings().model_path, stages[0]): "is quantised",  # the shipped int8 model
        (stages[0], standard): "not the same architecture",
        (stages[0],): "at least two models",
        (stages[0], tmp_path / "missing.onnx"): "no such model",
    }
    for models, message in cases.items():
        result = _cli(tmp_path / "out.onnx", *models)
        assert result.returncode != 0
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.onnx").exists()
    weights = _cli(tmp_path / "out.onnx", *stages[:2], "--weights", "1")
    assert "one non-negative weight per model" in weights.stderr and not (tmp_path / "out.onnx").exists()
