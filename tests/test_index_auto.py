"""#52 item 3: the embedded default (`auto`) searches exactly while that is fast and switches to FAISS's graph on its
own past a size, built in the background while the exact index answers, with writes made meanwhile kept."""

from __future__ import annotations

import threading

import numpy as np

from facerec.vectors.faiss.auto import AutoVectors
from facerec.vectors.following import JournalFollowingIndex


def unit(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 512)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_auto_switches_to_a_graph_in_the_background_keeps_writes_made_meanwhile_and_comes_back(tmp_path, monkeypatch):
    import facerec.vectors.faiss.auto as auto

    release = threading.Event()  # the build waits here before it measures and swaps: the test writes meanwhile
    measure = auto.exact_nearest_others
    monkeypatch.setattr(auto, "exact_nearest_others", lambda *args: release.wait(60) and measure(*args))
    engine = AutoVectors(approximate_from=2000, exact_below=1000)
    vectors = unit(2300, seed=1)
    engine.add(np.arange(1500), vectors[:1500])
    assert engine.describe()["index"] == "exact" and not engine.describe()["building"]

    engine.add(np.arange(1500, 2100), vectors[1500:2100])  # past the line: a graph is built in the background
    assert engine.describe()["building"] and engine.describe()["index"] == "exact"
    engine.add(np.arange(2100, 2300), vectors[2100:2300])  # written while it is built
    engine.remove(np.arange(0, 50))
    assert engine.describe()["building"]
    release.set()
    assert engine.wait(timeout=300)
    described = engine.describe()
    assert described["index"] == "approximate" and not described["building"] and described["recall"] >= 0.9
    assert len(engine) == 2250
    _sims, found = engine.search(vectors[2100:2300], 1)
    assert np.mean(found[:, 0] == np.arange(2100, 2300)) >= 0.99  # the faces written during the build are found
    _sims, found = engine.search(vectors[:50], 5)
    assert not set(found.ravel().tolist()) & set(range(50))  # removed during the build: never returned

    follower = JournalFollowingIndex(engine)
    saved = follower.engine.write(tmp_path / "index.faiss")
    assert saved["serving"] == "hnsw" and saved["recall"] == described["recall"]
    reopened = AutoVectors(approximate_from=2000, exact_below=1000).read(tmp_path / "index.faiss", saved)
    assert reopened.describe()["index"] == "approximate" and reopened.describe()["recall"] == described["recall"]

    engine.remove(np.arange(50, 1301))  # the gallery shrank below 1000: exact search again, at once
    assert engine.describe()["index"] == "exact" and len(engine) == 999
    sims, found = engine.search(vectors[1301:1311], 1)
    assert found[:, 0].tolist() == list(range(1301, 1311)) and np.allclose(sims[:, 0], 1, atol=1e-5)


def test_a_gallery_saved_by_the_exact_default_opens_as_auto(tmp_path):
    """Galleries saved with `flat` (the default before `auto`) are read, not rebuilt."""
    from facerec.vectors.faiss import FaissVectors

    flat = FaissVectors("flat")
    flat.add(np.arange(10), unit(10, seed=2))
    saved = flat.write(tmp_path / "index.faiss")
    assert "flat" in AutoVectors.reads_kinds
    opened = AutoVectors().read(tmp_path / "index.faiss", saved)
    assert opened.describe()["index"] == "exact" and len(opened) == 10


def test_a_graph_short_of_the_recall_target_is_not_swapped_in_and_is_retried_only_when_the_gallery_grows():
    """A graph that cannot reach its recall target leaves exact search answering (Health says why), and the writes
    that follow do not each start another build of the whole gallery: the next try waits for a tenth more faces."""
    from facerec.vectors.faiss.auto import RETRY_GROWTH
    from facerec.words.engines import search_index_text

    engine = AutoVectors(approximate_from=1000, exact_below=500, recall_target=1.01)  # no graph can reach it
    vectors = unit(1300, seed=3)
    engine.add(np.arange(1000), vectors[:1000])
    assert engine.wait(timeout=300)
    described = engine.describe()
    assert described["index"] == "exact" and described["declined"]["faces"] == 1000
    assert 0.9 <= described["declined"]["recall"] <= 1.0
    assert described["declined"]["retry_at"] == int(1000 * RETRY_GROWTH) + 1
    sims, found = engine.search(vectors[:20], 1)
    assert found[:, 0].tolist() == list(range(20)) and np.allclose(sims[:, 0], 1, atol=1e-5)  # exact answers
    words = search_index_text(described)
    assert "Search: exact" in words and "short of the 101%" in words and "1,101 faces" in words

    for face in range(1000, 1100):  # below the retry size: no build starts on any of these writes
        engine.add(np.array([face]), vectors[face:face + 1])
        assert not engine.describe()["building"]
    engine.add(np.arange(1100, 1300), vectors[1100:1300])  # past it: tried again
    assert engine.wait(timeout=300)
    assert engine.describe()["declined"]["faces"] == 1300 and engine.describe()["index"] == "exact"


def test_the_ef_search_a_graph_was_tuned_to_is_kept_when_it_is_saved_and_read(tmp_path):
    engine = AutoVectors(approximate_from=1000, exact_below=500, ef_search=8)  # too few for the target at first
    vectors = unit(1200, seed=4)
    engine.add(np.arange(1200), vectors)
    assert engine.wait(timeout=300)
    described = engine.describe()
    assert described["index"] == "approximate" and described["recall"] >= 0.99 and not described["declined"]
    tuned = engine.serving.ef_search
    assert tuned > 8
    saved = engine.write(tmp_path / "index.faiss")
    reopened = AutoVectors(approximate_from=1000, exact_below=500, ef_search=8).read(tmp_path / "index.faiss", saved)
    assert reopened.serving.ef_search == tuned
