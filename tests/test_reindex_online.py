"""A reindex lets identify and enroll go on (#40 item 4), on SQLite with FAISS and on PostgreSQL with pgvector.

The reindex (here with the loaded model, over 200 stored crops) is held after its first batch of embeddings; while
it waits, the main thread identifies enrolled people by name and enrolls a new person. Before, the reindex
embedded every face inside its one write transaction, so the enrollment waited for it (and on SQLite failed on
the database lock). Afterwards every face, the new one included, holds the loaded model's embedding."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.faces.embed import FaceEmbedder
from facerec.gallery import Gallery
from facerec.settings import Settings
from facerec.gallery.composition import parts_of

PEOPLE = ["Alan_Ball", "Biljana_Plavsic", "Art_Hoffmann"]
NEWCOMER = "Andre_Agassi"
FILLER_FACES = 200


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_identify_and_enroll_go_on_during_a_reindex(kind, request, tmp_path, lfw_photo, monkeypatch):
    backend = SQLiteGalleries() if kind == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))
    home = tmp_path / "home"
    with Gallery(Settings(home=home, database_url=backend.url_for(home))) as gallery:
        for person in PEOPLE:
            gallery.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_lookalike=True,
                           allow_low_quality=True)
        noise = np.random.default_rng(0)
        parts_of(gallery).enrollment.add_embeddings([{"name": f"filler {i}", "embedding": noise.standard_normal(512).astype(np.float32),
                                 "photo_sha256": f"{i:064d}", "box": [0, 0, 10, 10], "landmarks": [],
                                 "crop": noise.integers(0, 255, (112, 112, 3), dtype=np.uint8)}
                                for i in range(FILLER_FACES)])
        first_batch_done, go_on = threading.Event(), threading.Event()
        embed = FaceEmbedder.embed

        def held_after_the_first_batch(self, crops, *args, **kwargs):
            result = embed(self, crops, *args, **kwargs)
            if threading.current_thread().name == "reindex" and not first_batch_done.is_set():
                first_batch_done.set()
                assert go_on.wait(120), "the main thread never let the reindex go on"
            return result

        monkeypatch.setattr(FaceEmbedder, "embed", held_after_the_first_batch)
        outcome: dict = {}
        worker = threading.Thread(target=lambda: outcome.update(count=gallery.services().maintenance.reindex()), name="reindex")
        worker.start()
        try:
            assert first_batch_done.wait(120)
            for person in PEOPLE:  # the reindex is under way: identify answers from the gallery as it was
                (match,) = gallery.identify(lfw_photo(person, 2), remember=False)
                assert match.name == person.replace("_", " ")
            enrolled = gallery.enroll(lfw_photo(NEWCOMER, 1), "Andre Agassi", allow_lookalike=True,
                                      allow_low_quality=True)
        finally:
            go_on.set()
            worker.join(300)
        assert outcome["count"] == len(PEOPLE) + FILLER_FACES + 1  # the newcomer was re-embedded too
        assert gallery.services().maintenance.stats()["gallery_models"] == [gallery.services().maintenance.model_id] and gallery.services().maintenance.model_warning() is None
        (match,) = gallery.identify(lfw_photo(NEWCOMER, 2), remember=False)
        assert match.name == "Andre Agassi" and enrolled.name == "Andre Agassi"
