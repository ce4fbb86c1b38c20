"""The approximate index: an HNSW graph over the faces' principal subspace, its candidates re-scored exactly.

Face embeddings are far from isotropic: for the shipped model 99.9% of the energy (mean squared component) of
the 13,233 LFW photos' embeddings lies in 111 of the 512 directions. The graph is therefore built over the
vectors projected onto the gallery's own principal subspace (uncentred, so inner products are preserved up to
the energy left out): each hop reads a quarter of the bytes, which makes both search and build several times cheaper at a million faces.
The graph proposes `REFINE_FACTOR` candidates per wanted neighbour and those are re-scored with the full float32
vectors, so the similarities returned are exact and only the candidate set is approximate.

Vectors that do not concentrate (a projection would need more than `PROJECTION_MAX_DIMS` dimensions), and
galleries smaller than `PROJECTION_MIN_FACES` (too few faces to estimate the subspace; small graphs are fast
anyway), get a graph over the full vectors. All of it is one FAISS index, saved and loaded as one file:
`IndexIDMap2(IndexRefineFlat(IndexPreTransform(LinearTransform, IndexHNSWFlat)))`.
"""

from __future__ import annotations

import numpy as np

PROJECTION_MIN_FACES = 10_000
PROJECTION_ENERGY = 0.999
PROJECTION_MAX_DIMS = 256
REFINE_FACTOR = 4
EF_CONSTRUCTION = 80
_SUBSPACE_SAMPLE = 100_000


def principal_subspace(vectors: np.ndarray) -> np.ndarray | None:
    """Rows spanning the fewest directions (a multiple of 16) that hold `PROJECTION_ENERGY` of the vectors'
    energy, [dims, D] float32 orthonormal; None when there are too few vectors or it would take too many dims."""
    if len(vectors) < PROJECTION_MIN_FACES:
        return None
    rng = np.random.default_rng(0)
    sample = vectors[np.sort(rng.choice(len(vectors), min(len(vectors), _SUBSPACE_SAMPLE), replace=False))]
    directions, kept = principal_directions(sample)
    dims = int(np.searchsorted(kept, PROJECTION_ENERGY)) + 1
    dims = -(-dims // 16) * 16
    if dims > PROJECTION_MAX_DIMS:
        return None
    return np.ascontiguousarray(directions[:dims], dtype=np.float32)


def principal_directions(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the uncentred principal directions of `vectors` [D, D] float64, one per row, most energy first; the share of
    the energy the first k of them hold, [D]): uncentred, so inner products are kept up to the energy left out."""
    sample = vectors.astype(np.float64)
    energy, directions = np.linalg.eigh(sample.T @ sample)
    order = np.argsort(energy)[::-1]
    return directions[:, order].T, np.cumsum(energy[order]) / energy.sum()


def new_graph_index(dimension: int, hnsw_m: int, training: np.ndarray | None):
    """An empty approximate index (projected when `training` concentrates), ready for `add_with_ids`."""
    import faiss

    projection = principal_subspace(training) if training is not None else None
    dims = dimension if projection is None else len(projection)
    graph = faiss.IndexHNSWFlat(dims, hnsw_m, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = EF_CONSTRUCTION
    base, parts = graph, [graph]
    if projection is not None:
        transform = faiss.LinearTransform(dimension, dims, False)
        faiss.copy_array_to_vector(projection.ravel(), transform.A)
        transform.is_trained = True
        base = faiss.IndexPreTransform(transform, graph)
        parts += [transform, base]
    refine = faiss.IndexRefineFlat(base)
    refine.k_factor = REFINE_FACTOR
    index = faiss.IndexIDMap2(refine)
    for part in parts + [refine]:  # the C++ objects point to each other; Python must not free any of them
        faiss.add_to_referenced_objects(index, part)
    return index


def is_graph_index(index) -> bool:
    """Whether a loaded index has the structure `new_graph_index` makes (older saves are rebuilt instead)."""
    import faiss

    inner = getattr(index, "index", None)
    return inner is not None and isinstance(faiss.downcast_index(inner), faiss.IndexRefine)


def is_projected(index) -> bool:
    import faiss

    refine = faiss.downcast_index(index.index)
    return isinstance(faiss.downcast_index(refine.base_index), faiss.IndexPreTransform)


def search_parameters(index, ef_search: int, k: int, excluded=None):
    """Parameters for `index.search(queries, k, params=...)`: the graph's efSearch (at least the candidates it
    must return) and, when given, a selector of face ids to skip (translated to the graph's row numbers, which
    the id map does only for top-level parameters)."""
    import faiss

    graph = faiss.SearchParametersHNSW()
    graph.efSearch = max(ef_search, k * REFINE_FACTOR)
    keep = []
    if excluded is not None:
        translated = faiss.IDSelectorTranslated(index.id_map, excluded)
        graph.sel = translated
        keep.append(translated)
    inner = graph
    if is_projected(index):
        inner = faiss.SearchParametersPreTransform()
        inner.index_params = graph
    params = faiss.IndexRefineSearchParameters()
    params.k_factor = REFINE_FACTOR
    params.base_index_params = inner
    for part in keep + [graph, inner]:
        faiss.add_to_referenced_objects(params, part)
    return params
