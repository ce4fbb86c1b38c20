"""Folder-per-identity datasets (`<root>/<identity>/<image>`), listed the same way everywhere.

Identities in name order and photos in filename order: the LFW protocol's seeded choice of the enrolled photo
depends on exactly this order.
"""

from __future__ import annotations

import random
from pathlib import Path

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


def held_out_identities(identities: dict[str, list[Path]]) -> set[str]:
    """The training set's seeded hold-out: identities never trained on, used for validation metrics during
    training and for threshold calibration (chosen among those with >= 4 photos so each has genuine pairs)."""
    eligible = sorted(name for name, photos in identities.items() if len(photos) >= HELD_OUT_MIN_PHOTOS)
    return set(random.Random(HELD_OUT_SEED).sample(eligible, min(HELD_OUT_IDENTITIES, len(eligible))))


LFW_TRAINING_MIN_PHOTOS = 3  # the protocol trains on LFW people with >= 3 photos only (never the 2-photo people)


def training_identity_keys(celeba_dir: str | Path, lfw_dir: str | Path) -> list[str]:
    """The identities the protocol trains on, as sorted keys: `celeba/<folder>` for every celeba112 identity
    outside the seeded hold-out, `lfw/<folder>` for every LFW person with >= 3 photos. What the model card lists
    (`facerec.datasets.training_identities`), so that an evaluation can say when it measures people the model has seen."""
    celeba = list_identities(celeba_dir)
    held_out = held_out_identities(celeba)
    lfw = list_identities(lfw_dir)
    return sorted([f"celeba/{name}" for name in celeba if name not in held_out]
                  + [f"lfw/{name}" for name, photos in lfw.items() if len(photos) >= LFW_TRAINING_MIN_PHOTOS])
