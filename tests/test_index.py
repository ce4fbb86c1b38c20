"""FaceIndex search semantics on its own: exact kinds return exactly the brute-force neighbours, with the database's
face ids, before and after removals (the large-gallery path reads FAISS's storage directly, so it must follow it)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from facerec.gallery.composition import parts_of
from facerec.vectors.faiss import FAISS_BLAS_QUERIES, PARALLEL_SCAN_MIN, FaceIndex


def unit_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 512)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def brute_force(vectors: np.ndarray, ids: np.ndarray, queries: np.ndarray, k: int):
    scores = queries.astype(np.float64) @ vectors.astype(np.float64).T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), ids[order]


@pytest.mark.parametrize("count", [PARALLEL_SCAN_MIN - 1, PARALLEL_SCAN_MIN, 3 * PARALLEL_SCAN_MIN])
@pytest.mark.parametrize("queries_count", [6, FAISS_BLAS_QUERIES])
def test_flat_search_is_exact_on_both_sides_of_the_parallel_thresholds(count, queries_count) -> None:
    vectors = unit_vectors(count, seed=count)
    ids = np.arange(count, dtype=np.int64) * 7 + 100  # database ids are not row numbers
    index = FaceIndex("flat")
    index.add(ids, vectors)
    rng = np.random.default_rng(1)
    noise = 0.05 * rng.standard_normal((queries_count, 512)).astype(np.float32)
    queries = vectors[rng.choice(count, queries_count, replace=False)] + noise
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    similarities, found = index.search(queries, 5)

    expected_scores, expected_ids = brute_force(vectors, ids, queries, 5)
    assert found.shape == (queries_count, 5) and similarities.dtype == np.float32 and found.dtype == np.int64
    np.testing.assert_array_equal(found, expected_ids)
    np.testing.assert_allclose(similarities, expected_scores, atol=1e-5)


def test_parallel_flat_search_follows_removals_and_additions() -> None:
    count = 2 * PARALLEL_SCAN_MIN
    vectors = unit_vectors(count, seed=3)
    ids = np.arange(count, dtype=np.int64) + 1
    index = FaceIndex("flat")
    index.add(ids, vectors)
    removed = ids[::3]
    index.remove(removed)  # flat indexes delete in place
    kept = np.setdiff1d(ids, removed)
    extra = unit_vectors(500, seed=4)
    extra_ids = np.arange(500, dtype=np.int64) + 10 * count
    index.add(extra_ids, extra)
    all_ids = np.concatenate([kept, extra_ids])
    all_vectors = np.concatenate([vectors[kept - 1], extra])

    # Query exactly at removed and at newly added vectors.
    queries = np.concatenate([vectors[removed[:4] - 1], extra[:4]])
    similarities, found = index.search(queries, 3)

    assert not np.isin(found, removed).any()
    np.testing.assert_array_equal(found[4:, 0], extra_ids[:4])
    np.testing.assert_allclose(similarities[4:, 0], 1.0, atol=1e-5)
    expected_scores, expected_ids = brute_force(all_vectors, all_ids, queries, 3)
    np.testing.assert_array_equal(found, expected_ids)
    np.testing.assert_allclose(similarities, expected_scores, atol=1e-5)


def test_k_larger_than_the_index_returns_every_vector_sorted() -> None:
    vectors = unit_vectors(PARALLEL_SCAN_MIN, seed=5)
    index = FaceIndex("flat")
    index.add(np.arange(PARALLEL_SCAN_MIN), vectors)
    similarities, found = index.search(vectors[:1], PARALLEL_SCAN_MIN + 10)
    assert found.shape == (1, PARALLEL_SCAN_MIN)
    assert sorted(found[0].tolist()) == list(range(PARALLEL_SCAN_MIN))
    assert np.all(np.diff(similarities[0]) <= 0) and found[0, 0] == 0


# ----- HNSW deletes: tombstones, persisted, compacted ----------------------------------------------------------
def hnsw_gallery(home):
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    return Gallery(Settings.from_env(home=home, index_kind="hnsw", store_crops=False))


def test_hnsw_delete_tombstones_then_compacts_past_the_limit(tmp_path) -> None:
    from facerec.vectors.faiss import TOMBSTONE_FRACTION
    from facerec.vectors.saved_files import INDEX_META_FILE

    home = tmp_path / "gallery"
    vectors = unit_vectors(200, seed=7)
    names = [f"person {i:03d}" for i in range(200)]
    with hnsw_gallery(home) as gallery:
        face_ids = parts_of(gallery).enrollment.add_embeddings([{"name": n, "embedding": v} for n, v in zip(names, vectors)])
        graph = parts_of(gallery).index.engine.faiss_index
        for name in names[:10]:  # 5% of the graph: tombstoned, the graph object is kept
            gallery.delete(name)
        assert parts_of(gallery).index.engine.faiss_index is graph
        assert len(parts_of(gallery).index) == 190 and parts_of(gallery).index.engine.faiss_index.ntotal == 200
        _, found = parts_of(gallery).index.search(vectors[:10], 5)
        assert not np.isin(found, face_ids[:10]).any()
        assert [row[0].name for row in parts_of(gallery).searching.search(vectors[10:12], 1)] == names[10:12]
        assert not {row[0].name for row in parts_of(gallery).searching.search(vectors[:10], 1)} & set(names[:10])
    meta = json.loads((home / INDEX_META_FILE).read_text())
    assert meta["tombstones"] == face_ids[:10]

    with hnsw_gallery(home) as reopened:  # tombstones come back with the saved graph
        assert parts_of(reopened).index.engine.faiss_index.ntotal == 200 and len(parts_of(reopened).index) == 190
        _, found = parts_of(reopened).index.search(vectors[:10], 5)
        assert not np.isin(found, face_ids[:10]).any()
        deletions = int(TOMBSTONE_FRACTION * 200) - 10 + 1
        for name in names[10 : 10 + deletions]:  # past the limit: rebuilt from the database
            reopened.delete(name)
        assert parts_of(reopened).index.engine.faiss_index.ntotal == len(parts_of(reopened).index) == 200 - 10 - deletions
        assert not parts_of(reopened).index.engine.tombstones
        assert sorted(parts_of(reopened).index.reconstruct_ids().tolist()) == face_ids[10 + deletions :]


def test_index_kind_and_search_effort_come_from_the_environment(tmp_path, monkeypatch) -> None:
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    monkeypatch.setenv("FACEREC_INDEX", "hnsw")
    monkeypatch.setenv("FACEREC_HNSW_EF", "200")
    with Gallery(Settings.from_env(home=tmp_path / "gallery")) as gallery:
        assert parts_of(gallery).index.kind == "hnsw" and parts_of(gallery).index.engine.ef_search == 200
        assert gallery.services().maintenance.stats()["index"] == "hnsw"


# ----- HNSW over the principal subspace: exact similarities, tombstones, persistence -------------------------
def concentrated_vectors(count: int, seed: int) -> np.ndarray:
    """Unit vectors whose energy lies in 48 of the 512 directions, as real face embeddings' mostly does."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((512, 48)))[0].T  # [48, 512] orthonormal
    vectors = rng.standard_normal((count, 48)) @ basis + 0.002 * rng.standard_normal((count, 512))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_large_hnsw_gallery_projects_and_returns_exact_similarities(tmp_path) -> None:
    from facerec.vectors.faiss.hnsw import PROJECTION_MIN_FACES, is_projected

    home = tmp_path / "gallery"
    count = PROJECTION_MIN_FACES + 2000
    vectors = concentrated_vectors(count + 40, seed=11)
    vectors, queries = vectors[:count], vectors[count:]
    names = [f"person {i:05d}" for i in range(count)]
    with hnsw_gallery(home) as gallery:
        face_ids = np.array(parts_of(gallery).enrollment.add_embeddings([{"name": n, "embedding": v} for n, v in zip(names, vectors)]))
        parts_of(gallery).index.sync(parts_of(gallery).store)
        assert is_projected(parts_of(gallery).index.engine.faiss_index)  # rebuilt over the subspace once the gallery got large enough
        similarities, found = parts_of(gallery).index.search(queries, 5)
        expected_scores, expected_ids = brute_force(vectors, face_ids, queries, 5)
        assert np.mean(found[:, 0] == expected_ids[:, 0]) >= 0.95
        hits = found[:, 0] == expected_ids[:, 0]
        np.testing.assert_allclose(similarities[hits, 0], expected_scores[hits, 0], atol=1e-5)  # exact re-score

        top = int(expected_ids[0, 0])
        gallery.delete(names[int(np.flatnonzero(face_ids == top)[0])])
        assert parts_of(gallery).index.engine.tombstones == {top}
        _, found = parts_of(gallery).index.search(queries[:1], 5)
        assert top not in found[0]

    with hnsw_gallery(home) as reopened:
        assert is_projected(parts_of(reopened).index.engine.faiss_index) and parts_of(reopened).index.engine.tombstones == {top}
        _, found = parts_of(reopened).index.search(queries, 5)
        assert not np.isin(found, [top]).any()
        assert np.mean(found[1:, 0] == expected_ids[1:, 0]) >= 0.95


