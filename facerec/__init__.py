"""facerec: enroll faces from one photo and identify them, with an ArcFace ResNet18 run by onnxruntime.

Importing this package is cheap: models and heavy libraries load lazily, on first use.
"""

from facerec.version import __version__

__all__ = ["Gallery", "__version__"]


def __getattr__(name: str):
    """`facerec.Gallery`, imported on first use so that importing facerec stays cheap (no model, no database)."""
    if name == "Gallery":
        from facerec.gallery import Gallery
        return Gallery
    raise AttributeError(f"module 'facerec' has no attribute {name!r}")
