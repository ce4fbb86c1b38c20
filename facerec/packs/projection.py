"""The principal directions of a set of unit embeddings: how the fused pack fits facerec's 512 numbers and dlib's
128 into the 512 the gallery stores a face in, keeping the directions in which faces differ most."""

from __future__ import annotations

import numpy as np


def principal_directions(embeddings: np.ndarray, kept: int) -> np.ndarray:
    """The `kept` principal directions [kept, D] (rows orthonormal, largest variance first, each signed so its
    largest component is positive: the same embeddings give the same basis on every CPU's LAPACK) of `embeddings`
    [N, D] about their mean. Projecting a unit embedding onto them and rescaling to unit length keeps its cosine to
    others where the dropped directions carried little."""
    vectors = np.asarray(embeddings, np.float64)
    centred = vectors - vectors.mean(axis=0)
    _, _, directions = np.linalg.svd(centred, full_matrices=False)
    directions = directions[:kept]
    signs = np.sign(directions[np.arange(len(directions)), np.argmax(np.abs(directions), axis=1)])
    return (directions * signs[:, None]).astype(np.float32)