# ----- index files a crash or a mistake left behind (#29 row 6) -------------------------------------------------
def _gallery_home_with_index(tmp_path):
    """A one-face gallery (embeddings added in bulk: no photo needed) whose index is saved in its folder."""
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as gallery:
        parts_of(gallery).enrollment.add_embeddings([{"name": "Someone", "embedding": unit_vectors(1, seed=3)[0]}])
    assert (home / "index.faiss").is_file()
    return home


def test_temp_files_of_killed_saves_are_removed_when_the_index_is_opened(tmp_path) -> None:
    import os
    import subprocess
    import sys

    from facerec.gallery import Gallery
    from facerec.settings import Settings

    home = _gallery_home_with_index(tmp_path)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(finished.stdout)  # a process that has exited, as a SIGKILLed save's would have
    stale = [home / f".index.faiss.{dead}.140000000000.tmp", home / f".index.json.{dead}.140000000000.tmp"]
    live = home / f".index.faiss.{os.getpid()}.1.tmp"  # a save in progress in a live process: not touched
    for path in stale + [live]:
        path.write_bytes(b"\0" * 4096)
    with Gallery(Settings(home=home)) as gallery:
        assert len(gallery.people()) == 1
    assert not any(path.exists() for path in stale) and live.exists()


def test_an_index_file_that_is_a_folder_is_one_clear_line_and_leaves_no_temp_file(tmp_path) -> None:
    import subprocess
    import sys

    home = _gallery_home_with_index(tmp_path)
    (home / "index.faiss").unlink()
    (home / "index.faiss").mkdir()
    for _ in range(2):
        result = subprocess.run([sys.executable, "-m", "facerec.cli", "stats", "--home", str(home)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.strip().count("\n") == 0 and "is not a file (a folder?)" in result.stderr
    assert not list(home.glob(".index*.tmp"))


# ----- a saved index that lies (#29 row 2) ----------------------------------------------------------------------
def _bulk_gallery(home, names: list[str], seed: int):
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    vectors = unit_vectors(len(names), seed=seed)
    with Gallery(Settings(home=home)) as gallery:
        parts_of(gallery).enrollment.add_embeddings([{"name": n, "embedding": v} for n, v in zip(names, vectors)])
    return vectors


def _open(home):
    from facerec.gallery import Gallery
    from facerec.settings import Settings

    return Gallery(Settings(home=home))


def test_another_gallerys_index_copied_in_is_rebuilt_not_searched(tmp_path) -> None:
    import shutil

    _bulk_gallery(tmp_path / "small", ["Small A", "Small B", "Small C"], seed=1)
    vectors = _bulk_gallery(tmp_path / "big", [f"Big {i}" for i in range(5)], seed=2)
    for name in ("index.faiss", "index.json"):  # the same journal shape ("add", 3): the old check let it in
        shutil.copy(tmp_path / "small" / name, tmp_path / "big" / name)
    with _open(tmp_path / "big") as gallery:
        assert gallery.services().maintenance.notices and "belongs to another gallery" in " ".join(gallery.services().maintenance.notices)
        similarities, ids = parts_of(gallery).index.search(vectors, 1)
        assert [parts_of(gallery).store.faces.labels([int(i)])[int(i)][1] for i in ids[:, 0]] == [f"Big {i}" for i in range(5)]
        assert np.all(similarities <= 1.0)


@pytest.mark.parametrize("checksum", [True, False], ids=["with checksum", "checksum recomputed"])
def test_a_damaged_vector_is_caught_and_no_similarity_exceeds_one(tmp_path, checksum) -> None:
    home = tmp_path / "home"
    vectors = _bulk_gallery(home, ["Al Sharpton", "Other Person"], seed=3)
    data = bytearray((home / "index.faiss").read_bytes())
    offset = bytes(data).find(vectors[0].astype(np.float32).tobytes())
    assert offset > 0
    data[offset + 3] ^= 0x40  # one exponent byte of the first stored number: that vector is no longer unit length
    (home / "index.faiss").write_bytes(bytes(data))
    if not checksum:  # as whoever damaged it on purpose would: every digest index.json holds recomputed
        from facerec.provenance import file_sha256
        from facerec.vectors.index_integrity import meta_digest

        meta = json.loads((home / "index.json").read_text())
        meta["sha256"] = file_sha256(home / "index.faiss")
        meta["meta_sha256"] = meta_digest(meta)
        (home / "index.json").write_text(json.dumps(meta))
    with _open(home) as gallery:
        reason = "is not the file its last save wrote" if checksum else "is not the database's"
        assert reason in " ".join(gallery.services().maintenance.notices), gallery.services().maintenance.notices
        stranger = unit_vectors(1, seed=99)
        similarities, ids = parts_of(gallery).index.search(np.vstack([stranger, vectors]), 1)
        assert np.all(similarities <= 1.0) and similarities[0, 0] < 0.3  # a stranger matches nobody
        assert list(ids[1:, 0]) == sorted(parts_of(gallery).index.reconstruct_ids())
