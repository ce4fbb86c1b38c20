"""The held-out split (#27 point 4): from model v9 the identities every choice is made on (selection) and the ones
the card's FAR curve is calibrated on (calibration) are disjoint, and training sees neither; models up to v8 keep
their one set, so their cards, training lists and validation figures stay what they were."""

from __future__ import annotations


import pytest

from facerec.errors import InvalidArgument
from facerec.datasets.folders import held_out, held_out_identities, list_identities, training_identity_keys
from facerec.evaluation.calibrate_model import card_split, held_out_photos
from facerec.settings import Settings


@pytest.fixture(scope="module")
def celeba(celeba112) -> dict:
    return list_identities(celeba112)


def test_the_disjoint_split_keeps_the_selection_set_and_adds_a_calibration_set_never_trained_on(celeba) -> None:
    single, disjoint = held_out(celeba, "single"), held_out(celeba, "disjoint")
    assert single.selection == single.calibration and len(single.selection) == 150 and not single.disjoint
    assert disjoint.selection == single.selection  # validation figures stay comparable across models
    assert disjoint.disjoint and len(disjoint.calibration) == 150
    assert all(len(celeba[name]) >= 4 for name in disjoint.calibration)  # each has genuine pairs
    assert held_out_identities(celeba, "disjoint") == set(disjoint.selection | disjoint.calibration)


def test_training_excludes_both_sets_of_a_disjoint_split(celeba112, lfw) -> None:
    single = set(training_identity_keys(celeba112, lfw, "single"))
    disjoint = set(training_identity_keys(celeba112, lfw, "disjoint"))
    calibration = held_out(list_identities(celeba112), "disjoint").calibration
    assert single - disjoint == {f"celeba/{name}" for name in calibration}


def test_the_shipped_card_says_which_split_calibrated_it(celeba112, data_dir) -> None:
    split = card_split(Settings().model_card_path)
    assert split == Settings().model_card()["training"]["held_out_split"] == "single"  # model v8
    paths, labels = held_out_photos(data_dir, split=split)
    assert set(labels) == set(held_out(list_identities(celeba112), split).calibration)


def test_an_unknown_split_is_refused(celeba) -> None:
    with pytest.raises(InvalidArgument, match="single, disjoint"):
        held_out(celeba, "random")
