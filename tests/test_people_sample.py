"""Whole-people samples (facerec.algorithms.people_sample, drawn in the database's seeded order): the health report
reaches its face budget, the gallery's own stranger tail never exceeds its cap, and no person is ever split; the
order is the same on SQLite and PostgreSQL and only the people a sample can take are read."""

import numpy as np
import pytest

from facerec.algorithms.people_sample import people_reaching, taken_whole


def test_people_reaching_counts_the_person_who_reaches_the_budget():
    assert people_reaching(np.array([3, 3, 3]), 4) == 2  # 3 < 4 <= 6
    assert people_reaching(np.array([3, 3, 3]), 6) == 2  # exactly reached by the second
    assert people_reaching(np.array([3, 3, 3]), 100) == 3 + 1  # everyone (slicing past the end takes all)


def test_reaching_sample_is_never_short_and_the_capped_one_never_over():
    face_counts = np.random.default_rng(1).integers(1, 9, size=500)
    for budget in (1, 7, 100, 1_000):
        reached, capped = taken_whole(face_counts, budget), taken_whole(face_counts, budget, reach=False)
        assert face_counts[:reached].sum() >= budget
        assert face_counts[:reached - 1].sum() < budget  # the last one taken is the one who reached it
        assert face_counts[:capped].sum() <= budget
        assert reached - capped in (0, 1)  # the same draw, one person fewer at most
    assert taken_whole(np.array([2, 5, 1, 4]), 100) == taken_whole(np.array([2, 5, 1, 4]), 100, reach=False) == 4


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'gallery.db'}"
    return request.getfixturevalue("postgres").new_database()


def test_the_drawn_order_is_seeded_the_same_on_both_backends_and_reads_only_what_is_asked(tmp_path, database_url):
    from facerec.gallery import Gallery
    from facerec.gallery.composition import parts_of
    from facerec.settings import Settings

    rng = np.random.default_rng(5)
    photos = rng.integers(1, 4, size=300)  # 300 people, one to three faces each
    vectors = rng.standard_normal((int(photos.sum()), 512)).astype(np.float32)
    rows = [{"name": f"person {p:03d}", "embedding": vectors[i]}
            for i, p in enumerate(np.repeat(np.arange(len(photos)), photos))]
    settings = Settings.from_env(home=tmp_path / "home", database_url=database_url, store_crops=False)
    with Gallery(settings) as gallery:
        faces = parts_of(gallery).store.faces
        parts_of(gallery).enrollment.add_embeddings(rows)
        ids, counts = faces.people_in_drawn_order(300, seed=0)
        assert len(ids) == 300 and len(set(ids.tolist())) == 300  # everyone, once: a permutation
        assert sorted(counts.tolist()) == sorted(photos.tolist())  # with their whole face counts
        first, _ = faces.people_in_drawn_order(40, seed=0)
        assert first.tolist() == ids[:40].tolist()  # a prefix: only the people a sample can take are read
        assert faces.people_in_drawn_order(40, seed=1)[0].tolist() != first.tolist()  # another seed, another draw
        # the order is integer arithmetic on the ids, so both backends give the same one
        from facerec.storage.faces import drawn_order_key

        assert ids.tolist() == sorted(ids.tolist(), key=lambda i: (drawn_order_key(i, 0), i))
        assert abs(np.corrcoef(np.arange(len(ids)), ids)[0, 1]) < 0.2  # no trace of the ids' own order
