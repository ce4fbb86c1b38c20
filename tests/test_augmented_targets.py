"""Teacher targets of augmented crops (#27 point 3): each augmentation is a pure function of the crop's path and
k, so the image the teacher described can be made again at training time, pixel for pixel; the teacher file
names each row "<path>#aug<k>"."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("dlib", reason="teacher targets need the 'train' extra (dlib-bin, face_recognition_models)")
pytest.importorskip("torch", reason="augmentation needs the 'train' extra")

from facerec.errors import InvalidArgument
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


def test_training_shows_a_stored_augmentation_with_the_teachers_descriptor_of_those_very_pixels(crops,
                                                                                               tmp_path) -> None:
    """#27 point 3, at training time: a crop shown one of its stored augmentations gets exactly the pixels the
    teacher described (its descriptor of them again equals the stored one) and that descriptor, centred like the
    plain targets, as its target; at share 0 nothing is replaced; a file that is not of augmentations is refused."""
    import torch

    from facerec.train.augmented_targets import StoredAugmentations, compute_augmented_targets
    from facerec.train.data import FaceSet, attach_augmented_teacher, attach_teacher
    from facerec.train.teacher import compute_targets, normalized_targets, teacher_descriptors

    images, paths = crops
    plain_file = compute_targets(images, paths, tmp_path / "plain.npz", mirror=True, workers=1)
    augmented_file = compute_augmented_targets(images, paths, 2, tmp_path / "augmented.npz", workers=1)
    faces = FaceSet(images, [f"celeba/{p.split('/')[0]}" for p in paths], ["train"] * len(paths),
                    [f"celeba/{p}" for p in paths])
    attach_teacher(faces, [plain_file])
    assert attach_augmented_teacher(faces, [augmented_file]) == len(paths)
    assert faces.augmented_teacher.shape == (len(paths), 2, 128)
    with pytest.raises(InvalidArgument, match="not an augmented target"):
        attach_augmented_teacher(faces, [plain_file])

    batch = torch.zeros(len(paths), 3, 112, 112)
    targets = torch.zeros(len(paths), 128)
    rows = torch.arange(len(paths))
    stored = StoredAugmentations(torch.from_numpy(images), paths, faces.augmented_teacher, share=1.0)
    shown, taught = stored.apply(rows, batch, targets)
    pixels = shown.permute(0, 2, 3, 1).round().to(torch.uint8).numpy()
    again = teacher_descriptors(pixels)
    raw = load_targets([augmented_file])
    for i, path in enumerate(paths):
        k = next(k for k in range(2) if np.allclose(taught[i].numpy(), faces.augmented_teacher[i, k], atol=1e-6))
        assert np.array_equal(pixels[i], augmented(images[i:i + 1], [augmentation_seed(path, k)])[0][0])
        stored_raw = raw[f"{path}#aug{k}"][0]
        assert np.allclose(again[i], stored_raw, atol=2e-3)  # the teacher saw these very pixels
        assert np.allclose(taught[i].numpy(), normalized_targets(stored_raw[None], faces.teacher_mean)[0],
                           atol=1e-5)
    untouched, same = StoredAugmentations(torch.from_numpy(images), paths, faces.augmented_teacher,
                                          share=0.0).apply(rows, batch, targets)
    assert torch.equal(untouched, batch) and torch.equal(same, targets)
    from facerec.train.loop import TrainConfig, _build_parts, _step

    config = TrainConfig(stem="standard", batch_size=3, device="cpu", bf16=False, distill_weight=30.0,
                         augmented_share=1.0)
    parts = _build_parts(config, faces, torch.device("cpu"))
    assert parts.stored is not None
    arcface, distill, *_ = _step(config, False, torch.device("cpu"), parts, np.arange(len(paths)))
    assert math.isfinite(float(arcface)) and 0 < float(distill) <= 2  # (the crops are one person's)
