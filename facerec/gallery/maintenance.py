"""Looking after a gallery: what it holds (`stats`), what whoever opens it should know (`warnings`, `notices`),
whether the embedder passed its self-check at load, and re-embedding every face with another model (`reindex`)."""

from __future__ import annotations

import time

from facerec.gallery.core import Core
from facerec.faces.embedder_check import EmbedderCheck
from facerec.faces.reference_faces import SEED, reference_faces
from facerec.gallery.reindex import model_warning as other_model_warning
from facerec.gallery.reindex import reindex as reembed_every_face
from facerec.gallery.sightings import SightingsMemory
from facerec.words.engines import index_outgrows_buffers


class Maintenance:
    def __init__(self, core: Core, *, sightings: SightingsMemory, notices: list[str]) -> None:
        self._settings, self._store, self._index, self._pipeline = core.settings, core.store, core.index, core.pipeline
        self._thresholds, self._policy, self._sightings = core.thresholds, core.policy, sightings
        self.notices = notices  # one line each: what opening the gallery had to repair (the CLI prints them)
        self.model_id = core.model_id

    def stats(self) -> dict:
        """Counts, the model, the threshold in force and where the gallery lives (JSON-ready)."""
        identities, faces = self._store.counts()
        rule = self._thresholds.in_force(with_people=True)
        return {"identities": identities, "faces": faces, "model_id": self.model_id,
                "gallery_models": self._store.faces.model_ids(),
                "threshold": rule.threshold, "threshold_policy": rule.to_dict(),
                "index": self._index.kind, "index_size": len(self._index), "index_memory": self._index.memory(),
                "home": str(self._settings.home), "database": self._store.display_url,
                "store_crops": self._settings.store_crops, "model_warning": self.model_warning(),
                "sightings": self._sightings.count(),
                "sightings_memory": self._sightings.capacity if self._sightings.enabled else 0,
                "embedder": self.embedder_check.to_dict()}

    def model_warning(self) -> str | None:
        """A sentence when the gallery holds embeddings of another model than the one loaded, else None."""
        return other_model_warning(self._store, self.model_id)

    def warnings(self) -> list[str]:
        """One line each for whoever opens the gallery: embeddings of another model, a calibration made for
        another model file."""
        return [w for w in (self.model_warning(), self._policy.calibration.warning) if w]

    def server_warnings(self) -> list[str]:
        """One line each for the operator only (the terminal that started the app, the CLI), never the page: a
        PostgreSQL whose shared_buffers cannot hold the faces' search index."""
        return [w for w in (index_outgrows_buffers(self._index.memory()),) if w]

    @property
    def embedder_check(self) -> EmbedderCheck:
        """What the embedder's self-check at load found (`facerec.faces.embedder_check`): shown by Health."""
        return self._pipeline.embedder.self_check

    def reindex_cost(self, sample: int = 8) -> dict:
        """What `reindex` will cost, before it runs: the faces to re-embed, the loaded pack's milliseconds a face
        measured now on this machine (`sample` synthetic faces, after one to warm up), and the seconds both imply."""
        faces = self._store.counts()[1]
        crops = reference_faces(sample, SEED)
        embedder = self._pipeline.embedder
        embedder.embed(crops[:1])
        started = time.perf_counter()
        embedder.embed(crops)
        per_face = (time.perf_counter() - started) / sample
        return {"faces": faces, "model_id": self.model_id, "ms_per_face": round(per_face * 1000, 1),
                "seconds": round(per_face * faces, 1)}

    def reindex(self) -> int:
        """Re-embed every face from its stored crop with the loaded model; how many were re-embedded."""
        count = reembed_every_face(self._store, self._index, self._pipeline.embedder, self.model_id)
        self._thresholds.forget_population()  # the tail of the old embeddings no longer holds
        return count
