"""One stranger-tail estimator (`facerec.openset.stranger_tail`) for the model card and a gallery's own people
(#28 point 2), checked against references that do not come from the estimator itself: hand-built pairs whose
peaks are known, samples drawn from a known generalized Pareto tail in clusters of many repeats, and the card's
calibration and the gallery's measurement of the very same faces.
"""

from __future__ import annotations

import numpy as np
import pytest

from facerec.openset.calibrate import calibrate
from facerec.openset.population_tail import MIN_PEOPLE, measure_population_tail
from facerec.openset.stranger_tail import (StrangerPairs, cutoff_rank, empirical_threshold, fit_tail,
                                           measure_stranger_tail)
from facerec.openset.pareto import fit_generalized_pareto, pareto_quantile
from facerec.openset.threshold_policy import ScoreCalibration


def _clustered(peaks: np.ndarray, repeats: np.ndarray, below: float, people: int,
               rng: np.random.Generator, faces: int = 40) -> StrangerPairs:
    """Pairs of faces: pair of people i (people 2i and 2i+1) scores its peak once and `repeats[i] - 1` more
    times a little under it (its other photos); then pairs at `below` up to a total of `people` x `faces`."""
    scores, first, second = [], [], []
    for i, (peak, count) in enumerate(zip(peaks, repeats)):
        scores += [peak] + list(peak - rng.uniform(0, 0.002, count - 1))
        first += [2 * i] * count
        second += [2 * i + 1] * count
    order = np.argsort(-np.asarray(scores), kind="stable")
    scores = np.append(np.asarray(scores)[order], below)  # the cut-off itself
    first = np.append(np.asarray(first)[order], 0)
    second = np.append(np.asarray(second)[order], 2)
    return StrangerPairs(scores, first, second, np.full(people, faces))


def test_the_fit_reads_one_peak_per_pair_of_people_and_the_rate_from_every_pair() -> None:
    rng = np.random.default_rng(1)
    peaks = np.sort(0.6 + rng.uniform(0.001, 0.2, 300))[::-1]
    once = _clustered(peaks, np.ones(300, int), 0.6, 600, rng)
    many = _clustered(peaks, rng.integers(1, 200, 300), 0.6, 600, rng)
    fit_once, fit_many = fit_tail(once, len(once.scores) - 1), fit_tail(many, len(many.scores) - 1)
    # The peaks are the same, so the shape and scale are those of the peaks alone, by hand:
    reference = fit_generalized_pareto(peaks - 0.6)
    assert (fit_once.shape, fit_once.scale) == pytest.approx(reference)
    assert (fit_many.shape, fit_many.scale) == pytest.approx(reference)
    assert fit_many.clusters == fit_once.clusters == 300
    # ... while the rate counts every pair of faces above the cut-off, out of all (600 x 40 faces) pairs.
    total = (24000 ** 2 - 600 * 40 ** 2) / 2
    assert fit_once.rate == pytest.approx(300 / total)
    assert fit_many.rate == pytest.approx((len(many.scores) - 1) / total)
    assert fit_many.exceedances == len(many.scores) - 1


def test_declustering_recovers_a_known_tail_that_every_exceedance_would_bend() -> None:
    """2,000 pairs of people whose peaks follow a known tail (shape -0.2, scale 0.04); a few look-alike pairs of
    people repeat theirs hundreds of times. Fitted to every exceedance the shape is bent by those few; fitted to
    one peak per pair of people it is the known one."""
    rng = np.random.default_rng(7)
    shape, scale = -0.2, 0.04
    excess = pareto_quantile(rng.uniform(0, 1, 2000), shape, scale)
    order = np.argsort(-excess)
    repeats = np.ones(2000, int)
    repeats[order[:20]] = 400  # the 20 most alike pairs of people: 400 photo pairs each near their peak
    pairs = _clustered(0.5 + excess[order], repeats[order], 0.5, 4000, rng)
    declustered = fit_tail(pairs, len(pairs.scores) - 1)
    every = fit_generalized_pareto(pairs.scores[:-1] - 0.5)
    assert declustered.shape == pytest.approx(shape, abs=0.05) and declustered.scale == pytest.approx(scale, rel=0.1)
    assert abs(every[0] - shape) > 0.1  # the repeats alone move the undeclustered shape by more than 0.1


