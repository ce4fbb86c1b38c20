"""dlib's public-domain MMOD face detector, read from dlib's own file and run by onnxruntime with dlib's pyramid and
decoding reproduced: the same boxes as dlib's own runtime on real faces (LFW photos and the shipped portraits), the
shipped ONNX file is that conversion, and a file that is not the detector is refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import dlib
import onnx
import onnxruntime as ort

from facerec.packs.dlib_files import dlib_model_folder
from facerec.packs.dlib_mmod import Settings, detections, read_dlib_mmod, tiled_pyramid, tiled_tensor, to_onnx
from facerec.packs.dlib_resnet import DlibFormatError
from facerec.settings import pack_file

PORTRAITS = Path(__file__).parent / "faces"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    source = dlib_model_folder() / "mmod_human_face_detector.dat"
    model = to_onnx(read_dlib_mmod(source))
    onnx.checker.check_model(model)
    path = tmp_path_factory.mktemp("mmod") / "mmod.onnx"
    onnx.save(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session, Settings.of(session.get_modelmeta().custom_metadata_map), \
        dlib.cnn_face_detection_model_v1(str(source)), path


def photos(lfw: Path) -> list[np.ndarray]:
    """Twelve LFW photos (people with 3+ photos) and the portraits shrunk to 400 px: faces of many sizes."""
    people = [p for p in sorted(lfw.iterdir()) if len(list(p.iterdir())) >= 3][::60][:12]
    images = [np.asarray(Image.open(sorted(p.iterdir())[0]).convert("RGB")) for p in people]
    for path in sorted(PORTRAITS.glob("*/*.jpg")):
        picture = Image.open(path).convert("RGB")
        picture.thumbnail((400, 400))
        images.append(np.asarray(picture))
    return images


def test_the_boxes_are_dlibs_own(both, lfw) -> None:
    session, settings, theirs, _path = both
    found = 0
    for image in photos(lfw):
        pyramid, levels = tiled_tensor(image, settings)
        ours = detections(session.run(None, {"pyramid": pyramid})[0], levels, settings)
        expected = [((d.rect.left(), d.rect.top(), d.rect.right(), d.rect.bottom()), d.confidence)
                    for d in theirs(image, 0)]
        assert [box for box, _ in ours] == [box for box, _ in expected]
        assert np.allclose([s for _, s in ours], [s for _, s in expected], atol=1e-4)
        found += len(expected)
    assert found >= 14


def test_the_shipped_detector_is_this_conversion(both) -> None:
    shipped = onnx.load(pack_file("dlib-public-domain").with_suffix(".detector.onnx"))
    converted = onnx.load(both[3])
    assert shipped.SerializeToString() == converted.SerializeToString()


def test_the_pyramid_is_laid_out_as_dlib_lays_it_out() -> None:
    """A 250x250 photo: its levels (each 5/6 of the last, down to 5 rows) tiled beside it, as dlib's
    compute_tiled_image_pyramid_details places them (level 0 at the outer padding, 11 pixels in)."""
    rects, rows, cols = tiled_pyramid(250, 250, 10, 11)
    assert rects[0] == (11, 11, 260, 260) and cols == 272
    assert rects[1] == (11, 271, 218, 478)  # 208 = floor(250 * 5/6), below the first, 10 pixels apart
    assert all(r[2] - r[0] + 1 >= 5 for r in rects) and rows > 260


def test_a_file_that_is_not_the_detector_is_refused(tmp_path) -> None:
    with pytest.raises(DlibFormatError):
        read_dlib_mmod(dlib_model_folder() / "dlib_face_recognition_resnet_model_v1.dat")
    truncated = tmp_path / "truncated.dat"
    truncated.write_bytes((dlib_model_folder() / "mmod_human_face_detector.dat").read_bytes()[:300_000])
    with pytest.raises(DlibFormatError):
        read_dlib_mmod(truncated)
