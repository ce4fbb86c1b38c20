"""Folder-per-identity datasets (`<root>/<identity>/<image>`), listed the same way everywhere.

Identities in name order and photos in filename order: the LFW protocol's seeded choice of the enrolled photo
depends on exactly this order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from facerec.errors import InvalidArgument

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif"}


def list_identities(root: str | Path) -> dict[str, list[Path]]:
    """{identity name: sorted photo paths} for every sub-folder of `root` holding at least one image."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"not a folder: {root}")
    identities: dict[str, list[Path]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        photos = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        if photos:
            identities[folder.name] = photos
    return identities


def choose_enrolled(identities: dict[str, list[Path]], seed: int = 51) -> dict[str, Path]:
    """The protocol's enrolled photo per identity with >= 2 photos: `random.seed(seed)` once, then
    `random.choice` over each person's photos (filename order), person by person in name order."""
    rng = random.Random(seed)
    return {name: rng.choice(photos) for name, photos in identities.items() if len(photos) >= 2}


HELD_OUT_IDENTITIES = 150
HELD_OUT_MIN_PHOTOS = 4
HELD_OUT_SEED = 1234
CALIBRATION_SEED = 4321
# How a model's training held identities out. "single": one set of 150 chose the epoch, the stage average and
# the quantization AND calibrated the FAR tail and the quality score (models up to v8). "disjoint" (#27 point 4,
# from v9): the same 150 choose, and another 150, never trained on either, calibrate: the card's FAR curve then
# comes from people no choice was made on.
HELD_OUT_SPLITS = ("single", "disjoint")


@dataclass(frozen=True)
class HeldOut:
    """The identities a model was not trained on: `selection` (validation metrics, every choice made on held-out
    people) and `calibration` (the card's FAR curve, the quality score, the per-person chances)."""

    selection: frozenset[str]
    calibration: frozenset[str]

    @property
    def everyone(self) -> set[str]:
        return set(self.selection | self.calibration)

    @property
    def disjoint(self) -> bool:
        return not self.selection & self.calibration


def held_out(identities: dict[str, list[Path]], split: str = "single") -> HeldOut:
    """The seeded hold-out of a split (`HELD_OUT_SPLITS`), chosen among identities with >= 4 photos so each has
    genuine pairs. The selection set is the same in both splits, so validation figures stay comparable."""
    if split not in HELD_OUT_SPLITS:
        raise InvalidArgument(f"the held-out split must be one of {', '.join(HELD_OUT_SPLITS)}, not {split!r}")
    eligible = sorted(name for name, photos in identities.items() if len(photos) >= HELD_OUT_MIN_PHOTOS)
    selection = frozenset(random.Random(HELD_OUT_SEED).sample(eligible, min(HELD_OUT_IDENTITIES, len(eligible))))
    if split == "single":
        return HeldOut(selection, selection)
    rest = [name for name in eligible if name not in selection]
    return HeldOut(selection, frozenset(random.Random(CALIBRATION_SEED).sample(rest, min(HELD_OUT_IDENTITIES,
                                                                                          len(rest)))))


def held_out_identities(identities: dict[str, list[Path]], split: str = "single") -> set[str]:
    """Every identity the split keeps out of training (selection and calibration)."""
    return held_out(identities, split).everyone


LFW_TRAINING_MIN_PHOTOS = 3  # the protocol trains on LFW people with >= 3 photos only (never the 2-photo people)


def training_identity_keys(celeba_dir: str | Path, lfw_dir: str | Path, split: str = "single") -> list[str]:
    """The identities the protocol trains on, as sorted keys: `celeba/<folder>` for every celeba112 identity
    outside the seeded hold-out, `lfw/<folder>` for every LFW person with >= 3 photos. What the model card lists
    (`facerec.datasets.training_identities`), so that an evaluation can say when it measures people the model has seen."""
    celeba = list_identities(celeba_dir)
    held_out = held_out_identities(celeba, split)
    lfw = list_identities(lfw_dir)
    return sorted([f"celeba/{name}" for name in celeba if name not in held_out]
                  + [f"lfw/{name}" for name, photos in lfw.items() if len(photos) >= LFW_TRAINING_MIN_PHOTOS])
