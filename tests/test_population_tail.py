"""The gallery's own stranger tail (`facerec.openset.population_tail`) and what the threshold policy does with it: a gallery
whose people look more alike than the model's calibration set gets a higher threshold, and its strangers are then
named about as often as the user accepted; a gallery like the calibration set keeps the card's threshold.

Real faces: celeba112 crops of training identities (one photo per person), embedded by the shipped ONNX model.
"More alike" is made real by degrading every photo the same way (shrunk to 12 px and back): the model then sees
less of what tells people apart, and strangers score higher against everyone, as in a gallery of poor photos.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from PIL import Image

from facerec.datasets.folders import held_out_identities, list_identities
from facerec.faces.embed import FaceEmbedder
from facerec.gallery import Gallery
from facerec.openset.cohort import Cohort, cohort_path, normalised
from facerec.openset.population_tail import MIN_PEOPLE, measure_population_tail
from facerec.settings import Settings
from facerec.words.threshold import threshold_sentence
from facerec.openset.threshold_policy import ThresholdPolicy
from facerec.gallery.composition import parts_of

GALLERY_PEOPLE, STRANGERS = 400, 400
FPIR = 0.1  # 10%: measurable from 400 strangers (40 expected false matches)


def _degraded(crop: np.ndarray) -> np.ndarray:
    small = Image.fromarray(crop).resize((12, 12), Image.BILINEAR)
    return np.asarray(small.resize((112, 112), Image.BILINEAR))


@pytest.fixture(scope="module")
def faces(celeba112):
    """(plain, degraded) unit embeddings [GALLERY_PEOPLE + STRANGERS, 512]: one photo each of as many training
    identities (the first GALLERY_PEOPLE are enrolled, the rest are strangers)."""
    identities = list_identities(celeba112)
    held_out = held_out_identities(identities)
    names = [name for name in sorted(identities) if name not in held_out][: GALLERY_PEOPLE + STRANGERS]
    crops = np.stack([np.asarray(Image.open(identities[name][0]).convert("RGB")) for name in names])
    embedder = FaceEmbedder(Settings().model_path)
    return embedder.embed(crops), embedder.embed(np.stack([_degraded(c) for c in crops]))


def _cohort() -> Cohort:
    settings = Settings()
    return Cohort.load(cohort_path(settings.model_path))


def _stranger_match_rate(embeddings: np.ndarray, threshold: float) -> float:
    """The share of strangers named at `threshold` on the normalised score the policy decides with."""
    gallery, strangers = embeddings[:GALLERY_PEOPLE], embeddings[GALLERY_PEOPLE:]
    cohort = _cohort()
    scores = normalised(strangers @ gallery.T, cohort.statistics(strangers), cohort.statistics(gallery))
    return float(np.mean(scores.max(axis=1) >= threshold))


def _tail(embeddings: np.ndarray):
    """The gallery's own tail of normalised scores, as a gallery measures it."""
    return measure_population_tail(embeddings, np.arange(len(embeddings)),
                                   statistics=_cohort().statistics(embeddings), ceiling=np.inf)


