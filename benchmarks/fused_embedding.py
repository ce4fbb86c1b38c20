"""How the fused pack joins facerec's embedding and dlib's into one 512-d unit vector, chosen on held-out identities.

    python benchmarks/fused_embedding.py --data ../shared/data --out benchmarks/results/fused_embedding.json

The gallery, its FAISS index and pgvector's column hold 512 numbers a face, and a cosine is a dot product. Joining
facerec's unit embedding u (512) and dlib's unit descriptor d (128, raw and mirrored averaged: the public-domain
pack's choice, benchmarks/public_domain_embedding.py) as [sqrt(1 - w) P u, sqrt(w) d] makes the dot product of two
faces (1 - w) cos_facerec' + w cos_dlib, where P keeps u's first 384 principal directions (measured on the first
crop of training identities, never a held-out one) so the whole fits 512. dlib's raw cosines spread far less than
facerec's (their impostor scores' standard deviation is about a quarter), so an equal w would let facerec's decide
alone: candidates are w from 0 to 1, with the w that gives both parts' impostor cosines the same spread on the
basis faces (`balanced_weight`) reported beside them, and the 640-d join with P = identity (which would not fit: the control for what the projection costs). Measured on the 150
selection identities (never trained on by facerec's network), every pair: TAR at FAR 1e-3 / 1e-4 / 1e-5 of the raw
joined cosine. The weight shipped is the balanced one, which no held-out face chose; the grid shows where it sits.
dlib's descriptors come from `../shared/data/teacher/celeba112_dlib.npz` (dlib's runtime on the same crops; the
pack's ONNX conversion equals it, benchmarks/dlib_onnx_agreement.py). LFW is never read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import held_out, list_identities  # noqa: E402
from facerec.evaluation.calibrate_model import cached_embeddings  # noqa: E402
from facerec.evaluation.cohort_model import cohort_candidates  # noqa: E402
from facerec.faces.embed import FaceEmbedder  # noqa: E402
from facerec.packs.projection import principal_directions  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

WEIGHTS = (0.0, 0.5, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 1.0)
FARS = (1e-3, 1e-4, 1e-5)
KEPT = 384
BASIS_FACES = 3000


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def tar_at_fars(similarity: np.ndarray, same: np.ndarray) -> dict[str, float]:
    upper = np.triu_indices(len(similarity), 1)
    scores, genuine = similarity[upper], same[upper]
    impostors = np.sort(scores[~genuine])[::-1]
    return {f"tar_at_far_{far:.0e}": round(float(np.mean(scores[genuine] > impostors[max(0, int(far * len(impostors)) - 1)])), 4)
            for far in FARS}


def dlib_descriptors(data: Path, keys: list[str]) -> np.ndarray:
    """Unit dlib descriptors (crop and mirror averaged) of celeba112 crops `<identity>/<file>`, from the teacher file."""
    with np.load(data / "teacher" / "celeba112_dlib.npz") as teacher:
        row = {path: i for i, path in enumerate(teacher["paths"].tolist())}
        chosen = [row[key] for key in keys]
        return unit(teacher["descriptor"][chosen].astype(np.float64) + teacher["descriptor_mirror"][chosen])


def balanced_weight(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The w at which both parts' impostor cosines (every pair of different basis faces: one face per identity)
    spread alike: w / (1 - w) = (std_facerec / std_dlib) ** 2."""
    upper = np.triu_indices(len(ours), 1)
    ratio = float(np.std((ours @ ours.T)[upper]) / np.std((theirs @ theirs.T)[upper])) ** 2
    return ratio / (1 + ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cache", default="cache")
    args = parser.parse_args()
    data = Path(args.data)
    celeba = list_identities(data / "celeba112")
    selection = sorted(held_out(celeba, "disjoint").selection)
    paths = [photo for name in selection for photo in celeba[name]]
    labels = np.array([p.parent.name for p in paths])
    embedder = FaceEmbedder(Settings.from_env().model_path, flip_tta=True)
    ours = cached_embeddings(embedder, paths, Path(args.cache) / "selection_embeddings.npz").astype(np.float64)
    basis_paths = cohort_candidates(data, "disjoint")[:BASIS_FACES]
    basis = principal_directions(cached_embeddings(embedder, basis_paths, Path(args.cache) / "basis_embeddings.npz"), KEPT)
    theirs = dlib_descriptors(data, [f"{p.parent.name}/{p.name}" for p in paths])
    basis_dlib = dlib_descriptors(data, [f"{p.parent.name}/{p.name}" for p in basis_paths])
    balanced = balanced_weight(cached_embeddings(embedder, basis_paths, Path(args.cache) / "basis_embeddings.npz"),
                               basis_dlib)
    same = labels[:, None] == labels[None, :]
    projected = unit(ours @ basis.T)
    rows = []
    for weight in WEIGHTS:
        for kept, part in ((KEPT, projected), (512, ours)):
            if kept == 512 and weight not in (0.0, 0.5):
                continue
            joined = np.hstack([np.sqrt(1 - weight) * part, np.sqrt(weight) * theirs])
            rows.append({"dlib_weight": weight, "facerec_dimensions": kept,
                         **tar_at_fars(joined @ joined.T, same)})
            print(rows[-1], flush=True)
    weight = round(balanced, 2)
    joined = np.hstack([np.sqrt(1 - weight) * projected, np.sqrt(weight) * theirs])
    chosen = {"dlib_weight": weight, "facerec_dimensions": KEPT, **tar_at_fars(joined @ joined.T, same)}
    print("chosen", chosen)
    write_result(args.out, {
        "what": "the fused pack's joined embedding: dlib's weight and the projection of facerec's part, chosen on "
                "held-out identities", "identities": len(selection), "photos": len(paths),
        "split": "disjoint, selection identities", "basis_faces": BASIS_FACES, "rows": rows,
        "balanced_weight": round(balanced, 4),
        "rule": "the balanced weight (measured on training faces only, rounded to 0.01) with the 384 directions; "
                "the held-out rows check it and choose nothing", "chosen": chosen,
    }, embedder.model_path, 0)


if __name__ == "__main__":
    main()
