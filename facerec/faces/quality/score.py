"""The enrollment quality score: the calibrated chance that a later photo of this person is recognised.

A logistic model over the `facerec.faces.quality.features` of the face about to be enrolled, fitted on held-out CelebA
identities (never trained on) by `scripts/calibrate_quality.py`: each held-out photo was enrolled alone, with one
photo of every other held-out person beside it, and its person's other photos searched for; the score is the
predicted share of them ranked first (rank-1 in a one-shot gallery of 150 people: the threshold in force, which
rises with the gallery, then decides whether a first-ranked face is named). Its file sits next to the model
(`<model>.quality.json`) and names the model it was fitted for: the features depend on the network.

A face is `low` quality below the file's `low_score`: the score of the worst `LOW_SHARE` (5%) of the held-out
photos as they are, so an ordinary photo is rarely refused and the warning means something. Its reasons are the
features that cost it most against a typical photo (the median held-out photo): each whose own share of the
shortfall in log-odds is at least `REASON_SHARE`, worst first.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from facerec.errors import UnusableFile
from facerec.words.quality import quality_reason, quality_sentence
from facerec.faces.quality.features import TEMPLATE_EYE_DISTANCE, QualityFeatures, effective_eye_distance
from facerec.words.phrasing import one_line

FEATURES = ("size", "yaw", "sharpness", "geometric_stability", "detail_stability")
LEGACY_FEATURES = ("size", "yaw", "sharpness", "stability")  # calibration files made before #64 row 2
LOW_SHARE = 0.05
REASON_SHARE = 0.25
# A face that is not low may still be, say, blurred: a feature costing at least this much (log-odds against a
# typical photo) is said beside "good" (#64 row 2: a blurred photo rated "0.84 good" without a word)
CAVEAT_LOGODDS = 0.5


def size_feature(eye_distance_px: float) -> float:
    """The model's size input: log2 of the usable eye distance over the template's (0 for any face at least as big
    as the crop, -1 for half of it)."""
    return math.log2(max(effective_eye_distance(eye_distance_px), 1.0) / TEMPLATE_EYE_DISTANCE)


def design_row(features: QualityFeatures, names: tuple[str, ...] = FEATURES) -> np.ndarray:
    """The model's inputs for one face, in `names` order (`size_feature` for the size)."""
    size = size_feature(features.eye_distance_px)
    return np.array([size if name == "size" else getattr(features, name) for name in names], np.float64)


@dataclass
class EnrollmentQuality:
    """What `QualityModel.assess` says of one face: the score in [0, 1], whether it is low, and why."""

    score: float
    low: bool
    reasons: list[str]
    features: QualityFeatures
    face_width_px: float
    notes: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)  # what costs a face that is not low most, in words

    def sentence(self) -> str:
        return quality_sentence(self)

    def to_dict(self) -> dict:
        return {"score": round(self.score, 4), "low": self.low, "reasons": self.reasons,
                "face_width_px": round(self.face_width_px, 1), "features": self.features.to_dict(),
                "caveats": self.caveats, "sentence": self.sentence(), "notes": self.notes}


@dataclass(frozen=True)
class QualityModel:
    means: np.ndarray
    scales: np.ndarray
    coefficients: np.ndarray
    intercept: float
    low_score: float
    typical: np.ndarray  # the design row of a typical enrollment photo (the reasons compare with it)
    model_sha256: str
    source: dict
    features: tuple[str, ...] = FEATURES  # the design row's columns, as the file names them

    @classmethod
    def load(cls, path: str | Path) -> "QualityModel":
        try:
            data = json.loads(Path(path).read_text())
            return cls(np.array(data["means"], np.float64), np.array(data["scales"], np.float64),
                       np.array(data["coefficients"], np.float64), float(data["intercept"]),
                       float(data["low_score"]), np.array(data["typical"], np.float64),
                       str(data.get("model_sha256", "")), dict(data.get("source", {})),
                       tuple(data.get("features", LEGACY_FEATURES)))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UnusableFile(f"the enrollment-quality calibration {path} cannot be read "
                               f"({one_line(error, 120)}); run scripts/calibrate_quality.py") from None

    def to_dict(self) -> dict:
        return {"features": list(self.features), "means": self.means.tolist(), "scales": self.scales.tolist(),
                "coefficients": self.coefficients.tolist(), "intercept": self.intercept,
                "low_score": self.low_score, "typical": self.typical.tolist(),
                "model_sha256": self.model_sha256, "source": self.source}

    def logits(self, rows: np.ndarray) -> np.ndarray:
        """Log-odds of recognition for design rows [N, 4]."""
        return ((np.atleast_2d(rows) - self.means) / self.scales) @ self.coefficients + self.intercept

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Scores in [0, 1] for design rows [N, 4]."""
        return 1.0 / (1.0 + np.exp(-self.logits(rows)))

    def assess(self, features: QualityFeatures, face_width_px: float, model_sha256: str | None = None
               ) -> EnrollmentQuality:
        score = float(self.predict(design_row(features, self.features))[0])
        notes = []
        if model_sha256 and self.model_sha256 and model_sha256 != self.model_sha256:
            notes.append("The quality calibration was made for another model file: rerun "
                         "scripts/calibrate_quality.py for this one.")
        low = score < self.low_score
        return EnrollmentQuality(score, low, self.reasons(features, face_width_px) if low else [], features,
                                 face_width_px, notes, [] if low else self.caveats(features, face_width_px))

    def caveats(self, features: QualityFeatures, face_width_px: float) -> list[str]:
        """The features that cost a face at least `CAVEAT_LOGODDS` against a typical photo, in words, worst first."""
        costs = self._costs(features)
        found = [(cost, _reason(name, features, face_width_px)) for name, cost in zip(self.features, costs)
                 if -cost >= CAVEAT_LOGODDS]
        return [text for _cost, text in sorted(found)]

    def _costs(self, features: QualityFeatures) -> np.ndarray:
        """Each feature's log-odds against a typical enrollment photo (negative: it costs this face)."""
        return (design_row(features, self.features) - self.typical) * self.coefficients / self.scales

    def reasons(self, features: QualityFeatures, face_width_px: float) -> list[str]:
        """The features that cost this face most against a typical enrollment photo, in words, worst first."""
        costs = self._costs(features)
        shortfall = -float(np.sum(np.minimum(costs, 0.0)))
        if shortfall <= 0:
            return []
        found = [(cost, _reason(name, features, face_width_px)) for name, cost in zip(self.features, costs)
                 if cost < 0 and -cost >= REASON_SHARE * shortfall]
        return [text for _cost, text in sorted(found)]


def _reason(name: str, features: QualityFeatures, face_width_px: float) -> str:
    return quality_reason(name, face_width_px, features.eye_distance_px, TEMPLATE_EYE_DISTANCE)
