"""The training and validation face sets, with the protocol's rules on who may be trained on.

Sources (both already aligned with `facerec.faces.align`):
- `celeba112/` (folder per CelebA identity): training, except a seeded hold-out of identities used for
  validation metrics, model selection and threshold calibration.
- the `facerec-train prepare` cache of LFW: only people with >= 3 photos, all for training. The 779 two-photo
  evaluation people and the one-photo distractors are never loaded, so training and model selection cannot see
  them.
- optionally, teacher files (`facerec.train.teacher`): dlib descriptors per crop, turned into unit cosine targets
  (centred on the training mean) for distillation; rows without one are trained by ArcFace alone.
- optionally, unlabelled faces (e.g. UTKFace, `scripts/data/utkface.py`): an aligned-face cache and its teacher
  file, whose rows name no identity (`UNLABELLED`): the teacher's descriptor is all they teach (distillation), the
  ArcFace head never sees them. Only crops the teacher file holds are loaded: that file lists the decontaminated
  crops, so a crop dropped for resembling an evaluation person is never read.
"""

from __future__ import annotations

from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import Sequence

import numpy as np
from PIL import Image

from facerec.errors import InvalidArgument
from facerec.datasets.cache import load_cache
from facerec.datasets.folders import held_out, list_identities
from facerec.train.teacher import load_targets, normalized_targets


UNLABELLED = ""  # the identity of a row no identity label comes with (taught by the teacher alone)


@dataclass
class FaceSet:
    """images uint8 [N, 112, 112, 3]; identities, splits and paths: one string per row; teacher: float32
    [N, 2, 128] unit cosine targets for the crop and its mirror image (NaN where a row has none), or None."""

    images: np.ndarray
    identities: list[str]
    splits: list[str]
    paths: list[str]
    teacher: np.ndarray | None = None
    teacher_raw: np.ndarray | None = None  # float32 [N, 128] raw descriptors (for the teacher's own figures)
    teacher_mean: np.ndarray | None = None  # float32 [128]: the training mean the targets are centred on
    augmented_teacher: np.ndarray | None = None  # float32 [N, K, 128] unit targets of K stored augmentations

    def rows(self, split: str) -> np.ndarray:
        return np.flatnonzero(np.array(self.splits) == split)

    def labels(self, rows: np.ndarray) -> np.ndarray:
        """Dense integer labels (0..C-1, in identity order) for the given rows; -1 for an unlabelled row."""
        names = [self.identities[i] for i in rows]
        index = {name: k for k, name in enumerate(sorted(set(names) - {UNLABELLED}))}
        return np.array([index.get(n, -1) for n in names], dtype=np.int64)


def load_sources(celeba_dir: str | Path, lfw_cache_dir: str | Path | None,
                 teacher_files: Sequence[str | Path] = (), workers: int = 2, held_out_split: str = "single",
                 unlabelled: Sequence[tuple[str | Path, str | Path]] = ()) -> FaceSet:
    """Read celeba112 JPEGs and the LFW training people from the aligned-face cache into one FaceSet. The split's
    selection identities are "val" (validation, every choice); with a disjoint split its calibration identities
    are "calibration": never trained on, never looked at during training. `unlabelled`: (aligned-face cache,
    teacher file) pairs of faces without identities (`add_unlabelled`); their teacher files are attached too."""
    celeba = list_identities(celeba_dir)
    kept_out = held_out(celeba, held_out_split)
    files = [p for photos in celeba.values() for p in photos]
    with Pool(workers) as pool:
        images = pool.map(_decode_file, [str(p) for p in files], chunksize=256)
    identities = [f"celeba/{p.parent.name}" for p in files]
    splits = ["val" if p.parent.name in kept_out.selection else
              "calibration" if p.parent.name in kept_out.calibration else "train" for p in files]
    paths = [f"celeba/{p.parent.name}/{p.name}" for p in files]
    if lfw_cache_dir is not None:
        faces, lfw_names, lfw_paths = load_cache(lfw_cache_dir)
        keep = lfw_training_rows(lfw_names)
        images += list(np.asarray(faces[keep]))
        identities += [f"lfw/{lfw_names[i]}" for i in keep]
        splits += ["train"] * len(keep)
        paths += [f"lfw/{lfw_paths[i]}" for i in keep]
    faces_set = FaceSet(np.stack(images), identities, splits, paths)
    for cache_dir, teacher_file in unlabelled:
        add_unlabelled(faces_set, cache_dir, teacher_file)
    teacher_files = [*teacher_files, *(teacher_file for _, teacher_file in unlabelled)]
    if teacher_files:
        attach_teacher(faces_set, teacher_files)
    return faces_set


