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
    photos: int  # every face the person is searched by: photos enrolled or added, and learned faces
    note: str | None
    created_at: datetime
    updated_at: datetime
    face_ids: list[int] = field(default_factory=list)
    learned: int = 0  # of `photos`, the faces learned from confirmed sightings (`facerec.gallery.templates`)

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
    photos: int  # the person's faces now, learned ones included (as `IdentityInfo.photos`)
    face: DetectedFace
    crop: np.ndarray | None
    lookalikes: list[tuple[str, float]]
    lookalike_threshold: ThresholdInForce | None = None  # the rule the look-alike check used
    quality: EnrollmentQuality | None = None  # the face's enrollment quality (`facerec.faces.quality`), when calibrated
    typical_cosine: float | None = None  # the look-alike threshold as the cosine two typical faces must reach
    learned: int = 0  # of `photos`, the faces learned from confirmed sightings

    def to_dict(self) -> dict:
        """`lookalikes` carry the score the check compared (as `score`, and as `similarity` for older readers);
        `score_threshold` is the check's threshold, `threshold` the cosine it means for typical faces."""
        data = {"identity_id": self.identity_id, "name": self.name, "face_id": self.face_id,
                "photos": self.photos, "learned": self.learned, "face": self.face.to_dict(),
                "lookalikes": [{"name": n, "similarity": round(s, 4), "score": round(s, 4)}
                               for n, s in self.lookalikes]}
        if self.lookalike_threshold is not None:
            rule = self.lookalike_threshold
            data.update(threshold=round(rule.threshold if self.typical_cosine is None else self.typical_cosine, 4),
                        score_threshold=round(rule.threshold, 4), **_policy_fields(rule))
        if self.quality is not None:
            data["quality"] = self.quality.to_dict()
        return data


@dataclass
class Candidate:
    """One enrolled person as a match for a face: their best face by the score the gallery decides with."""

    name: str
    identity_id: int
    similarity: float  # cosine similarity in [-1, 1] of that face
    score: float  # its cohort-normalised score (`facerec.openset.cohort`); the cosine itself on a raw card
    statistics: tuple[float, float] | None = field(default=None, repr=False)  # that face's (cohort mean, spread)


@dataclass
class FaceMatch:
    """One face found in a query photo. `name` is None when the best candidate is below the threshold.

    The decision: `score` (the best candidate's cohort-normalised score) at or above `score_threshold` (the
    policy's). `similarity` is that candidate's cosine and `threshold` the cosine this pair had to reach (the
    score threshold read back for these two faces), so `similarity >= threshold` holds exactly when the face is
    named, as it always has. `stranger_far`: the share of stranger comparisons that score this high (per
    comparison, from the model card), shown as "about 1 in N strangers"."""

    face: DetectedFace
    name: str | None
    similarity: float | None
    candidates: list[Candidate]
    threshold: float
    rule: ThresholdInForce | None = None  # how the threshold was set, and its expected stranger-match rate
    embedding: np.ndarray | None = field(default=None, repr=False)  # the face's; never in `to_dict`
    crop: np.ndarray | None = field(default=None, repr=False)  # its aligned face [112, 112, 3]; never in `to_dict`
    sighting_id: int | None = None  # the sighting this identification was kept as (`facerec.gallery.sightings`)
    score: float | None = None
    score_threshold: float | None = None
    stranger_far: float | None = None
    # the cosine the face alone implies (its own statistics on both sides): what a caller who may not learn
    # anything of the people it does not match is told instead of `threshold`
    own_threshold: float | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return self.name if self.name is not None else "unknown"

    def redacted(self) -> "FaceMatch":
        """What someone without the admin password may learn: the name of a face that matches, nothing about
        the people it does not match (no runners-up, no similarity for an unknown face), so the gallery cannot be
        listed, or its faces approached by trial, one upload at a time."""
        if self.name is None:
            return FaceMatch(self.face, None, None, [],
                             self.threshold if self.own_threshold is None else self.own_threshold, self.rule,
                             score_threshold=self.score_threshold)
        return FaceMatch(self.face, self.name, self.similarity, self.candidates[:1], self.threshold, self.rule,
                         score=self.score, score_threshold=self.score_threshold, stranger_far=self.stranger_far)

    def to_dict(self) -> dict:
        return {"face": self.face.to_dict(), "name": self.label, "known": self.name is not None,
                "similarity": None if self.similarity is None else round(self.similarity, 4),
                "threshold": round(self.threshold, 4),
                "score": _rounded(self.score), "score_threshold": _rounded(self.score_threshold),
                "stranger_far": _rate(self.stranger_far),
                **(_policy_fields(self.rule) if self.rule is not None else {}),
                "candidates": [{"name": c.name, "similarity": round(c.similarity, 4), "score": _rounded(c.score)}
                               for c in self.candidates],
                **({} if self.sighting_id is None else {"sighting_id": self.sighting_id})}


@dataclass
class VerifyResult:
    """Same person when `score` reaches `score_threshold`; `similarity` (the cosine) reaches `threshold` (the
    cosine this pair had to reach) exactly then. `stranger_far`: the share of stranger pairs that score this high."""

    same_person: bool
    similarity: float
    threshold: float
    face_a: DetectedFace
    face_b: DetectedFace
    rule: ThresholdInForce | None = None  # one comparison: its expected FPIR is the per-comparison FAR
    score: float | None = None
    score_threshold: float | None = None
    stranger_far: float | None = None

    def to_dict(self) -> dict:
        return {"same_person": self.same_person, "similarity": round(self.similarity, 4),
                "threshold": round(self.threshold, 4), "score": _rounded(self.score),
                "score_threshold": _rounded(self.score_threshold),
                "stranger_far": _rate(self.stranger_far),
                **(_policy_fields(self.rule) if self.rule is not None else {}),
                "face_a": self.face_a.to_dict(), "face_b": self.face_b.to_dict()}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _rate(far: float | None) -> float | None:
    return None if far is None else float(f"{far:.3g}")


def _policy_fields(rule: ThresholdInForce) -> dict:
    policy = rule.to_dict()
    return {"expected_fpir": policy["expected_fpir"], "threshold_policy": policy}
