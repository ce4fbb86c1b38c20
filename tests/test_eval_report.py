"""The evaluation report tells the truth about itself (issue #15, point 8), on real LFW photos and the shipped model.

- A perfect score: the CMC axis ends at 1 (no 0.96-1.04 band) and the DET panel still draws its curve; ROC and
  DET mark the operating point at the gallery's threshold.
- Open set from a handful of people: DIR "at FPIR 1%" from 12 non-mated searches says it is not at 1%.
- `n_gallery` is the people enrolled; open-set rows say how many were held out of each gallery.
- People the model was trained on (LFW people with >= 3 photos) are counted and warned about, by `facerec eval`
  and in the summary; people it never saw (LFW's 2-photo people) are not. The model card's list of training
  identities is exactly what the protocol's rule gives on the data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from facerec.datasets import training_identities
from facerec.datasets.folders import training_identity_keys
from facerec.evaluation.oneshot import evaluate_one_shot
from facerec.evaluation.report import cmc_figure, roc_det_figure, write_one_shot_report
from facerec.words.phrasing import rate_text
from facerec.settings import Settings

TRAINED = ["Abdullah_Gul", "Adam_Sandler", "Alec_Baldwin", "Ali_Naimi", "Alejandro_Toledo"]  # >= 3 LFW photos
NEVER_SEEN = ["Aaron_Sorkin", "Adam_Scott", "Adrian_McPherson", "Adrian_Nastase", "Ahmad_Masood", "Al_Davis"]


def dataset(lfw: Path, people: list[str], folder: Path) -> Path:
    """A folder-per-identity dataset of the first two photos of each person (symlinks, nothing copied)."""
    for person in people:
        (folder / person).mkdir(parents=True)
        for photo in sorted((lfw / person).iterdir())[:2]:
            (folder / person / photo.name).symlink_to(photo)
    return folder


@pytest.fixture(scope="module")
def trained_result(lfw, tmp_path_factory):
    """One-shot + open set on 5 training people and 1 never seen: a perfect score from 12 photos."""
    data = dataset(lfw, TRAINED + ["Alan_Ball"], tmp_path_factory.mktemp("trained") / "data")
    return evaluate_one_shot(data, Settings(), max_per_identity=None, open_set=True, gallery_sizes="all")


def test_a_perfect_score_draws_honest_axes_and_marks_the_operating_point(trained_result, tmp_path):
    assert trained_result.figures["rank1"] == 1.0 and np.all(trained_result.cmc == 1.0)
    bottom, top = cmc_figure(trained_result.cmc).axes[0].get_ylim()
    assert top == 1.0 and 0.0 <= bottom <= 0.9  # not a 0.96-1.04 band around the line
    assert cmc_figure(np.array([0.5, 0.7, 0.8])).axes[0].get_ylim() == (0.45, 1.0)

    genuine, impostor = trained_result.genuine, trained_result.impostor
    assert genuine.min() > impostor.max()  # perfectly separated: every FAR or FRR is 0 somewhere
    # The mark states the measured FAR and TAR at the threshold: '0 of N' where no impostor reaches it (a
    # threshold between the two classes), the rate otherwise (the gallery's own threshold for 6 people may let
    # an impostor pair through: with model v5 it is 0.545 and one of the 30 pairs is above it).
    gallery_threshold = trained_result.figures["gallery_threshold"]
    separating = (genuine.min() + impostor.max()) / 2
    gallery_far = float(np.mean(impostor >= gallery_threshold))
    for label, threshold, far_text in (
            ("gallery threshold", gallery_threshold, f"0 of {len(impostor):,}" if gallery_far == 0 else
             rate_text(gallery_far)),
            ("separating threshold", separating, f"0 of {len(impostor):,}")):
        roc, det = roc_det_figure(genuine, impostor, threshold, label).axes
        curve = det.get_lines()[0]
        x, y = np.asarray(curve.get_xdata()), np.asarray(curve.get_ydata())
        assert len(x) >= 2 and np.all(x > 0) and np.all(y > 0)  # the DET curve is drawn, zeros at the floor
        for axis in (roc, det):
            marks = [line for line in axis.get_lines() if line.get_label().startswith(label)]
            assert len(marks) == 1 and marks[0].get_marker() == "o", [line.get_label() for line in axis.get_lines()]
            assert f"{label} {threshold:.3f}: FAR {far_text}, TAR 1.000" == marks[0].get_label()
        assert roc.get_lines()[-1].get_ydata()[0] == 1.0

    out = write_one_shot_report(trained_result, tmp_path / "report", "facerec eval ...")
    assert all((out / name).stat().st_size > 0 for name in ("cmc.png", "roc_det.png", "similarities.png"))


def test_open_set_figures_from_too_few_searches_say_so(trained_result):
    figures = trained_result.figures
    assert figures["n_gallery"] == figures["n_identities"] + figures["n_distractors"] == 6
    (row,) = figures["open_set"]["sizes"]
    assert row["gallery_people"] == 6 and row["held_out_people"] == 1 and row["non_mated_gallery_people"] == 5
    assert row["non_mated_searches"] == 12
    assert row["warning"].startswith("only 12 non-mated searches: an FPIR of 1% needs at least 1,000")
    at_1 = figures["open_set"]["dir_at_fpir_0.01"]
    assert at_1["non_mated_searches"] == 12 and "so this figure is not at 1%" in at_1["warning"]
    assert "an FPIR of 10% needs at least 100" in figures["open_set"]["dir_at_fpir_0.1"]["warning"]


def test_training_people_are_counted_and_warned_about(trained_result, lfw, tmp_path):
    overlap = trained_result.figures["training_overlap"]
    assert overlap["known"] and overlap["people"] == 5 and overlap["evaluated_people"] == 6
    assert overlap["examples"] == sorted(TRAINED)  # in the name order of the dataset
    assert overlap["warning"].startswith("5 of the 6 evaluated people are identities the model was trained on")

    out = tmp_path / "eval.json"
    report = tmp_path / "report"
    result = subprocess.run([sys.executable, "-m", "facerec.cli", "eval", str(dataset(lfw, NEVER_SEEN,
                                                                                      tmp_path / "new")),
                             "--json", str(out), "--report", str(report), "--home", str(tmp_path / "home")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["training_overlap"]["people"] == 0 and figures["training_overlap"]["warning"] is None
    assert "warning:" not in result.stderr and "**Warning:**" not in (report / "summary.md").read_text()

    trained = subprocess.run([sys.executable, "-m", "facerec.cli", "eval", str(dataset(lfw, TRAINED,
                                                                                       tmp_path / "seen")),
                              "--report", str(report), "--home", str(tmp_path / "home2")],
                             capture_output=True, text=True, timeout=300)
    assert trained.returncode == 0, trained.stderr
    assert "warning: 5 of the 5 evaluated people are identities the model was trained on" in trained.stderr
    assert "**Warning:** 5 of the 5 evaluated people" in (report / "summary.md").read_text()


def test_the_model_card_lists_exactly_the_protocols_training_identities(data_dir):
    card = Settings().model_card()
    keys = training_identities.decode(card["training_identities"])
    assert len(keys) == card["training_identities"]["count"] == card["training"]["data"]["training_identities"]
    assert keys == set(training_identity_keys(data_dir / "celeba112", data_dir / "lfw"))
    assert "lfw/George_W_Bush" in keys and "lfw/Alan_Ball" not in keys  # 530 photos vs the 2 of a test person
    assert len(card["training_identities"]["keys"]) < 40_000  # compact: the card stays a small text file


def test_a_report_without_confusions_says_so_under_its_heading(trained_result, tmp_path):
    """A perfect score printed the confusions' heading over an empty table (#31 item 6)."""
    assert trained_result.figures["rank1"] == 1.0 and not trained_result.confusions
    write_one_shot_report(trained_result, tmp_path / "report", "facerec eval ...")
    summary = (tmp_path / "report" / "summary.md").read_text()
    heading = summary.index("## Worst confusions")
    assert "None: every query's rank-1 match was the right person." in summary[heading:]
    assert "| query | truth | matched | similarity |" not in summary
