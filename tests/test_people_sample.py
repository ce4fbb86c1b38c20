"""Whole-people samples (facerec.algorithms.people_sample): the health report reaches its face budget, the
gallery's own stranger tail never exceeds its cap, and no person is ever split."""

import numpy as np

from facerec.algorithms.people_sample import draw_whole_people, people_reaching


def test_people_reaching_counts_the_person_who_reaches_the_budget():
    assert people_reaching(np.array([3, 3, 3]), 4) == 2  # 3 < 4 <= 6
    assert people_reaching(np.array([3, 3, 3]), 6) == 2  # exactly reached by the second
    assert people_reaching(np.array([3, 3, 3]), 100) == 3 + 1  # everyone (slicing past the end takes all)


def test_reaching_sample_is_never_short_and_the_capped_one_never_over():
    rng = np.random.default_rng(1)
    face_counts = rng.integers(1, 9, size=500)
    for budget in (1, 7, 100, 1_000):
        reached = draw_whole_people(face_counts, budget, seed=0)
        capped = draw_whole_people(face_counts, budget, seed=0, reach=False)
        assert face_counts[reached].sum() >= budget
        assert face_counts[reached[:-1]].sum() < budget  # the last one drawn is the one who reached it
        assert face_counts[capped].sum() <= budget
        assert len(set(reached.tolist())) == len(reached)  # nobody twice
        assert np.array_equal(capped, reached[:len(capped)])  # the same draw, one person fewer at most
        assert len(reached) - len(capped) in (0, 1)


def test_everyone_is_taken_when_they_fit_and_among_restricts_the_draw():
    face_counts = np.array([2, 5, 1, 4])
    assert sorted(draw_whole_people(face_counts, 100, seed=3, reach=False).tolist()) == [0, 1, 2, 3]
    among = np.array([1, 3])
    drawn = draw_whole_people(face_counts, 100, seed=3, among=among)
    assert sorted(drawn.tolist()) == [1, 3]
    assert np.array_equal(draw_whole_people(face_counts, 6, seed=3), draw_whole_people(face_counts, 6, seed=3))
