"""Evaluate an existing gallery with labelled probe photos (`<name>/<photo>`).

A probe whose folder name is enrolled is a mated search (its person should come back); any other folder is a
non-mated search that should come back "unknown" at the gallery's threshold.
"""

from __future__ import annotations

import numpy as np

from ..calibrate import threshold_at_far
from ..dataset import list_identities
from ..gallery import Gallery
from ..metrics import ClosestIsPositiveAccuracy, MedianDistances
from .embedding import embed_photos


def evaluate_existing(gallery: Gallery, probe_dir, progress_factory=None) -> dict:
    identities = list_identities(probe_dir)
    enrolled = {p.name for p in gallery.list()}
    probes = [(name, path) for name, paths in identities.items() for path in paths]
    if progress_factory:
        with progress_factory(len(probes), "embedding") as bar:
            photos = embed_photos(gallery.pipeline, [p for _, p in probes], bar.update)
    else:
        photos = embed_photos(gallery.pipeline, [p for _, p in probes])
    names = [n for n, _ in probes]
    ranked = gallery.search(photos.embeddings, top_k=5)
    mated = [i for i, n in enumerate(names) if n in enrolled]
    non_mated = [i for i, n in enumerate(names) if n not in enrolled]
    threshold = gallery.threshold
    figures: dict = {"n_probes": len(probes), "n_mated": len(mated), "n_non_mated": len(non_mated),
                     "gallery_identities": len(enrolled), "threshold": threshold,
                     "detection_failures": len(photos.detection_failures),
                     "photos_per_second": round(photos.photos_per_second, 2)}
    if mated:
        top = [[c.name for c in ranked[i]] for i in mated]
        figures["rank1"] = float(np.mean([t[:1] == [names[i]] for t, i in zip(top, mated)]))
        figures["rank5"] = float(np.mean([names[i] in t[:5] for t, i in zip(top, mated)]))
        figures["identified_at_threshold"] = float(np.mean([
            bool(ranked[i]) and ranked[i][0].name == names[i] and ranked[i][0].similarity >= threshold
            for i in mated]))
    if non_mated:
        scores = np.array([ranked[i][0].similarity if ranked[i] else -1.0 for i in non_mated])
        figures["unknown_rejection_rate"] = float(np.mean(scores < threshold))
    face_ids, gallery_vectors = gallery.store.embeddings()
    labels = gallery.store.face_labels()
    gallery_names = [labels[int(f)][1] for f in face_ids]
    if mated and len(gallery_vectors):
        sims = photos.embeddings[mated] @ gallery_vectors.T
        same = np.array([names[i] for i in mated])[:, None] == np.array(gallery_names)[None, :]
        genuine, impostor = sims[same], sims[~same]
        figures["tar_at_far"] = {}
        for far in (1e-3, 1e-2):
            t = threshold_at_far(impostor, far) if len(impostor) else float("nan")
            figures["tar_at_far"][f"{far:.0e}".replace("e-0", "e-")] = {
                "threshold": t, "tar": float(np.mean(genuine >= t)) if len(genuine) else float("nan")}
    all_names = gallery_names + names
    index = {n: i for i, n in enumerate(sorted(set(all_names)))}
    labels_array = np.array([index[n] for n in all_names])
    vectors = np.concatenate([gallery_vectors, photos.embeddings])
    accuracy, medians = ClosestIsPositiveAccuracy(), MedianDistances()
    if len(vectors):
        accuracy.update(vectors, labels_array)
        medians.update(vectors, labels_array)
    figures["closest_is_positive_accuracy"] = accuracy.compute()
    figures["median_distances"] = dict(medians.compute())
    return figures