def test_the_tail_fits_the_gallerys_own_pairs(faces) -> None:
    plain = faces[0][:GALLERY_PEOPLE]
    tail = measure_population_tail(plain, np.arange(GALLERY_PEOPLE))
    assert tail.people == GALLERY_PEOPLE and tail.pairs == GALLERY_PEOPLE * (GALLERY_PEOPLE - 1) // 2
    assert len(tail.resampled) >= 150  # resamples of the people, for the interval
    scores = np.sort((plain @ plain.T)[np.triu_indices(GALLERY_PEOPLE, 1)])[::-1]
    for rank in (10, 30, 60):  # inside the fitted tail, the estimate follows the data
        assert tail.far(float(scores[rank])) == pytest.approx((rank + 1) / tail.pairs, rel=0.6)
    rate = tail.far(float(scores[30]))
    assert tail.threshold_at_far(rate) == pytest.approx(float(scores[30]), abs=0.01)
    assert tail.far(tail.threshold - 0.01) == tail.rate and tail.threshold_at_far(0.5) is None
    assert measure_population_tail(plain[: MIN_PEOPLE - 1], np.arange(MIN_PEOPLE - 1)) is None
    two_photos_each = np.repeat(np.arange(MIN_PEOPLE // 2 + 1), 2)[:GALLERY_PEOPLE]  # too few people
    assert measure_population_tail(plain[: len(two_photos_each)], two_photos_each) is None


def test_a_gallery_of_alike_people_gets_a_higher_threshold_that_keeps_the_accepted_rate(faces) -> None:
    policy = ThresholdPolicy.from_card(Settings().model_card(), fpir=FPIR)
    card = policy.for_gallery(GALLERY_PEOPLE, GALLERY_PEOPLE)
    people = np.arange(GALLERY_PEOPLE)
    plain, degraded = faces
    like_calibration = policy.for_gallery(GALLERY_PEOPLE, GALLERY_PEOPLE, population=_tail(plain[:GALLERY_PEOPLE]))
    assert like_calibration.threshold == card.threshold and like_calibration.raised_from is None
    alike = policy.for_gallery(GALLERY_PEOPLE, GALLERY_PEOPLE, population=_tail(degraded[:GALLERY_PEOPLE]))
    assert alike.raised_from == card.threshold and alike.threshold > card.threshold + 0.02
    assert "look more alike" in threshold_sentence(alike) and alike.expected_fpir == pytest.approx(FPIR, rel=0.05)
    assert f"({GALLERY_PEOPLE * (GALLERY_PEOPLE - 1) // 2:,} pairs of its faces" in threshold_sentence(alike)  # a count
    at_card, at_own = _stranger_match_rate(degraded, card.threshold), _stranger_match_rate(degraded, alike.threshold)
    assert at_card > 2 * FPIR  # the card's threshold names far more strangers than accepted ...
    assert at_own < 1.6 * FPIR, (at_card, at_own)  # ... the gallery's own threshold about as many as accepted
    # a pinned threshold stays pinned, but its expected rate is the gallery's own, the less optimistic one
    pinned = policy.for_gallery(GALLERY_PEOPLE, GALLERY_PEOPLE, threshold=card.threshold,
                                population=alike.population)
    assert pinned.threshold == card.threshold and pinned.expected_fpir > 2 * card.expected_fpir


def test_the_gallery_measures_its_tail_and_measures_again_only_when_it_has_grown(faces, tmp_path) -> None:
    degraded = faces[1]
    with Gallery.open(tmp_path / "home") as gallery:
        def enroll(rows) -> None:
            parts_of(gallery).enrollment.add_embeddings([{"name": f"person {i}", "embedding": degraded[i], "photo_sha256": f"p{i}"}
                                    for i in rows])

        enroll(range(MIN_PEOPLE - 1))
        assert gallery.services().thresholds.in_force().population is None  # too few people
        enroll(range(MIN_PEOPLE - 1, GALLERY_PEOPLE))
        rule = gallery.services().thresholds.in_force()
        assert rule.population.people == GALLERY_PEOPLE and rule.raised_from is not None
        assert gallery.services().thresholds.for_verification().population is rule.population
        enroll(range(GALLERY_PEOPLE, GALLERY_PEOPLE + 10))  # 2.5% more: the same measurement
        assert gallery.services().thresholds.in_force().population is rule.population
        enroll(range(GALLERY_PEOPLE + 10, GALLERY_PEOPLE + 60))  # 15% more: measured again, beside the request
        assert gallery.services().thresholds.in_force().population is rule.population  # answered at once with the last tail
        grown = measured_beside(gallery, rule.population)
        assert grown is not rule.population and grown.people == GALLERY_PEOPLE + 60
        # 40 people replaced by 40 others: the same count, other faces, so measured again (#28 point 2: the
        # face count alone kept the old tail; the journal moved by 80 entries, over 10% of 460 faces).
        for i in range(40):
            gallery.delete(f"person {i}")
        enroll(range(GALLERY_PEOPLE + 60, GALLERY_PEOPLE + 100))
        replaced = measured_beside(gallery, grown)
        assert replaced is not grown and replaced.people == grown.people


def measured_beside(gallery: Gallery, last, timeout: float = 120.0):
    """The gallery's own tail once the measurement started beside a request has replaced `last` (the request
    itself answered with `last`): asked again until it has, as any later request would see it."""
    deadline = time.monotonic() + timeout
    while (tail := gallery.services().thresholds.in_force().population) is last:
        assert time.monotonic() < deadline, "the gallery's tail was not measured again"
        time.sleep(0.05)
    return tail
