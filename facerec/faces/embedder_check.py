"""The embedder's load-time self-check: does this CPU compute the shipped model the way its card says?

Why: onnxruntime fuses an int8 QDQ graph into int8 kernels chosen per processor. Kernels for x86 CPUs without VNNI
add pairs of uint8 x int8 products in 16 bits and saturate where both are large, so a model quantised with 8-bit
weights gave other embeddings there (LFW one-shot 0.810 instead of 0.859). The shipped model now has 7-bit
weights, which cannot saturate (255 x 64 x 2 < 32,767), but a user's processor, onnxruntime release or build can
still surprise: this check measures instead of trusting.

How: the card (`self_check`) holds the exact embeddings of a few synthetic faces (`facerec.faces.reference_faces`),
computed by the graph's own arithmetic (onnxruntime with graph optimisations off). On first use the embedder runs
the same faces through its fast session; if any cosine falls under MIN_COSINE it switches to the exact graph
(slower, the same answers everywhere) and says so once in the log; `facerec stats` and the Health tab show the
outcome (`EmbedderCheck.to_dict`).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from facerec.cpu import describe_cpu
from facerec.faces.reference_faces import SEED, reference_faces

MIN_COSINE = 0.995
FAST, EXACT = "fused kernels", "exact graph"
log = logging.getLogger("facerec.embedder")


@dataclass(frozen=True)
class CheckReference:
    """What the card promises: the model file it was made for, the synthetic faces' seed and count, and their
    single-view unit embeddings [count, 512] as the exact graph computes them."""

    model_sha256: str
    seed: int
    embeddings: np.ndarray

    @classmethod
    def from_card(cls, card: dict) -> "CheckReference | None":
        section = card.get("self_check") if isinstance(card, dict) else None
        if not isinstance(section, dict):
            return None
        try:
            raw = base64.b64decode(section["embeddings_float32_base64"], validate=True)
            embeddings = np.frombuffer(raw, dtype="<f4").reshape(int(section["count"]), -1)
            return cls(str(section["model_sha256"]), int(section["seed"]), embeddings)
        except (KeyError, TypeError, ValueError):
            return None

    def to_card(self) -> dict:
        return {"model_sha256": self.model_sha256, "seed": self.seed, "count": len(self.embeddings),
                "min_cosine": MIN_COSINE,
                "inputs": "synthetic aligned faces drawn from the seed by facerec.faces.reference_faces (nothing from "
                          "any dataset)",
                "embeddings": "single view (no flip), unit length, from onnxruntime with graph optimisations off",
                "embeddings_float32_base64": base64.b64encode(
                    np.ascontiguousarray(self.embeddings, dtype="<f4").tobytes()).decode("ascii")}


@dataclass(frozen=True)
class EmbedderCheck:
    """The outcome: which path the embedder runs (FAST or EXACT), the lowest cosine between the fast session's
    embeddings of the reference faces and the card's (None when there was nothing to check against), and why."""

    path: str
    min_cosine: float | None
    reason: str
    cpu: str

    @property
    def switched(self) -> bool:
        return self.path == EXACT

    def to_dict(self) -> dict:
        return {"path": self.path, "min_cosine": None if self.min_cosine is None else round(self.min_cosine, 5),
                "threshold": MIN_COSINE, "reason": self.reason, "cpu": self.cpu}


def exact_reference(embed_single_view: Callable[[np.ndarray], np.ndarray], model_sha256: str,
                    count: int = 8) -> CheckReference:
    """The card's reference: `count` synthetic faces embedded by `embed_single_view` (uint8 [N,112,112,3] ->
    unit [N,512]) of an embedder made with `exact=True`."""
    return CheckReference(model_sha256, SEED, _unit(embed_single_view(reference_faces(count, SEED))))


def check(run_fast: Callable[[np.ndarray], np.ndarray], reference: CheckReference | None,
          model_sha256: str) -> EmbedderCheck:
    """Compare the fast session (`run_fast`: [N,3,112,112] float32 -> [N,512]) with the card's reference."""
    cpu = describe_cpu().summary()
    if reference is None:
        return EmbedderCheck(FAST, None, "no self-check reference in the model card", cpu)
    if reference.model_sha256 != model_sha256:
        return EmbedderCheck(FAST, None, "the card's self-check reference was made for another model file", cpu)
    faces = reference_faces(len(reference.embeddings), reference.seed)
    cosines = (_unit(run_fast(_as_input(faces))) * reference.embeddings).sum(axis=1)
    lowest = float(cosines.min())
    if lowest >= MIN_COSINE:
        return EmbedderCheck(FAST, lowest, f"agrees with the card (every cosine >= {MIN_COSINE})", cpu)
    log.warning("facerec: the embedder's fused kernels disagree with the model card on this CPU (%s): lowest "
                "cosine %.4f < %.3f over %d reference faces; using the exact graph instead (slower, the same "
                "embeddings as on every other CPU)", cpu, lowest, MIN_COSINE, len(cosines))
    return EmbedderCheck(EXACT, lowest, f"fused kernels disagreed with the card (cosine {lowest:.4f} < "
                                        f"{MIN_COSINE}); running the exact graph", cpu)


def _as_input(faces: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(faces.transpose(0, 3, 1, 2).astype(np.float32))


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
