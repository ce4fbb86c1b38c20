"""The score cohort that ships beside a model (`facerec.openset.cohort`), made by `facerec-train calibrate` before
it calibrates (`--cohort-size` for a quick check; `--no-cohort` for a card on raw cosines):

    facerec-train calibrate --model models/M.onnx --data ../shared/data   # writes models/M.cohort.npz, notes the card

The cohort is one face (the first crop by file name) of each of COHORT_SIZE celeba112 identities the model was
trained on, drawn with `random.Random(COHORT_SEED).shuffle` of the sorted training identities, never a held-out
identity (those calibrate the scores) and never LFW. Training identities are people no user enrolls; they are
embedded by the model itself with the app's flip test-time augmentation, so a cohort belongs to one model file.
COHORT_SIZE and TOP_K were chosen on the held-out identities (`benchmarks/cohort_sweep.py`, docs/model.md).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from facerec.datasets.folders import held_out, list_identities
from facerec.evaluation.calibrate_model import cached_embeddings
from facerec.faces.pack_parts import embedder_for
from facerec.openset.cohort import Cohort, cohort_path

COHORT_SIZE = 4500
TOP_K = 300
COHORT_SEED = 7


def cohort_candidates(data_dir: str | Path, split: str = "single") -> list[Path]:
    """The first crop of every celeba112 training identity (the held-out split's people left out), in the seeded
    order the cohort takes them from."""
    celeba = list_identities(Path(data_dir) / "celeba112")
    outside = held_out(celeba, split).everyone
    names = [name for name in sorted(celeba) if name not in outside]
    random.Random(COHORT_SEED).shuffle(names)
    return [celeba[name][0] for name in names]


def make_cohort(model_path: str | Path, data_dir: str | Path, size: int = COHORT_SIZE, top_k: int = TOP_K,
                split: str = "single", flip_tta: bool = True, num_threads: int = 0,
                embeddings_cache: str | Path | None = None, progress=None) -> tuple[Cohort, dict]:
    """The cohort of `size` training identities for the model at `model_path`, and its provenance record."""
    paths = cohort_candidates(data_dir, split)[:size]
    embedder = embedder_for(model_path, flip_tta=flip_tta, num_threads=num_threads)
    embeddings = cached_embeddings(embedder, paths, embeddings_cache, progress)
    provenance = {"faces": len(paths), "top_k": top_k, "seed": COHORT_SEED, "held_out_split": split,
                  "model_sha256": embedder.sha256, "flip_tta": flip_tta,
                  "data": "celeba112: the first crop of each of the first N training identities in the seeded "
                          "order (never a held-out identity, never LFW)"}
    return Cohort(embeddings, top_k), provenance


def write_cohort(card_path: str | Path, cohort: Cohort, provenance: dict) -> dict:
    """Save the cohort beside the model card (`<model>.cohort.npz` for the card `<model>.json` beside its model)
    and record its file, sha256, K and provenance in the card."""
    card_path = Path(card_path)
    target = cohort_path(card_path)
    sha256 = cohort.save(target, provenance)
    card = json.loads(card_path.read_text()) if card_path.is_file() else {"name": card_path.stem}
    card["cohort"] = {"file": target.name, "sha256": sha256, "size_bytes": target.stat().st_size,
                      "top_k": cohort.top_k, **provenance}
    card_path.write_text(json.dumps(card, indent=1) + "\n")
    return card["cohort"]


def cohort_embeddings(model_path: str | Path, data_dir: str | Path, size: int, split: str = "single",
                      cache: str | Path | None = None) -> np.ndarray:
    """The first `size` cohort candidates embedded (for sweeps over the cohort's size)."""
    embedder = embedder_for(model_path, flip_tta=True)
    return cached_embeddings(embedder, cohort_candidates(data_dir, split)[:size], cache)
