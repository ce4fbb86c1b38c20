"""Messages a person reads (issue #15, point 6): whole sentences that say what to do, in the shell's own terms.

On real photos through the real Gallery API and the CLI (a subprocess, as a user runs it): the look-alike refusal
in separate sentences, the CLI naming `--force` for a look-alike and `--face N` for a group photo (and
`--face-a` for verify), a truncated JPEG described without the decoder's text, a 1x1 image too small to contain a
face, one format for rates, and "enroll" spelled one way in every help text and the README.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from group_photos import group_photo
from PIL import Image

from facerec.errors import InvalidImage, MultipleFaces, NoFace, PossibleDuplicate
from facerec.faces.image import load_image
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.words.phrasing import percent_text, plural, rate_text, sentence, sentences
from facerec.openset.model_card import policy_for
from facerec.settings import Settings
from facerec.words.threshold import threshold_notes

REPO = Path(__file__).resolve().parents[1]
OBAMA = "Barack_Obama"  # a shipped portrait (tests/faces): photos 1 and 2 are 0.78 apart, a look-alike as well
# Shipped public-domain portraits (tests/faces), pasted side by side into a group photo: Biden, Hopper, Obama (photo 1)
GROUP = ("Joe_Biden", "Grace_Hopper", OBAMA)
BRITISH = re.compile(r"\benrol\b|\benrols\b|\benrolment", re.IGNORECASE)


def facerec(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    with Gallery(Settings.from_env(home=tmp_path_factory.mktemp("messages") / "home")) as opened:
        yield opened


@pytest.fixture
def group(portrait, tmp_path) -> Path:
    return group_photo([portrait(p, 1) for p in GROUP], tmp_path / "group3.jpg")


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.png"
    Image.new("RGB", (1, 1), (200, 150, 120)).save(path)
    return path


@pytest.fixture
def truncated(portrait, tmp_path) -> Path:
    path = tmp_path / "truncated.jpg"
    data = portrait(OBAMA, 1).read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


# ----- formats ---------------------------------------------------------------------------------------------------
def test_one_format_for_rates_and_sentences() -> None:
    # The same value never reads two ways (the issue: "1.0e-03" and "9.9e-04" for one threshold's rate).
    assert rate_text(0.001) == rate_text(0.0009999) == rate_text(1.0e-03) == "1e-3"
    assert rate_text(0.00099) == "9.9e-4" and rate_text(2.5e-07) == "2.5e-7" and rate_text(1e-9) == "1e-9"
    assert rate_text(0) == "0"
    assert percent_text(0.01) == "1%" and percent_text(0.0037) == "0.37%" and percent_text(1e-8) == "<0.001%"
    assert sentence("no face found; use a clear photo") == "No face found; use a clear photo."
    assert sentence("'al' is taken.") == "'al' is taken."
    # a file name keeps its case: 'holiday.jpg' written as 'Holiday.jpg' is not the user's file (bug found by the
    # browser test of a text file named .jpg)
    assert sentence("holiday.jpg is not an image") == "holiday.jpg is not an image."
    assert sentence("photos/a.png could not be read") == "photos/a.png could not be read."
    assert sentences("this face matches X", "", "if not, tick the box") == "This face matches X. If not, tick the box."
    # counts read the same in the Health readings (gallery) and the tabs (UI): one function for both
    assert plural(1, "person", "people") == "1 person" and plural(1204, "sighting") == "1,204 sightings"
    assert plural(0, "face") == "0 faces"


# ----- photos ----------------------------------------------------------------------------------------------------
def test_a_truncated_jpeg_is_described_without_the_decoders_text(truncated) -> None:
    with pytest.raises(InvalidImage) as caught:
        load_image(truncated)
    message = str(caught.value)
    assert message == "truncated.jpg is truncated or corrupt: it could not be decoded; use the complete, original file"
    for leaked in ("bytes not processed", "image file is truncated", "broken data stream", "OSError"):
        assert leaked not in message


def test_a_1x1_image_is_too_small_to_contain_a_face(gallery, tiny, portrait) -> None:
    before = parts_of(gallery).store.counts()
    for call in (lambda: gallery.identify(tiny), lambda: gallery.enroll(tiny, "Tiny"),
                 lambda: gallery.verify(tiny, portrait(OBAMA, 1))):
        with pytest.raises(NoFace) as caught:
            call()
        assert "is only 1x1 pixels, too small to contain a face" in str(caught.value), str(caught.value)
    with pytest.raises(NoFace, match="the first photo is only 1x1 pixels"):
        gallery.verify(tiny, portrait(OBAMA, 1))
    assert parts_of(gallery).store.counts() == before


def test_the_look_alike_refusal_states_the_facts_in_sentences(gallery, portrait) -> None:
    gallery.enroll(portrait(OBAMA, 1), "Barack Obama")
    with pytest.raises(PossibleDuplicate) as caught:
        gallery.enroll(portrait(OBAMA, 2), "Someone Else")
    message = str(caught.value)
    assert re.fullmatch(r"this face matches already-enrolled Barack Obama \(\d+\.\d{2}\), at or above the "
                        r"threshold \d+\.\d{2} \(set by the accepted stranger-match rate for 1 enrolled face\), so it "
                        r"may be the same person", message), message
    assert parts_of(gallery).store.counts()[0] == 1


def test_verify_asks_which_face_of_a_group_photo(gallery, group, portrait) -> None:
    with pytest.raises(MultipleFaces) as caught:
        gallery.verify(group, portrait(OBAMA, 2))
    assert len(caught.value.faces) == 3 and caught.value.photo == "the first photo"
    assert str(caught.value).startswith("the first photo has 3 faces (#0: box (")
    same = gallery.verify(group, portrait(OBAMA, 2), face_a=2)
    different = gallery.verify(group, portrait(OBAMA, 2), face_a=0)
    assert same.same_person and not different.same_person
    widths = [Image.open(portrait(p, 1)).width for p in GROUP]
    assert widths[0] + widths[1] <= same.face_a.center[0] < sum(widths)  # the third tile's face


# ----- the CLI says what to type -------------------------------------------------------------------------------
def test_cli_errors_name_the_option_that_helps(portrait, group, tiny, truncated, tmp_path) -> None:
    """Obama's photos 1 and 2 are a look-alike pair; the group's face #0 (Biden) is enrolled as someone new, and
    verified against his only shipped photo (what is asserted is the option each refusal names)."""
    home = tmp_path / "home"
    assert facerec("enroll", str(portrait(OBAMA, 1)), "--name", "Barack Obama", home=home).returncode == 0

    lookalike = facerec("enroll", str(portrait(OBAMA, 2)), "--name", "Someone Else", home=home)
    assert lookalike.returncode == 1
    assert re.match(r"error: this face matches already-enrolled Barack Obama \(\d+\.\d{2}\)", lookalike.stderr)
    assert lookalike.stderr.rstrip().endswith(
        "so it may be the same person. If this is a different person, run the command again with --force.")
    assert len(lookalike.stderr.strip().splitlines()) == 1
    forced = facerec("enroll", str(portrait(OBAMA, 2)), "--name", "Someone Else", "--force", home=home)
    assert forced.returncode == 0, forced.stderr

    several = facerec("enroll", str(group), "--name", "Joe Biden", home=home)
    assert several.returncode == 1
    assert "the photo has 3 faces (#0: box" in several.stderr
    assert several.stderr.rstrip().endswith("Pick one with --face N (0 to 2, left to right).")
    assert facerec("enroll", str(group), "--name", "Joe Biden", "--face", "0", home=home).returncode == 0

    verify = facerec("verify", str(group), str(portrait("Joe_Biden", 1)), home=home)
    assert verify.returncode == 1
    assert verify.stderr.rstrip().endswith(
        "Pick one with --face-a N (first photo) or --face-b N (second photo) (0 to 2, left to right).")
    chosen = facerec("verify", str(group), str(portrait("Joe_Biden", 1)), "--face-a", "0", home=home)
    assert chosen.returncode == 0 and chosen.stdout.startswith("same person"), chosen.stdout + chosen.stderr

    mismatch = facerec("add-photo", "Joe Biden", str(portrait(OBAMA, 3)), home=home)
    assert mismatch.returncode == 1
    assert mismatch.stderr.rstrip().endswith("nothing was added. If you are sure it is them, run the command again "
                                             "with --force.")

    for photo, words in ((tiny, "error: the photo is only 1x1 pixels, too small to contain a face"),
                         (truncated, "error: truncated.jpg is truncated or corrupt: it could not be decoded")):
        result = facerec("identify", str(photo), home=home)
        assert result.returncode == 1 and words in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


# ----- one spelling --------------------------------------------------------------------------------------------
def test_enroll_is_spelled_one_way_in_help_and_readme() -> None:
    from facerec.cli import build_parser

    parser = build_parser()
    pages = [REPO / "README.md", REPO / "SECURITY.md", *sorted((REPO / "docs").glob("*.md"))]
    texts = [parser.format_help(), (REPO / "app.py").read_text(), *(page.read_text() for page in pages)]
    actions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    texts += [sub.format_help() for action in actions for sub in action.choices.values()]
    found = sorted({m.group(0) for text in texts for m in BRITISH.finditer(text)})
    assert found == [], f"British spellings in user-facing text: {found}"


def test_rates_in_the_calibrated_range_note_use_the_one_format() -> None:
    policy = policy_for(Settings())
    huge = policy.for_gallery(10**12)
    notes = " ".join(threshold_notes(huge))
    assert "per comparison, below the calibrated range (down to 1e-9): extrapolated" in notes, notes
    assert not re.search(r"\de-0\d", notes), notes
    assert np.isfinite(huge.threshold)
