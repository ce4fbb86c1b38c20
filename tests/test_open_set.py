"""Open-set evaluation against a known answer: simulated galleries whose stranger scores follow a distribution we
know (independent random unit vectors), scored with a calibration measured on that same distribution, so the
policy's promise (1% of strangers named) must come out at 1% within sampling error, and the full gallery's
non-mated searches are cross-fitted (#28: the tail they are scored with never saw their own pairs)."""

from __future__ import annotations

import numpy as np
import pytest

from facerec.evaluation.open_set import evaluate_open_set
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdPolicy

DIMENSION = 64


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def exact_policy() -> ThresholdPolicy:
    """FAR(t) of two independent random unit vectors in DIMENSION dimensions, from 25 million pairs drawn apart
    from the galleries below: the calibration is right for them by construction."""
    rng = np.random.default_rng(7)
    scores = (unit(rng.standard_normal((5000, DIMENSION))) @ unit(rng.standard_normal((5000, DIMENSION))).T).ravel()
    cosines = np.linspace(0.2, 0.62, 43)
    fars = np.array([np.count_nonzero(scores >= c) for c in cosines]) / scores.size
    keep = fars > 0
    return ThresholdPolicy(ScoreCalibration._of(cosines[keep], fars[keep]), fpir=0.01)


def simulated(people: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Enrolled vectors, one query per person (its enrolled vector plus noise) and the query owners."""
    rng = np.random.default_rng(seed)
    enrolled = unit(rng.standard_normal((people, DIMENSION)))
    queries = unit(enrolled + 0.6 * unit(rng.standard_normal((people, DIMENSION))))
    return enrolled, queries, np.arange(people)


def test_the_promised_rate_is_kept_on_galleries_with_a_known_stranger_distribution(exact_policy) -> None:
    fprs, searches = [], 0
    for seed in range(4):
        enrolled, queries, owners = simulated(700, seed)
        result = evaluate_open_set(enrolled, queries, owners, exact_policy, [100, 700], seed=seed)
        full = result["sizes"][-1]
        assert full["gallery_people"] == 700 and len(full["non_mated_thresholds"]) == 2  # cross-fitted halves
        fprs.append(full["fpir"] * full["non_mated_searches"])
        searches += full["non_mated_searches"]
        assert full["dir"] > 0.9  # the noisy copies are found
    rate = sum(fprs) / searches
    # 5,600 non-mated searches at a true 1%: 56 expected false matches; 99.9% of draws fall in 0.55%..1.55%.
    assert 0.0055 <= rate <= 0.0155, rate


def test_the_full_gallery_scores_strangers_with_tails_that_never_saw_them(exact_policy, monkeypatch) -> None:
    """Record which people each measured tail was fitted on: the tails behind the non-mated thresholds are the
    two halves, disjoint, together all the people."""
    import facerec.evaluation.open_set as open_set

    fitted = []
    measure = open_set.measure_population_tail

    def recording(vectors, identity_ids, *args, **kwargs):
        fitted.append(set(np.asarray(identity_ids).tolist()))
        return measure(vectors, identity_ids, *args, **kwargs)

    monkeypatch.setattr(open_set, "measure_population_tail", recording)
    enrolled, queries, owners = simulated(700, 11)
    evaluate_open_set(enrolled, queries, owners, exact_policy, [700], seed=3)
    everyone, first, second = fitted
    assert everyone == set(range(700))
    assert first.isdisjoint(second) and first | second == everyone and abs(len(first) - len(second)) <= 1


def test_galleries_of_several_photos_per_person_keep_the_promise(exact_policy) -> None:
    """Independent photos of a person (each one new random draw around the person) make k photos k chances: the
    face-count rule is then exact, and the measured rate stays at the promise for 1, 3 and 5 photos."""
    from facerec.evaluation.photos_per_person import evaluate_photos_per_person

    rng = np.random.default_rng(5)
    people = {f"p{i:03d}": unit(rng.standard_normal((7, DIMENSION))) for i in range(400)}
    strangers = unit(rng.standard_normal((3000, DIMENSION)))
    result = evaluate_photos_per_person(people, strangers, exact_policy, (1, 3, 5), seed=1)
    assert [row["photos_per_person"] for row in result["rows"]] == [1, 3, 5]
    for row in result["rows"]:
        assert row["enrolled_faces"] == 400 * row["photos_per_person"] and row["mated_searches"] == 800
        # 3,000 strangers at a true 1%: 30 expected false matches; 99.9% of draws fall in 0.33%..1.9%
        assert 0.0033 <= row["face_count"]["fpir"] <= 0.019, row
    thresholds = [row["face_count"]["threshold"] for row in result["rows"]]
    assert thresholds == sorted(thresholds) and thresholds[0] < thresholds[-1]  # more faces, a higher threshold
