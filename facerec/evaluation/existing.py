"""Evaluate an existing gallery with labelled probe photos (`<name>/<photo>`).

A probe whose folder name is enrolled is a mated search (its person should come back); any other folder is a
non-mated search that should come back "unknown" at the gallery's threshold (the one in force for its size,
`facerec.openset.threshold_policy`).
"""

from __future__ import annotations

import numpy as np

from facerec.datasets.folders import list_identities
from facerec.evaluation.embedding import embed_photos
from facerec.evaluation.figures import embedding_metrics, genuine_impostor, tar_at_far
from facerec.evaluation.oneshot import training_overlap
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of


def evaluate_existing(gallery: Gallery, probe_dir, progress_factory=None) -> dict:
    identities = list_identities(probe_dir)
    enrolled = {p.name for p in gallery.people()}
    parts = parts_of(gallery)  # what is measured: the embedder, the scorer, the stored embeddings
    probes = [(name, path) for name, paths in identities.items() for path in paths]
    if progress_factory:
        with progress_factory(len(probes), "embedding") as bar:
            photos = embed_photos(parts.pipeline, [p for _, p in probes], bar.update)
    else:
        photos = embed_photos(parts.pipeline, [p for _, p in probes])
    names = [n for n, _ in probes]
    ranked = parts.searching.search(photos.embeddings, top_k=5)
    mated = [i for i, n in enumerate(names) if n in enrolled]
    non_mated = [i for i, n in enumerate(names) if n not in enrolled]
    rule = gallery.services().thresholds.in_force(with_people=True)
    threshold = rule.threshold
    figures: dict = {"n_probes": len(probes), "n_mated": len(mated), "n_non_mated": len(non_mated),
                     "gallery_identities": len(enrolled), "threshold": threshold,
                     "threshold_policy": rule.to_dict(),
                     "detection_failures": len(photos.detection_failures),
                     "photos_per_second": round(photos.photos_per_second, 2)}
    if mated:
        top = [[c.name for c in ranked[i]] for i in mated]
        figures["rank1"] = float(np.mean([t[:1] == [names[i]] for t, i in zip(top, mated)]))
        figures["rank5"] = float(np.mean([names[i] in t[:5] for t, i in zip(top, mated)]))
        figures["identified_at_threshold"] = float(np.mean([
            bool(ranked[i]) and ranked[i][0].name == names[i] and ranked[i][0].score >= threshold
            for i in mated]))
    if non_mated:
        scores = np.array([ranked[i][0].score if ranked[i] else -np.inf for i in non_mated])
        figures["unknown_rejection_rate"] = float(np.mean(scores < threshold))
    face_ids, gallery_vectors = parts.store.faces.embeddings()
    labels = parts.store.faces.labels()
    gallery_names = [labels[int(f)][1] for f in face_ids]
    if mated and len(gallery_vectors):
        genuine, impostor = genuine_impostor(photos.embeddings[mated], [names[i] for i in mated],
                                             gallery_vectors, gallery_names, parts.scorer)
        figures["tar_at_far"] = tar_at_far(genuine, impostor)
    figures.update(embedding_metrics(gallery_vectors, gallery_names, photos.embeddings, names))
    figures["training_overlap"] = training_overlap(sorted(identities), gallery.services().settings.model_card())
    return figures
