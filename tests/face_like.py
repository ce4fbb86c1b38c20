"""Face-like synthetic embeddings for making galleries large cheaply.

Drawn from a Gaussian fitted (mean and full covariance) to the shipped score cohort (`facerec.openset.cohort`:
real faces of training identities, shipped beside the model, so no dataset is needed), and normalised. They
behave like strangers' faces under the cohort-normalised score the gallery decides with, where random isotropic
unit vectors do not: their cosines against every face are tiny but so is their cohort spread, so their
normalised scores against each other spread wide and the gallery's own stranger tail would be measured on
vectors no photo ever gives.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from facerec.openset.cohort import Cohort, cohort_path
from facerec.settings import Settings


@lru_cache(maxsize=1)
def _fit() -> tuple[np.ndarray, np.ndarray]:
    settings = Settings()
    cohort = Cohort.load(cohort_path(settings.model_path))
    vectors = cohort.embeddings.astype(np.float64)
    root = np.linalg.cholesky(np.cov(vectors.T) + 1e-6 * np.eye(vectors.shape[1]))
    return vectors.mean(axis=0), root


def face_like(count: int, seed: int) -> np.ndarray:
    """`count` unit vectors [count, 512] float32 that look like embeddings of strangers' faces."""
    mean, root = _fit()
    drawn = mean + np.random.default_rng(seed).standard_normal((count, len(mean))) @ root.T
    return (drawn / np.linalg.norm(drawn, axis=1, keepdims=True)).astype(np.float32)
