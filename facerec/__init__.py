"""facerec: enroll faces from one photo and identify them, with an ArcFace ResNet18 run by onnxruntime.

Importing this package is cheap: models and heavy libraries load lazily, on first use.
"""

__version__ = "0.1.0"
