"""Enrollment quality: how likely a face about to be enrolled is to be recognised later, and why not.

`features` measures the face (size, pose, sharpness, embedding stability), `score` turns them into the calibrated
score and the reasons, `calibration` fits it. `QualityCheck` is what the gallery holds: it loads the calibration
next to the model once, and assesses one detected face and its aligned crop.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from facerec.faces.detect import DetectedFace
from facerec.faces.quality.features import QualityFeatures, measure
from facerec.faces.quality.score import EnrollmentQuality, QualityModel

__all__ = ["EnrollmentQuality", "QualityCheck", "QualityFeatures", "QualityModel"]


class QualityCheck:
    def __init__(self, calibration_path: Path, embedder) -> None:
        self.calibration_path = calibration_path
        self.embedder = embedder
        self._model: QualityModel | None = None

    @property
    def available(self) -> bool:
        return self.calibration_path.is_file()

    @property
    def model(self) -> QualityModel:
        if self._model is None:
            self._model = QualityModel.load(self.calibration_path)
        return self._model

    def assess(self, face: DetectedFace, crop: np.ndarray) -> EnrollmentQuality | None:
        """The quality of one face (None when no calibration ships next to the model)."""
        if not self.available:
            return None
        features = measure(self.embedder, crop, face.landmarks)
        return self.model.assess(features, face.width, self.embedder.sha256)