def test_resamples_hold_the_cutoff_and_bracket_the_point_estimate() -> None:
    rng = np.random.default_rng(3)
    scores = np.sort(rng.normal(0.1, 0.1, 30000))[::-1]
    people = rng.integers(0, 400, (30000, 2))
    pairs = StrangerPairs(scores, people[:, 0], people[:, 1], np.full(400, 1))
    tail = measure_stranger_tail(pairs, resamples=60)
    assert tail.point.threshold == scores[cutoff_rank(pairs)]
    assert {fit.threshold for fit in tail.resampled} == {tail.point.threshold}  # one cut-off, held
    low, high = tail.far_interval(float(tail.point.threshold_at_far(1e-6)))
    assert low <= 1e-6 <= high


def test_the_card_and_the_gallery_measure_the_same_faces_alike() -> None:
    """The card's calibration and a gallery's own tail, given the same faces of the same people, fit the same tail
    (one estimator), and the run-time calibration read from the card answers with that fit."""
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(MIN_PEOPLE + 20, 64))
    labels = np.repeat(np.arange(len(centres)), 3)
    faces = centres[labels] + rng.normal(scale=0.9, size=(len(labels), 64))
    faces = (faces / np.linalg.norm(faces, axis=1, keepdims=True)).astype(np.float32)
    card = calibrate(faces, labels, resamples=20)["tail"]
    gallery = measure_population_tail(faces, labels).fit
    assert gallery.threshold == pytest.approx(card["threshold"], abs=1e-5)
    assert gallery.rate == pytest.approx(card["rate"], rel=1e-3)
    assert (gallery.shape, gallery.scale) == pytest.approx((card["shape"], card["scale"]), abs=1e-4)
    assert gallery.clusters == card["clusters"] < gallery.exceedances == card["exceedances"]  # declustered
    calibration = ScoreCalibration.from_card({"calibration": {"version": 3, "curve": [
        {"far": 1e-2, "cosine": 0.1}, {"far": 1e-9, "cosine": 0.9}], "tail": card}})
    deep = float(gallery.threshold_at_far(1e-7))
    assert calibration.threshold_at_far(1e-7) == pytest.approx(deep, abs=1e-4)
    assert calibration.far(deep) == pytest.approx(1e-7, rel=0.01)  # the card keeps 4-5 digits


def test_the_empirical_threshold_is_the_smallest_that_keeps_the_rate() -> None:
    scores = np.arange(1000, dtype=np.float64) / 1000  # 0.000 ... 0.999
    threshold = empirical_threshold(scores, 0.01)  # at most 10 of 1,000 at or above it
    assert np.sum(scores >= threshold) == 10
    assert np.sum(scores >= scores[scores < threshold].max()) == 11  # any lower threshold lets 11 pass


def test_the_cutoff_goes_lower_until_a_hundred_pairs_of_people_lie_above_it() -> None:
    """Where the top 0.1% of pairs of faces come from a few pairs of people (many photos each), the cut-off is
    lowered until 100 pairs of people are above it: a fit to 13 peaks would be noise."""
    rng = np.random.default_rng(11)
    peaks = np.sort(rng.uniform(0.5, 0.7, 400))[::-1]
    pairs = _clustered(peaks, np.where(np.arange(400) < 10, 500, 1), 0.4, 800, rng, faces=2)  # 10: 500 each
    share = int(np.ceil(1e-3 * pairs.total()))
    assert len(np.unique(np.minimum(pairs.person_a, pairs.person_b)[:share])) < 100  # the top share: few people
    rank = cutoff_rank(pairs)
    assert rank > share
    above = np.unique(np.minimum(pairs.person_a, pairs.person_b)[:rank])
    assert len(above) == 100  # exactly as low as needed
