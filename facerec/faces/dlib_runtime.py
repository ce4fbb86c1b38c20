"""dlib's runtime, which the public-domain and fused packs need for dlib's landmarks, chip and detector."""

from __future__ import annotations

from facerec.errors import FaceRecError
from facerec.faces.loaded_once import LoadedOnce

INSTALL_HINT = "pip install 'facerec[packs]'"


def import_dlib():
    """The `dlib` module, or one line saying how to install it (dlib-bin: prebuilt wheels, no compiler)."""
    try:
        import dlib
    except ImportError:
        raise FaceRecError(f"this model pack runs dlib's landmarks and detector, and dlib is not installed: "
                           f"{INSTALL_HINT}") from None
    return dlib


def require_files(*paths) -> None:
    """One line naming the first of a pack's files that is missing."""
    for path in paths:
        if not path.is_file():
            raise FaceRecError(f"model file not found: {path}")


class LazyLandmarks:
    """dlib's 5-point shape predictor, loaded on first use, once, whichever thread asks first (a predictor is
    read-only once loaded: threads share it)."""

    def __init__(self, path) -> None:
        self.path = path
        self._predictor = LoadedOnce(lambda: import_dlib().shape_predictor(str(self.path)))

    def get(self):
        return self._predictor.get()
