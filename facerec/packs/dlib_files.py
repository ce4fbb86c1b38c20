"""Where dlib's public-domain model files are on this machine: the `face_recognition_models` package's folder."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

# The extra that brings dlib's runtime and its model files: `train` (dlib-bin and face_recognition_models).
INSTALL_HINT = "pip install 'facerec[train]'"


def dlib_model_folder() -> Path:
    """The weight files of `face_recognition_models`, found without importing it (its `__init__` needs
    `pkg_resources`, which recent setuptools no longer ship)."""
    spec = find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"dlib's model files come with face_recognition_models: {INSTALL_HINT}")
    return Path(list(spec.submodule_search_locations)[0]) / "models"
