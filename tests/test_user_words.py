"""What a new user reads, round 5 (#51 rows 5-7, 10, 11): each test fails on the code before its fix.

Real LFW faces, a real SQLite gallery, the real CLI in a subprocess. The page's parts (the Enroll tab's labels, the
Gallery table after a Confirm, Verify on faces stacked top to bottom) are in tests/test_app_words.py.

The health gallery: six people of LFW, one photo each; on the shipped model no two of them are anywhere near the
match threshold (their closest pair is about a third of the way to it), so Health must say that rather than call
them "most confusable". A second photo of Colin Powell enrolled under another name is a pair at the threshold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from facerec.gallery import Gallery
from facerec.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
SIX = ("Colin_Powell", "George_W_Bush", "Serena_Williams", "Tony_Blair", "Alan_Ball", "Ana_Guevara")


def facerec(*args: str, home: Path) -> subprocess.CompletedProcess:
    """`facerec ARGS --home HOME` as a user runs it (output to a pipe: lines are not wrapped)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)], capture_output=True,
                          text=True, timeout=300, cwd=REPO_ROOT, env=env)


@pytest.fixture(scope="module")
def six_people(tmp_path_factory, lfw_photo) -> Path:
    """The home folder of a gallery of six people, one photo each."""
    home = tmp_path_factory.mktemp("six") / "home"
    with Gallery(Settings(home=home)) as gallery:
        for person in SIX:
            gallery.enroll(lfw_photo(person, 1), person.replace("_", " "), allow_low_quality=True)
    return home


# ----- row 5: `facerec health` prints the confusable pairs its --help promises ------------------------------------
def test_health_in_the_terminal_lists_the_confusable_pairs(six_people):
    """`--help` promised confusable pairs; only `--json` had them."""
    assert "confusable pairs" in facerec("health", "--help", home=six_people).stdout
    report = json.loads(facerec("health", "--json", home=six_people).stdout)
    pairs = report["confusable_pairs"]
    assert len(pairs) >= 3
    text = facerec("health", home=six_people)
    assert text.returncode == 0, text.stderr
    for pair in pairs:
        assert f"{pair['a']} ~ {pair['b']} ({pair['similarity']:.3f})" in text.stdout, text.stdout
