"""One-shot identification on a folder-per-identity dataset, in a fresh temporary gallery.

Protocol (../shared/data/README.md): for every identity with >= 2 photos, in name order, one photo is enrolled
(`random.seed(seed)` once, then `random.choice` over its photos in filename order) and the others are queries.
With `distractors`, identities with a single photo are enrolled too. Figures:
- rank-1 / rank-5 and the CMC curve (closed set: every query's identity is enrolled);
- open set (optional, `facerec.evaluation.open_set`): at several gallery sizes, the FPIR (stranger-match rate)
  and DIR (detection and identification rate) at the threshold the policy sets for that size, with intervals,
  from every photo of the people outside each gallery as a non-mated search (thousands with distractors);
- TAR at FAR 1e-3 / 1e-2 from genuine (query vs own enrolled photo) and impostor (vs every other enrolled
  photo) similarities;
- the spec's embedding metrics over enrolled + query embeddings under their true labels;
- `training_overlap`: how many of the evaluated people the model was trained on (from its model card,
  `facerec.datasets.training_identities`), with a warning when any are: their scores overstate accuracy on new people.

`n_gallery` is the number of people enrolled in the closed-set gallery (every evaluated person, distractors
included); the open-set galleries are smaller draws, and each of their rows says how many people it held out.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from facerec.datasets.folders import choose_enrolled, list_identities
from facerec.datasets.training_identities import overlap_warning, seen_in_training
from facerec.errors import InvalidArgument
from facerec.evaluation.embedding import EmbeddedPhotos, embed_photos
from facerec.evaluation.figures import embedding_metrics, genuine_impostor, tar_at_far
from facerec.evaluation.open_set import evaluate_open_set, parse_sizes
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.provenance import provenance
from facerec.settings import Settings

CMC_RANKS = 10


@dataclass
class OneShotResult:
    figures: dict
    genuine: np.ndarray = field(repr=False)
    impostor: np.ndarray = field(repr=False)
    cmc: np.ndarray = field(repr=False)
    confusions: list[dict] = field(default_factory=list, repr=False)


def plan_protocol(data_dir: Path, max_per_identity: int | None, distractors: bool, seed: int):
    """(enrolled {name: path}, queries [(name, path)], distractor {name: path}) per the protocol."""
    identities = list_identities(data_dir)
    if max_per_identity is not None:
        identities = {n: p for n, p in identities.items() if len(p) <= max_per_identity}
    enrolled = choose_enrolled(identities, seed)
    queries = [(name, p) for name in enrolled for p in identities[name] if p != enrolled[name]]
    extra = {n: p[0] for n, p in identities.items() if len(p) == 1} if distractors else {}
    return enrolled, queries, extra


def evaluate_one_shot(data_dir: str | Path, settings: Settings, max_per_identity: int | None = None,
                      distractors: bool = False, open_set: bool = False, seed: int = 51,
                      progress=None, gallery_sizes: str = "100,1000,all") -> OneShotResult:
    data_dir = Path(data_dir)
    enrolled, queries, extra = plan_protocol(data_dir, max_per_identity, distractors, seed)
    if not enrolled:
        raise InvalidArgument(f"no identity in {data_dir} has two or more photos (after --max-per-identity)")
    gallery_names = list(enrolled) + list(extra)
    gallery_paths = [enrolled[n] for n in enrolled] + [extra[n] for n in extra]
    with tempfile.TemporaryDirectory(prefix="facerec-eval-") as home:
        gallery = Gallery(settings.with_(home=Path(home), database_url=None, store_crops=False))
        parts = parts_of(gallery)  # what is measured: the embedder, the scorer, the policy
        try:
            photos = embed_photos(parts.pipeline, gallery_paths + [p for _, p in queries], progress)
            gallery_vectors = photos.embeddings[: len(gallery_paths)]
            query_vectors = photos.embeddings[len(gallery_paths):]
            query_names = [n for n, _ in queries]
            parts.enrollment.add_embeddings([
                {"name": n, "embedding": v, "photo_sha256": s, "box": b}
                for n, v, s, b in zip(gallery_names, gallery_vectors, photos.sha256, photos.boxes)
            ])
            ranked = parts.searching.search(query_vectors, top_k=CMC_RANKS)
            figures = _closed_set(ranked, query_names)
            genuine, impostor = genuine_impostor(query_vectors, query_names, gallery_vectors, gallery_names,
                                                 parts.scorer)
            figures["tar_at_far"] = tar_at_far(genuine, impostor)  # on the score the gallery decides with
            figures["score"] = parts.scorer.scale
            figures["gallery_threshold"] = gallery.services().thresholds.in_force().threshold
            figures["threshold_policy"] = gallery.services().thresholds.in_force(with_people=True).to_dict()
            figures["provenance"] = provenance(settings.model_path, settings.num_threads, parts.pipeline.embedder)
            if open_set:
                owner = {name: i for i, name in enumerate(gallery_names)}
                figures["open_set"] = evaluate_open_set(
                    gallery_vectors, query_vectors, np.array([owner[n] for n in query_names]), parts.policy,
                    parse_sizes(gallery_sizes, len(gallery_names)), seed, parts.scorer)
        finally:
            gallery.close()
    figures.update(embedding_metrics(gallery_vectors, gallery_names, query_vectors, query_names))
    figures.update(_counts(photos, enrolled, extra, queries))
    figures["training_overlap"] = training_overlap(gallery_names, settings.model_card())
    confusions = [
        {"query": str(path), "truth": name, "matched": r[0].name, "similarity": round(r[0].similarity, 4)}
        for (name, path), r in zip(queries, ranked) if r and r[0].name != name
    ]
    confusions.sort(key=lambda c: -c["similarity"])
    return OneShotResult(figures, genuine, impostor, np.array(figures["cmc"]), confusions)


def training_overlap(names: list[str], card: dict) -> dict:
    """{"known", "people", "evaluated_people", "examples", "warning"}: which evaluated people (dataset folder names)
    the model's card lists as training identities. `known` is False when the card lists none."""
    if not card.get("training_identities"):
        return {"known": False, "evaluated_people": len(names),
                "warning": "the model card does not list its training identities: whether these people were "
                           "trained on is unknown"}
    seen = seen_in_training(names, card)
    return {"known": True, "people": len(seen), "evaluated_people": len(names), "examples": seen[:5],
            "warning": overlap_warning(len(seen), len(names))}


def _closed_set(ranked, truth: list[str]) -> dict:
    ranks = []
    for candidates, name in zip(ranked, truth):
        names = [c.name for c in candidates]
        ranks.append(names.index(name) + 1 if name in names else CMC_RANKS + 1)
    ranks = np.array(ranks)
    cmc = [float(np.mean(ranks <= k)) for k in range(1, CMC_RANKS + 1)]
    return {"rank1": cmc[0], "rank5": cmc[4], "cmc": cmc}


def _counts(photos: EmbeddedPhotos, enrolled: dict, extra: dict, queries: list) -> dict:
    return {"n_identities": len(enrolled), "n_distractors": len(extra), "n_gallery": len(enrolled) + len(extra),
            "n_queries": len(queries), "detection_failures": len(photos.detection_failures),
            "unreadable": len(photos.unreadable), "photos": len(photos.paths),
            "seconds": round(photos.seconds, 2), "photos_per_second": round(photos.photos_per_second, 2)}
