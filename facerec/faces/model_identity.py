"""The id a gallery stores with every face it embeds, the same rule for every pack's embedder: the model file's
name and the first 12 hex digits of a sha256 of every file that makes its descriptors (a face embedded by another
model is never compared with it). Each embedder says which files those are (`_digest`); the rest is here once."""

from __future__ import annotations

import hashlib
from pathlib import Path


def model_id_of(model_path: Path, sha256: str) -> str:
    """A model's id as galleries record it with each face: its file's name and the first 12 hex digits of the
    sha256 that identifies it (every pack's embedder names its model so)."""
    return f"{Path(model_path).stem}@{sha256[:12]}"


class ModelIdentity:
    """`model_id` and `sha256` for an embedder with a `model_path`; the sha256 is computed once, on first use."""

    model_path: Path

    @property
    def model_id(self) -> str:
        """Stable id of the model: file name plus the first 12 hex digits of its sha256."""
        return model_id_of(self.model_path, self.sha256)

    @property
    def sha256(self) -> str:
        if not hasattr(self, "_sha256"):
            self._sha256 = self._digest()
        return self._sha256

    def _digest(self) -> str:
        """The sha256 of what makes the descriptors: by default the model file alone."""
        return hashlib.sha256(self.model_path.read_bytes()).hexdigest()
