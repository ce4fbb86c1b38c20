"""Which people a model was trained on, as its model card records them, and whether an evaluation meets them.

A model scores near-perfectly on people it was trained on, so an evaluation over them says little about new
people. The card's `training_identities` holds every training identity key (`celeba/<folder>`, `lfw/<folder>`;
`facerec.datasets.folders.training_identity_keys`) as one compact string: the sorted keys joined by newlines,
zlib-compressed, base64-encoded (about 33 KB for the shipped model's 7,091 identities; exact, unlike a hash set).
`scripts/make_model_card.py` writes it; `facerec eval` compares the evaluated folder names against it.
"""

from __future__ import annotations

import base64
import zlib

ENCODING = "zlib-compressed, base64-encoded, newline-separated sorted identity keys ('celeba/<folder>', 'lfw/<folder>')"
SOURCES = ("celeba", "lfw")


def encode(keys: list[str]) -> dict:
    """The card's `training_identities` section for `keys`."""
    keys = sorted(set(keys))
    packed = base64.b64encode(zlib.compress("\n".join(keys).encode("utf-8"), 9)).decode("ascii")
    return {"count": len(keys), "encoding": ENCODING, "keys": packed}


def decode(section: dict | None) -> set[str]:
    """The identity keys of a card's `training_identities` section (empty when the card has none)."""
    if not section or not section.get("keys"):
        return set()
    text = zlib.decompress(base64.b64decode(section["keys"])).decode("utf-8")
    return set(text.split("\n")) if text else set()


def seen_in_training(names: list[str], card: dict) -> list[str]:
    """The names among `names` (dataset folder names) that are identities the card's model was trained on, in
    the order given. A folder name matches an identity of any source (`lfw/<name>`, `celeba/<name>`)."""
    keys = decode(card.get("training_identities"))
    return [name for name in names if any(f"{source}/{name}" in keys for source in SOURCES)]


def overlap_warning(seen: int, evaluated: int) -> str | None:
    """The warning `facerec eval` prints when the evaluated people include training identities."""
    if not seen:
        return None
    return (f"{seen:,} of the {evaluated:,} evaluated people are identities the model was trained on: their scores "
            "overstate how well it recognises new people. Evaluate on people it never saw (for the shipped model: "
            "LFW people with exactly 2 photos, --max-per-identity 2, or the held-out celeba112 identities)")
