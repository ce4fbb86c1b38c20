"""The threshold policy (issue #13): one rule, set by the accepted stranger-match rate, for identify, verify, the
enrollment look-alike check, the CLI, the JSON and the eval; and the calibration behind it.

Real faces (LFW photos for the gallery, held-out celeba112 crops for calibration), the shipped ONNX model, real
SQLite and FAISS. Galleries are made large cheaply by bulk-adding face-like vectors (`tests/face_like.py`: drawn
like the shipped cohort's real faces) as extra enrolled faces of made-up strangers: they change the gallery's
size, which is what the policy reads, and look to the normalised score like any stranger's face.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from facerec.openset.calibrate import FAR_LEVELS, legacy_fields
from facerec.openset.cohort import Cohort
from facerec.errors import InvalidArgument, PossibleDuplicate
from facerec.gallery import Gallery
from facerec.words.phrasing import score_text
from facerec.settings import Settings
from facerec.words.threshold import threshold_notes, threshold_sentence
from facerec.openset.pareto import fit_generalized_pareto, pareto_quantile, pareto_survival
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdPolicy
from facerec.gallery.composition import parts_of
from face_like import face_like

PERSON = "Abdullah_Gul"  # photo 1 enrolled; photo 2 is the probe (same person, similarity ~0.76, score ~7)
STRANGER = "Andy_Rooney"  # a one-photo LFW person, never enrolled


def shipped_card() -> dict:
    return Settings().model_card()


def pad(gallery: Gallery, count: int, seed: int) -> None:
    """Add `count` face-like vectors as enrolled faces of made-up people (see the module docstring)."""
    vectors = face_like(count, seed)
    parts_of(gallery).enrollment.add_embeddings([{"name": f"padding {seed}-{i}", "embedding": v, "photo_sha256": f"pad-{seed}-{i}"}
                            for i, v in enumerate(vectors)])


def facerec(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args], capture_output=True, text=True, timeout=600)


def facerec_train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.train.cli", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    with Gallery(Settings.from_env(home=tmp_path_factory.mktemp("loader"))) as loader:
        return parts_of(loader).pipeline


@pytest.fixture
def gallery_with_person(tmp_path, pipeline, lfw_photo):
    """A gallery holding photo 1 of PERSON; yields (gallery, probe photo, its normalised score against the
    enrolled face: what every decision compares)."""
    gallery = Gallery(Settings.from_env(home=tmp_path / "home"), pipeline=pipeline)
    gallery.enroll(lfw_photo(PERSON, 1), "Enrolled Person")
    probe = lfw_photo(PERSON, 2)
    (match,) = gallery.identify(probe)
    yield gallery, probe, match.candidates[0].score
    gallery.close()


# ----- the rule -------------------------------------------------------------------------------------------
def test_threshold_rises_with_gallery_size_and_keeps_the_expected_fpir_at_the_target() -> None:
    policy = ThresholdPolicy.from_card(shipped_card())
    rules = [policy.for_gallery(n) for n in (1, 10, 100, 1000, 4848, 100_000)]
    thresholds = [r.threshold for r in rules]
    assert thresholds == sorted(thresholds) and len(set(thresholds)) == len(thresholds)
    for rule in rules:
        assert rule.target_fpir == 0.01 and not rule.pinned
        assert rule.expected_fpir == pytest.approx(0.01, rel=1e-3)
        assert rule.far == pytest.approx(1 - 0.99 ** (1 / rule.comparisons), rel=1e-3)
    # A stricter accepted rate means a higher threshold at every size.
    assert all(policy.for_gallery(r.comparisons, fpir=0.001).threshold > r.threshold for r in rules)
    # The true-match rate (from the calibration's genuine pairs) falls as the threshold rises.
    rates = [r.true_match_rate for r in rules]
    assert all(rate is not None for rate in rates) and rates == sorted(rates, reverse=True)


def test_verification_is_one_comparison_and_a_pinned_threshold_overrides_the_rate() -> None:
    policy = ThresholdPolicy.from_card(shipped_card(), fpir=0.02)
    verification = policy.for_verification()
    assert verification.threshold == policy.for_gallery(1).threshold and verification.comparisons == 1
    assert verification.expected_fpir == pytest.approx(verification.far) == pytest.approx(0.02, rel=1e-3)
    assert "compared once" in threshold_sentence(verification)

    pinned = ThresholdPolicy.from_card(shipped_card(), pinned_threshold=5.5)
    small, large = pinned.for_gallery(10), pinned.for_gallery(10_000)
    assert small.threshold == large.threshold == 5.5 and small.pinned and small.target_fpir is None
    assert small.expected_fpir < large.expected_fpir  # same threshold, more chances for a stranger
    assert not pinned.for_gallery(10, fpir=0.05).pinned  # a rate given for one decision overrides the pin
    beyond = ThresholdPolicy.from_card(shipped_card(), pinned_threshold=12.0).for_gallery(10)
    assert "fewer than 1 in 1,000,000,000 people" in threshold_sentence(beyond)  # not the 1e-15 floor as a figure
    assert "1,000,000,000,000" not in threshold_sentence(beyond)
    with pytest.raises(InvalidArgument):
        ThresholdPolicy.from_card(shipped_card(), fpir=1.5)


def test_an_old_cosine_pin_is_refused_not_reread_as_a_score() -> None:
    """The model decides on normalised scores: a pin between -1 and 1 is a raw cosine from before them, and is
    refused in one line that says what the scale is, at start and for one decision alike."""
    with pytest.raises(InvalidArgument, match="looks like a raw cosine") as caught:
        ThresholdPolicy.from_card(shipped_card(), pinned_threshold=0.72)
    assert "\n" not in str(caught.value) and "normalised score" in str(caught.value)
    with pytest.raises(InvalidArgument, match="looks like a raw cosine"):
        ThresholdPolicy.from_card(shipped_card()).for_gallery(10, threshold=0.72)
    raw_card = {k: v for k, v in shipped_card().items() if k != "calibration"}
    raw_card["calibration"] = shipped_card()["calibration_cosine"]  # a card calibrated on cosines takes cosines
    assert ThresholdPolicy.from_card(raw_card, pinned_threshold=0.72).for_gallery(10).threshold == 0.72


def test_shipped_card_is_calibrated_for_the_shipped_model_down_to_1e_9() -> None:
    card = shipped_card()
    calibration = card["calibration"]
    assert calibration["version"] >= 4 and calibration["identities"] == 150 and not calibration["partial"]
    assert calibration["model_sha256"] == card["sha256"] and calibration["score"] == "as-norm"
    assert calibration["cohort_sha256"] == card["cohort"]["sha256"]  # calibrated on the cohort that ships
    for calibration, key in ((card["calibration"], "score"), (card["calibration_cosine"], "cosine")):
        curve = calibration["curve"]
        assert min(r["far"] for r in curve) <= 1e-9 and any(r["from"] == "tail" for r in curve)
        assert [r[key] for r in curve] == sorted(r[key] for r in curve)  # rarer false accepts, higher t
        for row in curve:
            low, high = row["far_interval"]
            assert low <= high and row[f"{key}_interval"][0] <= row[f"{key}_interval"][1]
    assert ScoreCalibration.from_card(card, card["sha256"]).warning is None
    assert ScoreCalibration.from_card(card, "another model").warning  # a calibration for another file warns
    # The older fields stay for old readers, and still mean cosines (from the cosine calibration).
    assert card["thresholds"] == legacy_fields(card["calibration_cosine"])["thresholds"]
    assert card["thresholds"]["far_1e-2"]["cosine"] < card["thresholds"]["far_1e-3"]["cosine"]


def test_cards_without_the_new_calibration_fall_back_with_a_warning() -> None:
    card = shipped_card()
    legacy = {k: v for k, v in card.items() if k != "calibration"}
    legacy["far_curve"] = [[0.6135, 1e-3], [0.7026, 1e-4], [0.7788, 1e-5], [0.4984, 1e-2]]
    policy = ThresholdPolicy.from_card(legacy)
    assert "no tail calibration" in policy.calibration.warning
    rules = [policy.for_gallery(n) for n in (1, 100, 10_000)]
    assert rules[0].threshold == pytest.approx(0.4984, abs=1e-4)  # 1% per comparison, on the curve
    assert rules[0].threshold < rules[1].threshold < rules[2].threshold
    assert rules[2].extrapolated_far is not None and "extrapolated" in threshold_notes(rules[2])[0]  # FAR 1e-6 lies beyond the old curve
    assert "Warning" in threshold_sentence(rules[2])

    bare = ThresholdPolicy.from_card({"thresholds": {"far_1e-3": {"cosine": 0.6}}})
    rule = bare.for_gallery(1000)
    assert rule.threshold == 0.6 and rule.expected_fpir is None and rule.pinned
    assert "cannot be estimated" in bare.calibration.warning
    assert ThresholdPolicy.from_card({}).for_gallery(5).threshold == 0.5


def test_generalized_pareto_fit_recovers_known_tails() -> None:
    rng = np.random.default_rng(7)
    for shape, scale in ((-0.3, 0.04), (0.0, 0.03), (0.2, 0.05)):
        excess = pareto_quantile(rng.random(20_000), shape, scale)
        fitted_shape, fitted_scale = fit_generalized_pareto(excess)
        assert fitted_shape == pytest.approx(shape, abs=0.03) and fitted_scale == pytest.approx(scale, rel=0.05)
        assert pareto_survival(pareto_quantile(1e-4, shape, scale), shape, scale) == pytest.approx(1e-4)


# ----- one rule everywhere --------------------------------------------------------------------------------
def test_gallery_threshold_follows_its_size(gallery_with_person) -> None:
    gallery, _probe, _similarity = gallery_with_person
    seen = []
    for added, seed in ((0, 0), (99, 1), (900, 2), (9000, 3)):
        if added:
            pad(gallery, added, seed)
        rule = gallery.services().thresholds.in_force(with_people=True)
        assert rule.comparisons == len(parts_of(gallery).index) == parts_of(gallery).store.counts()[1] == rule.people
        assert rule.threshold == gallery.services().thresholds.in_force().threshold == parts_of(gallery).policy.for_gallery(rule.comparisons).threshold
        assert rule.expected_fpir == pytest.approx(0.01, rel=1e-3)
        seen.append(rule.threshold)
    assert seen == sorted(seen) and len(set(seen)) == 4
    stats = gallery.services().maintenance.stats()
    assert stats["threshold"] == seen[-1] and stats["threshold_policy"]["comparisons"] == 10_000
    health = gallery.health().to_dict()
    assert health["score_threshold"] == round(seen[-1], 4) and health["threshold_policy"]["threshold"] == round(seen[-1], 4)
    assert 0 < health["threshold"] < 1  # Health reads cosines: the threshold as two typical faces' cosine
    growth = health["policy_growth"]
    assert [g["threshold"] for g in growth] == sorted(g["threshold"] for g in growth) and growth[-1]["faces"] == 10**6


def test_identify_and_the_lookalike_check_decide_alike_at_every_size(gallery_with_person, tmp_path) -> None:
    """Enrolling the probe under a new name is refused exactly when identify would give it the enrolled name,
    at the default policy for a small and a large gallery and at pinned thresholds on both sides of its score."""
    gallery, probe, similarity = gallery_with_person
    home, pipeline = gallery.services().settings.home, parts_of(gallery).pipeline
    outcomes = set()
    for padding, overrides in ((0, {}), (0, {"similarity_threshold": similarity - 0.5}),
                               (0, {"similarity_threshold": similarity + 0.5}), (20_000, {})):
        if padding:
            pad(gallery, padding, 5)
        with Gallery(Settings.from_env(home=home, **overrides), pipeline=pipeline) as view:
            rule = view.services().thresholds.in_force(with_people=True)  # identify words its rule with the people
            (match,) = view.identify(probe)
            assert match.score_threshold == rule.threshold and match.rule == rule
            data = match.to_dict()
            assert data["score_threshold"] == round(rule.threshold, 4) and data["expected_fpir"] is not None
            # the cosine this pair had to reach: the similarity reaches it exactly when the face is named
            assert (data["similarity"] >= data["threshold"]) == (match.name is not None)
            assert data["threshold_policy"]["comparisons"] == len(parts_of(view).index)
            identified = match.name == "Enrolled Person"
            assert identified == (similarity >= rule.threshold)
            try:
                view.enroll(probe, "Somebody New")
                refused = False
                view.delete("Somebody New")
            except PossibleDuplicate as error:
                refused = True
                assert score_text(rule.threshold) in str(error)  # the one format for thresholds
            assert refused == identified
            outcomes.add(identified)
    assert outcomes == {True, False}
    # The 20,001-face gallery's threshold is the policy's (or higher, where its own stranger tail raised it),
    # higher than the one-face gallery's.
    rule = gallery.services().thresholds.in_force()
    card = rule.raised_from if rule.raised_from is not None else rule.threshold
    assert card == parts_of(gallery).policy.for_gallery(20_001).threshold > parts_of(gallery).policy.for_gallery(1).threshold


def test_verify_uses_the_one_comparison_rule(gallery_with_person, lfw_photo) -> None:
    gallery, probe, similarity = gallery_with_person
    pad(gallery, 5000, 9)  # a large gallery changes nothing for verification: it compares two photos once
    result = gallery.verify(lfw_photo(PERSON, 1), probe)
    rule = parts_of(gallery).policy.for_verification()
    assert result.score_threshold == rule.threshold == parts_of(gallery).policy.for_gallery(1).threshold < gallery.services().thresholds.in_force().threshold
    assert result.same_person == (result.score >= rule.threshold) == (result.similarity >= result.threshold)
    assert result.score == pytest.approx(similarity, abs=1e-3)
    data = result.to_dict()
    assert data["expected_fpir"] == pytest.approx(rule.far, rel=1e-3)
    assert data["threshold_policy"]["verification"] is True and "sentence" not in data["threshold_policy"]  # numbers
    assert "compared once" in threshold_sentence(result.rule)  # the interfaces put them in words
    pinned = gallery.verify(lfw_photo(PERSON, 1), probe, threshold=12.0)
    assert pinned.score_threshold == 12.0 and not pinned.same_person and pinned.rule.pinned


def test_cli_reports_and_uses_the_same_rule(gallery_with_person, lfw_photo) -> None:
    gallery, probe, similarity = gallery_with_person
    pad(gallery, 2000, 11)
    home = str(gallery.services().settings.home)
    expected = gallery.services().thresholds.in_force()  # the CLI runs as another process on the same gallery folder

    found = facerec("identify", str(probe), "--json", "--home", home)
    assert found.returncode == 0, found.stderr
    (face,) = json.loads(found.stdout)
    assert face["score_threshold"] == round(expected.threshold, 4)
    assert face["expected_fpir"] == pytest.approx(0.01, rel=1e-2)
    assert face["threshold_policy"]["comparisons"] == 2001 and face["threshold_policy"]["target_fpir"] == 0.01

    loose = facerec("identify", str(probe), "--json", "--fpir", "0.2", "--home", home)
    (loose_face,) = json.loads(loose.stdout)
    assert loose_face["score_threshold"] == round(parts_of(gallery).policy.for_gallery(2001, fpir=0.2).threshold, 4)
    assert loose_face["score_threshold"] < face["score_threshold"]

    pinned = facerec("verify", str(lfw_photo(PERSON, 1)), str(probe), "--threshold", "3", "--home", home)
    assert pinned.returncode == 0, pinned.stderr
    said = " ".join(pinned.stdout.split())  # as read: a terminal's width may break its lines
    assert "same person" in said and "pinned at 3.00" in said
    cosine = facerec("verify", str(lfw_photo(PERSON, 1)), str(probe), "--threshold", "0.3", "--home", home)
    assert cosine.returncode != 0 and "looks like a raw cosine" in cosine.stderr  # never silently reread


# ----- calibration and evaluation commands ------------------------------------------------------------------
def test_calibrate_command_writes_the_card(data_dir, tmp_path) -> None:
    card_path = tmp_path / "model.json"
    card_path.write_text(json.dumps({"name": "copy", "sha256": "kept as it was"}))
    result = facerec_train("calibrate", "--data", str(data_dir), "--identities", "8", "--resamples", "20",
                           "--cohort-size", "400", "--card", str(card_path), "--json", str(tmp_path / "calibration.json"))
    assert result.returncode == 0, result.stderr
    card = json.loads(card_path.read_text())
    calibration = card["calibration"]
    assert card["sha256"] == "kept as it was"
    # the score cohort is made first, beside the card, and the calibration is of the scores it normalises
    cohort = Cohort.load(tmp_path / "model.cohort.npz", card["cohort"]["sha256"])
    assert len(cohort.embeddings) == card["cohort"]["faces"] == 400 and calibration["score"] == "as-norm"
    assert calibration["cohort_sha256"] == cohort.sha256 and card["calibration_cosine"]["score"] == "cosine"
    assert calibration == json.loads((tmp_path / "calibration.json").read_text())
    assert calibration["identities"] == 8 and calibration["partial"] is True
    assert calibration["model_sha256"] == Settings().model_card()["sha256"]
    assert [r["far"] for r in calibration["curve"]] == pytest.approx(list(FAR_LEVELS), rel=1e-3)
    assert calibration["bootstrap"]["resamples"] == 20 and calibration["tail"]["exceedances"] >= 90
    assert 10 <= calibration["bootstrap"]["fitted"] <= 20  # resamples of very few distinct people are skipped
    assert set(card["thresholds"]) == {f"far_1e-{e}" for e in range(2, 8)}
    assert "only 8 identities" in ScoreCalibration.from_card(card).warning
    assert "calibrated" in result.stdout and "1e-7" in result.stdout  # one format for rates (facerec.words.phrasing)


def test_eval_open_set_reports_fpir_and_dir_at_the_policy_per_gallery_size(lfw, tmp_path) -> None:
    two_photo = ["Abdullah_Gul", "Adam_Sandler", "Alan_Ball", "Alec_Baldwin", "Ali_Naimi", "Alejandro_Toledo",
                 "Art_Hoffmann", "Biljana_Plavsic"]
    one_photo = ["Aaron_Eckhart", "Andy_Griggs", "Andy_Rooney", "Andy_Warhol", "Antonio_Trillanes"]
    dataset = tmp_path / "dataset"
    for person in two_photo + one_photo:
        (dataset / person).mkdir(parents=True)
        photos = sorted((lfw / person).iterdir())
        for photo in photos[: 2 if person in two_photo else 1]:
            (dataset / person / photo.name).symlink_to(photo)
    out = tmp_path / "eval.json"
    result = facerec("eval", str(dataset), "--max-per-identity", "2", "--distractors", "--open-set",
                     "--gallery-sizes", "4,all", "--json", str(out), "--home", str(tmp_path / "home"))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    people = len(two_photo) + len(one_photo)
    assert figures["threshold_policy"]["comparisons"] == people
    sizes = figures["open_set"]["sizes"]
    assert [s["gallery_people"] for s in sizes] == [4, people]
    assert sizes[0]["threshold"] < sizes[1]["threshold"] == round(figures["gallery_threshold"], 4)
    for row in sizes:
        assert row["non_mated_searches"] > 0 and row["mated_searches"] > 0
        assert 0.0 <= row["fpir"] <= 1.0 and 0.0 <= row["dir"] <= 1.0
        assert row["fpir_interval"][0] <= row["fpir"] <= row["fpir_interval"][1]
        assert row["expected_fpir"] == pytest.approx(0.01, rel=1e-2)
    full = sizes[1]
    assert full["non_mated_searches"] == people + len(two_photo)  # every photo, each person left out in turn
    assert full["mated_searches"] == len(two_photo)
    assert "dir_at_fpir_0.01" in figures["open_set"]
    assert "| gallery people | threshold | expected FPIR |" in result.stdout
