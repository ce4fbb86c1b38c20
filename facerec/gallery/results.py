"""What the Gallery API returns: plain dataclasses the UI and CLI render (and `to_dict` for JSON)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

import numpy as np

from facerec.faces.detect import DetectedFace
from facerec.faces.quality.score import EnrollmentQuality
from facerec.openset.threshold_policy import ThresholdInForce


@dataclass
class IdentityInfo:
    id: int
    name: str
    photos: int
    note: str | None
    created_at: datetime
    updated_at: datetime
    face_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        data["updated_at"] = self.updated_at.isoformat()
        return data


@dataclass
class EnrollResult:
    identity_id: int
    name: str
    face_id: int
    photos: int
    face: DetectedFace
    crop: np.ndarray | None
    lookalikes: list[tuple[str, float]]
    lookalike_threshold: ThresholdInForce | None = None  # the rule the look-alike check used
    quality: EnrollmentQuality | None = None  # the face's enrollment quality (`facerec.faces.quality`), when calibrated

    def to_dict(self) -> dict:
        data = {"identity_id": self.identity_id, "name": self.name, "face_id": self.face_id,
                "photos": self.photos, "face": self.face.to_dict(),
                "lookalikes": [{"name": n, "similarity": round(s, 4)} for n, s in self.lookalikes]}
        if self.lookalike_threshold is not None:
            data.update(threshold=round(self.lookalike_threshold.threshold, 4),
                        **_policy_fields(self.lookalike_threshold))
        if self.quality is not None:
            data["quality"] = self.quality.to_dict()
        return data


@dataclass
class Candidate:
    name: str
    identity_id: int
    similarity: float  # cosine similarity in [-1, 1] of the best-matching enrolled face of this identity


@dataclass
class FaceMatch:
    """One face found in a query photo. `name` is None when the best candidate is below the threshold."""

    face: DetectedFace
    name: str | None
    similarity: float | None
    candidates: list[Candidate]
    threshold: float
    rule: ThresholdInForce | None = None  # how the threshold was set, and its expected stranger-match rate
    embedding: np.ndarray | None = field(default=None, repr=False)  # the face's; never in `to_dict`
    sighting_id: int | None = None  # the sighting this identification was kept as (`facerec.gallery.sightings`)

    @property
    def label(self) -> str:
        return self.name if self.name is not None else "unknown"

    def redacted(self) -> "FaceMatch":
        """What someone without the admin password may learn: the name of a face that matches, nothing about
        the people it does not match (no runners-up, no similarity for an unknown face), so the gallery cannot be
        listed, or its faces approached by trial, one upload at a time."""
        if self.name is None:
            return FaceMatch(self.face, None, None, [], self.threshold, self.rule)
        return FaceMatch(self.face, self.name, self.similarity, self.candidates[:1], self.threshold, self.rule)

    def to_dict(self) -> dict:
        return {"face": self.face.to_dict(), "name": self.label, "known": self.name is not None,
                "similarity": None if self.similarity is None else round(self.similarity, 4),
                "threshold": round(self.threshold, 4),
                **(_policy_fields(self.rule) if self.rule is not None else {}),
                "candidates": [{"name": c.name, "similarity": round(c.similarity, 4)} for c in self.candidates],
                **({} if self.sighting_id is None else {"sighting_id": self.sighting_id})}


@dataclass
class VerifyResult:
    same_person: bool
    similarity: float
    threshold: float
    face_a: DetectedFace
    face_b: DetectedFace
    rule: ThresholdInForce | None = None  # one comparison: its expected FPIR is the per-comparison FAR

    def to_dict(self) -> dict:
        return {"same_person": self.same_person, "similarity": round(self.similarity, 4),
                "threshold": round(self.threshold, 4), **(_policy_fields(self.rule) if self.rule is not None else {}),
                "face_a": self.face_a.to_dict(), "face_b": self.face_b.to_dict()}


def _policy_fields(rule: ThresholdInForce) -> dict:
    policy = rule.to_dict()
    return {"expected_fpir": policy["expected_fpir"], "threshold_policy": policy}
