"""`facerec-train calibrate`: recalibrate any model in one command and store the result in its model card.

    facerec-train calibrate --model models/M.onnx --data ../shared/data     # writes models/M.json's calibration

Embeds the calibration identities of the model's held-out split (`facerec.datasets.folders.held_out`: 150 celeba112
identities the model was not trained on; from model v9 ("disjoint") not the 150 its training chose anything on
either, so the FAR curve comes from people no choice was made on; the split is the card's `training.held_out_split`,
"single" for models up to v8, where one set did both); the crops are already aligned, so they go straight to the embedder, with the same flip
test-time augmentation the app uses), calibrates FAR(t) with its fitted tail and bootstrap interval
(`facerec.openset.calibrate`), and writes the card's `calibration` section plus the older `thresholds` / `far_curve`
fields. Deterministic: fixed identities, photo order and bootstrap seed. Never reads LFW. Embedding the 2,411
crops is most of the time; `embeddings_cache` (an .npz) keeps them for re-runs of the same model file.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

from facerec.openset.per_person import measure_photo_exponent
from facerec.openset.calibrate import RESAMPLES, SEED, calibrate, legacy_fields
from facerec.datasets.folders import held_out, list_identities
from facerec.faces.pack_parts import Embedder, embedder_for
from facerec.openset.cohort import COSINE, Cohort

DATA_DESCRIPTION = ("celeba112: the calibration identities of facerec.datasets.folders.held_out (never trained on; "
                    "not LFW)")


def card_split(card_path: str | Path) -> str:
    """The held-out split the card's model was trained with ("single" when the card does not say: up to v8)."""
    try:
        return json.loads(Path(card_path).read_text()).get("training", {}).get("held_out_split", "single")
    except (OSError, ValueError):
        return "single"


def held_out_photos(data_dir: str | Path, identities: int | None = None,
                    split: str = "single") -> tuple[list[Path], np.ndarray]:
    """(crop paths, identity label per crop) of the split's calibration identities, in name then file order;
    `identities` keeps only the first N (a quick check, not a calibration to ship)."""
    celeba = list_identities(Path(data_dir) / "celeba112")
    names = sorted(held_out(celeba, split).calibration)[:identities]
    paths = [photo for name in names for photo in celeba[name]]
    return paths, np.array([p.parent.name for p in paths])


def embed_crops(embedder: Embedder, paths: list[Path], progress=None, batch: int = 64) -> np.ndarray:
    """Unit embeddings [N, 512] of aligned 112x112 crops read from `paths`."""
    chunks = []
    for start in range(0, len(paths), batch):
        crops = np.stack([np.asarray(Image.open(p).convert("RGB")) for p in paths[start : start + batch]])
        chunks.append(embedder.embed(crops))
        if progress:
            progress(len(crops))
    return np.concatenate(chunks) if chunks else np.zeros((0, 512), np.float32)


def cached_embeddings(embedder: Embedder, paths: list[Path], cache: str | Path | None = None,
                      progress=None) -> np.ndarray:
    """`embed_crops`, reusing `cache` (.npz) when it holds the same photos embedded by the same model file with
    the same flip setting, and (re)writing it otherwise."""
    keys = np.array([f"{p.parent.name}/{p.name}" for p in paths])
    if cache is not None and Path(cache).is_file():
        with np.load(cache) as saved:
            if (str(saved["model_sha256"]) == embedder.sha256 and bool(saved["flip_tta"]) == embedder.flip_tta
                    and saved["paths"].tolist() == keys.tolist()):
                if progress:
                    progress(len(paths))
                return saved["embeddings"]
    embeddings = embed_crops(embedder, paths, progress)
    if cache is not None:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, embeddings=embeddings, paths=keys, model_sha256=embedder.sha256, flip_tta=embedder.flip_tta)
    return embeddings


def calibrate_model(model_path: str | Path, data_dir: str | Path, flip_tta: bool = True,
                    resamples: int = RESAMPLES, seed: int = SEED, identities: int | None = None,
                    num_threads: int = 0, progress=None, embeddings_cache: str | Path | None = None,
                    split: str = "single", cohort: Cohort | None = None) -> tuple[dict, dict | None]:
    """(calibration, cosine calibration) for the model at `model_path`, measured on the split's calibration
    identities, embedded once: the `calibration` section is of the scores `cohort` normalises
    (`facerec.openset.cohort`) with the raw cosines' beside it, or of raw cosines alone (None beside) without one."""
    started = time.perf_counter()
    paths, labels = held_out_photos(data_dir, identities, split)
    embedder = embedder_for(model_path, flip_tta=flip_tta, num_threads=num_threads)
    embeddings = cached_embeddings(embedder, paths, embeddings_cache, progress)
    embedded = time.perf_counter()

    def section(statistics) -> dict:
        fit_started = time.perf_counter()
        result = calibrate(embeddings, labels, resamples=resamples, seed=seed, statistics=statistics)
        per_person = measure_photo_exponent(embeddings, labels, statistics=statistics)
        return {
            **result, **({"photos_per_person": per_person} if per_person else {}),
            **({} if statistics is None else {"cohort_sha256": cohort.sha256, "cohort_top_k": cohort.top_k}),
            "held_out_split": split, "disjoint_from_selection": split == "disjoint", "model_sha256": embedder.sha256,
            "flip_tta": flip_tta, "data": DATA_DESCRIPTION, "partial": identities is not None,
            "seconds": {"embedding": round(embedded - started, 1),
                        "fit": round(time.perf_counter() - fit_started, 1)},
            "command": "facerec-train " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else None,
        }

    cosine = section(None)
    return (cosine, None) if cohort is None else (section(cohort.statistics(embeddings)), cosine)


def write_to_card(card_path: str | Path, calibration: dict, cosine_calibration: dict | None = None) -> dict:
    """Store `calibration` (the scores the app decides with) in the model card (created if missing; every other
    field kept), and `cosine_calibration` (raw cosines) beside it, from which the older `thresholds` and
    `far_curve` fields keep meaning cosines; returns the card."""
    card_path = Path(card_path)
    card = json.loads(card_path.read_text()) if card_path.is_file() else {"name": card_path.stem}
    card["calibration"] = calibration
    raw = cosine_calibration or calibration
    if cosine_calibration is not None:
        card["calibration_cosine"] = cosine_calibration
    if raw.get("score", COSINE) == COSINE:
        card.update(legacy_fields(raw))
    card_path.write_text(json.dumps(card, indent=1) + "\n")
    return card
