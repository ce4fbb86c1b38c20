"""What every service of one gallery shares, built once by the composition root: the settings it was opened
with, the photo pipeline, the store (the source of truth), the vector index that follows it, the threshold policy
and the gallery's threshold in force, the score every decision compares, the enrollment quality check, and the
model's id.

A service's constructor takes the core and, by keyword, only what is its own (another service it calls, a
calibration of its own), so wiring reads as what each depends on: `Search(core, memory=..., strangers=...)`
rather than nine parts in a row. Each service keeps what it uses of the core privately."""

from __future__ import annotations

from dataclasses import dataclass

from facerec.faces.pipeline import FacePipeline
from facerec.faces.quality import QualityCheck
from facerec.gallery.thresholds import GalleryThresholds
from facerec.openset.cohort import Scorer
from facerec.openset.threshold_policy import ThresholdPolicy
from facerec.settings import Settings
from facerec.storage import Store
from facerec.vectors.base import VectorIndex


@dataclass(frozen=True)
class Core:
    settings: Settings
    pipeline: FacePipeline
    store: Store
    index: VectorIndex
    policy: ThresholdPolicy
    thresholds: GalleryThresholds
    scorer: Scorer
    quality: QualityCheck
    model_id: str