def add_unlabelled(faces: FaceSet, cache_dir: str | Path, teacher_file: str | Path) -> int:
    """Append, as unlabelled training rows, the crops of an aligned-face cache that `teacher_file` describes (its
    paths are the cache's); returns how many. Rows are named "<cache folder name>/<path>", so `attach_teacher`
    finds them by "<path>"."""
    crops, _names, cache_paths = load_cache(cache_dir)
    with np.load(teacher_file) as table:
        described = set(str(path) for path in table["paths"])
    keep = [i for i, path in enumerate(cache_paths) if str(path) in described]
    if not keep:
        raise InvalidArgument(f"{teacher_file} describes no crop of {cache_dir}: check the pair")
    source = Path(cache_dir).name
    faces.images = np.concatenate([faces.images, np.asarray(crops[keep])])
    faces.identities += [UNLABELLED] * len(keep)
    faces.splits += ["train"] * len(keep)
    faces.paths += [f"{source}/{cache_paths[i]}" for i in keep]
    return len(keep)


def teacher_key(path: str) -> str:
    """The name a teacher file gives a row's photo: its path without the source folder ("celeba/<id>/<file>" ->
    "<id>/<file>"), the same photo under celeba112/ or the LFW cache."""
    return path.split("/", 1)[1]


def attach_teacher(faces: FaceSet, teacher_files: Sequence[str | Path]) -> None:
    """Fill `faces.teacher` from teacher files whose paths are relative to celeba112/ or to the LFW cache (the
    same photo may be named either way: "<id>/<file>" is looked up under both sources)."""
    table = load_targets(teacher_files)
    raw = np.full((len(faces.paths), 2, 128), np.nan, np.float32)
    for row, path in enumerate(faces.paths):
        found = table.get(teacher_key(path))
        if found is not None:
            plain, mirrored = found
            raw[row, 0] = plain
            raw[row, 1] = plain if mirrored is None else mirrored
    train = faces.rows("train")
    known = raw[train][~np.isnan(raw[train, 0, 0])]
    if not len(known):
        raise InvalidArgument("no teacher descriptor matches a training photo; check the teacher files")
    mean = known.reshape(-1, 128).mean(axis=0)
    faces.teacher = normalized_targets(raw.reshape(-1, 128), mean).reshape(raw.shape).astype(np.float32)
    faces.teacher_raw = raw[:, 0].copy()
    faces.teacher_mean = mean.astype(np.float32)


def attach_augmented_teacher(faces: FaceSet, files: Sequence[str | Path]) -> int:
    """Fill `faces.augmented_teacher` from teacher files of stored augmentations ("<path>#aug<k>" rows,
    `facerec.train.augmented_targets`), centred on the same training mean as the plain targets (so both kinds
    of target live in one space); returns how many rows have at least one. Needs `attach_teacher` first."""
    from facerec.train.augmented_targets import crop_and_k

    if faces.teacher_mean is None:
        raise InvalidArgument("augmented targets need the plain teacher targets first (pass teacher files)")
    table = load_targets(files)
    by_crop: dict[str, dict[int, np.ndarray]] = {}
    for name, (plain, _) in table.items():
        crop, k = crop_and_k(name)
        by_crop.setdefault(crop, {})[k] = plain
    count = 1 + max((k for stored in by_crop.values() for k in stored), default=-1)
    raw = np.full((len(faces.paths), max(count, 1), 128), np.nan, np.float32)
    for row, path in enumerate(faces.paths):
        for k, plain in by_crop.get(teacher_key(path), {}).items():
            raw[row, k] = plain
    found = int((~np.isnan(raw[:, :, 0])).any(axis=1).sum())
    if not found:
        raise InvalidArgument("no augmented teacher descriptor matches a training photo; check the files")
    faces.augmented_teacher = normalized_targets(raw.reshape(-1, 128), faces.teacher_mean).reshape(raw.shape) \
        .astype(np.float32)
    return found


def keep_identity_fraction(faces: FaceSet, fraction: float, seed: int = 0) -> None:
    """Train on a seeded `fraction` of the training identities only (the rest become split "unused").

    Why identities and not photos: the question this answers is whether more *people* would help (new sources,
    such as unlabelled photos the teacher describes, add people), so the measurement halves the people and keeps
    each kept person's photos. Validation rows are untouched, so runs on different fractions are scored alike."""
    if not 0 < fraction <= 1:
        raise InvalidArgument(f"the training fraction must be in (0, 1], not {fraction}")
    train_identities = sorted({faces.identities[r] for r in faces.rows("train")} - {UNLABELLED})
    rng = np.random.default_rng(seed)
    kept = set(rng.permutation(train_identities)[: round(fraction * len(train_identities))].tolist())
    faces.splits = [split if split != "train" or identity in kept or identity == UNLABELLED else "unused"
                    for split, identity in zip(faces.splits, faces.identities)]


def lfw_training_rows(names: list[str]) -> list[int]:
    """Rows of an LFW cache that the protocol lets us train on: people with >= 3 photos (never the 779
    two-photo evaluation people, never the one-photo distractors)."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [i for i, name in enumerate(names) if counts[name] >= 3]


def _decode_file(path: str) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))
