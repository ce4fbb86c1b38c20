"""The directions PostgreSQL's search index projects each face onto (`facerec.storage.backends.projection`),
fitted on the model's score cohort: faces of the training side (never the gallery's, which an empty database
does not have yet, nor the evaluation people), embedded by this model. 4,500 faces pin down where the model's
faces lie as well as 29,630 do: their 128 directions hold the same share of other faces' energy (99.95% of
LFW's one-photo people) to within 1e-5."""

from __future__ import annotations

import numpy as np

from facerec.openset.model_card import model_cohort
from facerec.settings import Settings
from facerec.storage.backends.projection import DIMS, Projection
from facerec.vectors.faiss.hnsw import principal_directions


def model_projection(settings: Settings) -> Projection:
    """The `DIMS` uncentred principal directions of the model's cohort (inner products kept up to the energy left
    out), named by the cohort's id, so `facerec db upgrade` fits them again when the model changes."""
    cohort = model_cohort(settings)
    directions, _kept = principal_directions(cohort.embeddings)
    return Projection(np.ascontiguousarray(directions[:DIMS], np.float32), cohort.cohort_id)
