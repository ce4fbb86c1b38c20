"""Enrollment quality (`facerec.faces.quality`) on real photos with the shipped model and its shipped calibration: the
features move the way they should, a poor photo is refused with its reasons unless allowed (Gallery and CLI), a
good one passes, and the calibration belongs to the model it ships with."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from facerec.faces.align import ARCFACE_TEMPLATE, align_face
from facerec.errors import LowQuality
from facerec.gallery import Gallery
from facerec.faces.quality.calibration import fit, one_shot_outcomes
from facerec.faces.quality.features import binomial_blur, eye_distance, sharpness, stability, yaw_ratio
from facerec.faces.quality.score import QualityModel
from facerec.settings import Settings
from facerec.gallery.composition import parts_of
from poor_photos import poor_photo

# Shipped public-domain portraits (tests/faces): Obama's photo 3, framed as an LFW photo is (`good`), and his photo 1
GOOD, OTHER_GOOD = ("Barack_Obama", 3), ("Barack_Obama", 1)


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    opened = Gallery.open(tmp_path_factory.mktemp("quality_home"))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def good(portrait_square) -> Path:
    """GOOD framed as LFW frames a face, so that `poor_photo` shrinks the face as it shrinks an LFW one."""
    return portrait_square(*GOOD)


@pytest.fixture(scope="module")
def good_crop(gallery, good):
    photo, faces = gallery.services().photos.detect(good)
    return align_face(photo.pixels, faces[0].landmarks), faces[0]


def test_the_shipped_calibration_is_for_the_shipped_model() -> None:
    settings = Settings()
    data = json.loads(settings.quality_calibration_path.read_text())
    assert data["model_sha256"] == hashlib.sha256(settings.model_path.read_bytes()).hexdigest()
    model = QualityModel.load(settings.quality_calibration_path)
    assert 0.3 < model.low_score < 0.9 and model.source["identities"] == 150


def test_features_move_the_way_they_should(gallery, good_crop) -> None:
    crop, face = good_crop
    assert sharpness(binomial_blur(binomial_blur(crop))) < sharpness(crop) - 0.3
    assert yaw_ratio(ARCFACE_TEMPLATE) < 0.01
    turned = ARCFACE_TEMPLATE.copy()
    turned[2, 0] = ARCFACE_TEMPLATE[1, 0]  # the nose in line with an eye: a profile
    assert yaw_ratio(turned) == pytest.approx(1.0, abs=0.02)
    assert eye_distance(face.landmarks) == pytest.approx(np.linalg.norm(face.landmarks[1] - face.landmarks[0]))
    # Heavy noise (a dark photo's sensor noise) makes the network read the face unreliably; blur does not (a
    # blurred face changes little under more blur): that is what the sharpness feature is for.
    embedder = parts_of(gallery).pipeline.embedder
    noisy = np.clip(crop + np.random.default_rng(0).normal(0, 25, crop.shape), 0, 255).astype(np.uint8)
    assert stability(embedder, noisy) < stability(embedder, crop) - 0.03
    assert 0.9 < stability(embedder, crop) <= 1.0


def test_the_fit_recovers_a_known_logistic_rule() -> None:
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(4000, 4))
    truth = np.array([1.0, -0.5, 0.0, 2.0])
    trials = np.full(4000, 20)
    successes = rng.binomial(trials, 1 / (1 + np.exp(-(rows @ truth + 0.3))))
    means, scales, coefficients, intercept = fit(rows, successes.astype(float), trials.astype(float))
    np.testing.assert_allclose(coefficients / scales, truth, atol=0.06)
    assert intercept - np.sum(coefficients * means / scales) == pytest.approx(0.3, abs=0.06)


def test_one_shot_outcomes_count_rank_one_and_the_threshold() -> None:
    enrolled = np.eye(3)[:2]  # person 0 along x, person 1 along y
    queries = np.array([[0.9, 0.1, 0.0], [0.4, 0.6, 0.0], [0.1, 0.0, 0.99]])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    successes, trials = one_shot_outcomes(enrolled, np.array([0, 1]), enrolled, np.array([0, 1]), queries,
                                          np.array([0, 0, 1]), threshold=-1.0)
    assert successes.tolist() == [1, 0] and trials.tolist() == [2, 1]
    strict, _ = one_shot_outcomes(enrolled, np.array([0, 1]), enrolled, np.array([0, 1]), queries,
                                  np.array([0, 0, 1]), threshold=0.995)
    assert strict.tolist() == [0, 0]


def test_a_poor_photo_is_refused_with_its_reasons_unless_allowed(gallery, good, portrait) -> None:
    poor = poor_photo(good)
    counts = parts_of(gallery).store.counts()
    with pytest.raises(LowQuality) as refused:
        gallery.enroll(poor, "Poor Photo")
    assert "blurred" in str(refused.value) and refused.value.quality.low
    assert "\n" not in str(refused.value)
    assert parts_of(gallery).store.counts() == counts  # nothing stored
    result = gallery.enroll(poor, "Poor Photo", allow_low_quality=True)
    assert result.quality.low and result.to_dict()["quality"]["reasons"]
    good = gallery.enroll(good, "Barack Obama", allow_lookalike=True)
    assert not good.quality.low and good.quality.score > result.quality.score + 0.2
    assert gallery.services().photos.enrollment_quality(portrait(*OTHER_GOOD)).low is False


def test_a_poor_photo_added_to_a_person_is_refused_like_a_first_photo(tmp_path, good, portrait) -> None:
    """add-photo measured the quality and stored the photo anyway (#29 row 8)."""
    poor = tmp_path / "distant.jpg"
    poor.write_bytes(poor_photo(good))
    with Gallery.open(tmp_path / "home") as gallery:
        gallery.enroll(portrait(*OTHER_GOOD), "Barack Obama")
        counts = parts_of(gallery).store.counts()
        with pytest.raises(LowQuality) as refused:
            gallery.add_photo("Barack Obama", poor)
        assert "blurred" in str(refused.value) and parts_of(gallery).store.counts() == counts
    cli = subprocess.run([sys.executable, "-m", "facerec.cli", "add-photo", "Barack Obama", str(poor), "--home",
                          str(tmp_path / "home")], capture_output=True, text=True, timeout=300)
    assert cli.returncode != 0 and "--allow-low-quality" in cli.stderr and "Traceback" not in cli.stderr
    with Gallery.open(tmp_path / "home") as gallery:
        added = gallery.add_photo("Barack Obama", poor, allow_low_quality=True, allow_mismatch=True)
        assert added.photos == 2 and added.quality.low


def test_quality_from_a_detection_already_made_equals_a_fresh_one(gallery, good, portrait) -> None:
    # The Enroll tab hands over the faces it has just drawn instead of detecting twice: same face, same figures.
    photo, faces = gallery.services().photos.detect(poor_photo(good))
    fresh = gallery.services().photos.enrollment_quality(poor_photo(good))
    reused = gallery.services().photos.enrollment_quality(photo, 0, faces)
    assert reused.to_dict() == fresh.to_dict() and reused.low


def test_the_cli_warns_and_proceeds_only_when_told(tmp_path, good, portrait) -> None:
    poor = tmp_path / "distant.jpg"
    poor.write_bytes(poor_photo(good))
    home = tmp_path / "home"

    def facerec(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)],
                              capture_output=True, text=True, timeout=300)

    checked = facerec("quality", str(poor))
    # low, and blur among the reasons it names (with model v8 the blurred face's embedding is also unstable)
    assert checked.returncode == 0 and "blurred" in checked.stdout.partition("low: ")[2]
    refused = facerec("enroll", str(poor), "--name", "Barack Obama")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "poor enrollment photo" in refused.stderr and "--allow-low-quality" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    listed = facerec("list", "--json")
    assert json.loads(listed.stdout) == []
    done = facerec("enroll", str(poor), "--name", "Barack Obama", "--allow-low-quality", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["quality"]["low"] is True


def test_real_blur_exposure_and_a_grainy_portrait_are_judged_as_recognition_says(gallery, portrait) -> None:
    """#64 row 2: a radius-5 Gaussian-blurred photo was rated "0.84 good" without a word, and the sharp US Navy
    portrait of Grace Hopper refused as "poor (unstable)" 0.62 (its film grain moves the embedding under blur, not
    under a shift or a mirror). Now calibrated on heavy blur, grey and badly exposed photos too, with the two kinds
    of stability apart. The cases, on the committed public-domain portraits: Gaussian blur of radius 3, 5 and 8 px
    on Barack Obama's (a face ~130 px wide), under- and over-exposure (gamma 2.8 and 0.35), Grace Hopper's."""
    from PIL import Image, ImageFilter

    photos = gallery.services().photos

    def quality(picture: Image.Image):
        return photos.enrollment_quality(np.asarray(picture.convert("RGB")))

    obama = Image.open(portrait("Barack_Obama", 1))
    sharp = quality(obama)
    assert not sharp.low and sharp.caveats == [], sharp.to_dict()
    blurred = {radius: quality(obama.filter(ImageFilter.GaussianBlur(radius))) for radius in (3, 5, 8)}
    assert sharp.score > blurred[3].score > blurred[5].score > blurred[8].score
    assert not blurred[5].low and blurred[5].caveats == ["blurred"], blurred[5].to_dict()  # said, still accepted
    assert blurred[5].sentence().endswith(": good, though blurred.")
    assert blurred[8].low and "blurred" in blurred[8].reasons, blurred[8].to_dict()
    for gamma in (2.8, 0.35):
        exposed = quality(obama.point(lambda value, gamma=gamma: round(255 * (value / 255) ** gamma)))
        assert not exposed.low, (gamma, exposed.to_dict())
    hopper = quality(Image.open(portrait("Grace_Hopper", 1)))
    assert not hopper.low, hopper.to_dict()
