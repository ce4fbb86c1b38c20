"""dlib's runtime, which the public-domain and fused packs need for dlib's landmarks, chip and detector."""

from __future__ import annotations

from facerec.errors import FaceRecError

INSTALL_HINT = "pip install 'facerec[packs]'"


def import_dlib():
    """The `dlib` module, or one line saying how to install it (dlib-bin: prebuilt wheels, no compiler)."""
    try:
        import dlib
    except ImportError:
        raise FaceRecError(f"this model pack runs dlib's landmarks and detector, and dlib is not installed: "
                           f"{INSTALL_HINT}") from None
    return dlib
