"""Who training may see: the LFW protocol's 779 evaluation people and its one-photo distractors never enter the
training set; validation is held-out CelebA identities only. And which arithmetic training picks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="training tests need the 'train' extra")

from facerec.datasets.cache import prepare_cache  # noqa: E402
from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.train.data import UNLABELLED, lfw_training_rows, load_sources  # noqa: E402
from facerec.train.precision import cpu_has_native_bf16  # noqa: E402


def test_lfw_training_rows_exclude_evaluation_and_one_photo_people(lfw: Path) -> None:
    people = list_identities(lfw)
    names = [name for name, photos in people.items() for _ in photos]
    trained = {names[row] for row in lfw_training_rows(names)}
    evaluation = {name for name, photos in people.items() if len(photos) == 2}
    distractors = {name for name, photos in people.items() if len(photos) == 1}
    assert len(evaluation) == 779 and len(distractors) == 4069
    assert not trained & evaluation and not trained & distractors
    assert trained == {name for name, photos in people.items() if len(photos) >= 3}


def test_training_set_from_real_sources_never_holds_evaluation_people(lfw: Path, celeba112: Path,
                                                                      tmp_path: Path) -> None:
    people = list_identities(lfw)
    chosen = {"one": next(n for n, p in people.items() if len(p) == 1),
              "two": next(n for n, p in people.items() if len(p) == 2),
              "many": next(n for n, p in people.items() if 3 <= len(p) <= 5)}
    lfw_subset, celeba_subset = tmp_path / "lfw", tmp_path / "celeba"
    lfw_subset.mkdir()
    celeba_subset.mkdir()
    for name in chosen.values():
        os.symlink(lfw / name, lfw_subset / name)
    for folder in sorted(celeba112.iterdir())[:12]:
        os.symlink(folder, celeba_subset / folder.name)
    prepare_cache(lfw_subset, tmp_path / "cache")
    faces = load_sources(celeba_subset, tmp_path / "cache", workers=1)
    trained = {faces.identities[r] for r in faces.rows("train")}
    assert f"lfw/{chosen['many']}" in trained
    assert f"lfw/{chosen['two']}" not in faces.identities and f"lfw/{chosen['one']}" not in faces.identities
    assert set(faces.splits) <= {"train", "val"}
    assert all(faces.identities[r].startswith("celeba/") for r in faces.rows("val"))


def test_unlabelled_faces_join_training_only_where_their_teacher_file_describes_them(lfw: Path, celeba112: Path,
                                                                                    tmp_path: Path) -> None:
    """#27: teacher-labelled faces without identities (UTKFace). The teacher file lists the decontaminated crops,
    so a crop it leaves out (dropped for resembling an evaluation person) is never loaded."""
    import numpy as np

    people = list_identities(lfw)
    name = next(n for n, p in people.items() if 3 <= len(p) <= 4)
    photos, celeba_subset = tmp_path / "photos", tmp_path / "celeba"
    photos.mkdir()
    celeba_subset.mkdir()
    os.symlink(lfw / name, photos / "UTKFace")  # a folder of photos with no identity, as UTKFace's
    for folder in sorted(celeba112.iterdir())[:12]:
        os.symlink(folder, celeba_subset / folder.name)
    prepare_cache(photos, tmp_path / "cache")
    crops = sorted(f"UTKFace/{photo.name}" for photo in (photos / "UTKFace").iterdir())
    kept = crops[:-1]  # the last one "decontaminated" away
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "teacher.npz", paths=np.array(kept),
             descriptor=rng.normal(size=(len(kept), 128)).astype(np.float16),
             descriptor_mirror=rng.normal(size=(len(kept), 128)).astype(np.float16))
    faces = load_sources(celeba_subset, None, workers=1, unlabelled=[(tmp_path / "cache", tmp_path / "teacher.npz")])
    rows = [r for r, identity in enumerate(faces.identities) if identity == UNLABELLED]
    assert sorted(faces.paths[r] for r in rows) == sorted(f"cache/{path}" for path in kept)
    assert all(faces.splits[r] == "train" for r in rows)
    assert not np.isnan(faces.teacher[rows]).any()  # each carries its teacher target
    labels = faces.labels(faces.rows("train"))
    assert (labels == -1).sum() == len(kept) and labels.max() + 1 == len({faces.identities[r] for r in
                                                                          faces.rows("train")}) - 1


@pytest.mark.parametrize("flags,native", [
    ("fpu sse avx avx2 fma", False),
    ("fpu avx2 avx512f avx512bw avx512_bf16 avx512_vnni", True),
    ("fpu avx2 amx_bf16 amx_tile amx_int8", True),
])
def test_bf16_is_chosen_only_on_cpus_with_native_bf16(flags: str, native: bool) -> None:
    cpuinfo = f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"
    assert cpu_has_native_bf16(cpuinfo) is native
