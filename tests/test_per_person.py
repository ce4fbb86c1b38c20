"""The policy counts people, not faces (#28): a person with k photos is k ** exponent chances for a stranger.

Checked against references that do not come from the code under test: hand-derived chance counts, simulated
galleries whose photos are known to be independent (k chances) or identical (one chance), and a threshold
worked out by hand on a calibration whose FAR(t) is exactly 10 ** (-10 t)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from facerec.openset.model_card import policy_for
from facerec.openset.per_person import PhotoCounts, effective_comparisons, measure_photo_exponent
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdPolicy


def test_chances_are_summed_over_people() -> None:
    assert effective_comparisons(PhotoCounts.of_people([1, 1, 1]), 3, 0.5) == 3.0
    assert effective_comparisons(PhotoCounts.of_people([4, 9]), 13, 0.5) == pytest.approx(2.0 + 3.0)
    assert effective_comparisons(PhotoCounts.of_people([4, 9]), 13, 1.0) == 13.0  # exponent 1: the face count
    assert effective_comparisons(None, 13, 0.5) == 13.0  # photos per person unknown: never fewer chances
    assert effective_comparisons(PhotoCounts.of_people([4, 9]), 13, None) == 13.0  # a card without the measurement
    counts = np.random.default_rng(0).integers(1, 9, 100_000)  # a histogram sums what a row per person would
    assert effective_comparisons(PhotoCounts.of_people(counts), int(counts.sum()), 0.7) == pytest.approx(
        float(np.sum(counts.astype(np.float64) ** 0.7)), rel=1e-12)


def simulated_people(people: int, photos: int, same_photo: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors in 48 dimensions: each person's photos independent draws, or one draw repeated."""
    rng = np.random.default_rng(seed)
    draws = rng.standard_normal((people, 1 if same_photo else photos, 48))
    vectors = np.repeat(draws, photos, axis=1) if same_photo else draws
    vectors = vectors.reshape(people * photos, 48)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), np.repeat(np.arange(people), photos)


def test_independent_photos_are_k_chances_and_identical_photos_one() -> None:
    independent = measure_photo_exponent(*simulated_people(60, 8, same_photo=False))
    identical = measure_photo_exponent(*simulated_people(60, 8, same_photo=True))
    assert independent["exponent_point"] > 0.85  # k independent draws: k chances (exponent 1)
    assert identical["exponent_point"] < 0.1  # the same photo k times: one chance (exponent 0)
    chances = independent["levels"][0]["chances"]  # at a per-photo rate of 1e-3, well resolved
    assert chances["5"] == pytest.approx(5, rel=0.2) and chances["2"] == pytest.approx(2, rel=0.2)
    assert identical["levels"][0]["chances"]["5"] == pytest.approx(1, abs=0.05)


def test_too_few_people_with_many_photos_measure_nothing() -> None:
    assert measure_photo_exponent(*simulated_people(9, 8, same_photo=False)) is None


def exact_policy(exponent: float) -> ThresholdPolicy:
    """FAR(t) = 10 ** (-10 t) on the card's grid (log-linear, so interpolation is exact)."""
    cosines = np.linspace(0.0, 0.9, 10)
    return ThresholdPolicy(ScoreCalibration._of(cosines, 10.0 ** (-10 * cosines), photo_exponent=exponent), 0.01)


def test_the_threshold_is_the_hand_derived_one_for_a_gallery_of_people() -> None:
    counts = np.array([1] * 50 + [4] * 30 + [9] * 20)  # 100 people, 350 faces
    rule = exact_policy(0.5).for_gallery(int(counts.sum()), len(counts), photo_counts=PhotoCounts.of_people(counts))
    chances = 50 * 1 + 30 * 2 + 20 * 3  # sum of sqrt(k)
    far = 1 - (1 - 0.01) ** (1 / chances)
    assert rule.effective_comparisons == pytest.approx(chances)
    assert rule.threshold == pytest.approx(-math.log10(far) / 10, abs=1e-9)
    assert rule.expected_fpir == pytest.approx(0.01, rel=1e-6)
    by_faces = exact_policy(0.5).for_gallery(int(counts.sum()), len(counts))  # no photo counts: 350 chances
    assert by_faces.threshold == pytest.approx(-math.log10(1 - 0.99 ** (1 / 350)) / 10, abs=1e-9)
    assert by_faces.threshold > rule.threshold


def test_the_shipped_card_keeps_the_face_count_until_its_people_show_fewer_chances() -> None:
    """The shipped card's exponent is the upper end of its bootstrap interval: with 94 held-out target people the
    deep-tail estimate cannot exclude k chances, so a 5-photo gallery keeps today's threshold."""
    from facerec.settings import Settings

    policy = policy_for(Settings())
    section = Settings().model_card()["calibration"]["photos_per_person"]
    assert section["exponent"] == max(section["exponent_interval_90"]) >= section["exponent_point"]
    counts = np.full(1000, 5)
    assert policy.for_gallery(5000, 1000, photo_counts=PhotoCounts.of_people(counts)).threshold == pytest.approx(
        policy.for_gallery(5000, 1000).threshold, abs=1e-9 if section["exponent"] == 1.0 else 0.05)
