"""Start-up and command-line errors are one line and start nothing: another kind of database, a bad environment
value, the strangers memory's bound, the index kinds the settings know, a bug called a bug, a full disk on export."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from hardening import REPO_ROOT, assert_one_line

from facerec.errors import UnusableFile
from facerec.gallery import Gallery
from facerec.settings import Settings


# ----- start-up and the command line -----------------------------------------------------------------------------
def test_a_database_of_another_kind_is_refused_in_one_line(tmp_path):
    """The base backend takes no write lock, so on MySQL the journal would leave commit order: refused."""
    for url in ("mysql://user:secret@localhost/faces", "not a url"):
        with pytest.raises(UnusableFile) as refused:
            Gallery(Settings(home=tmp_path / "home", database_url=url))
        message = assert_one_line(refused.value)
        assert "SQLite" in message and "PostgreSQL" in message and "secret" not in message


@pytest.mark.parametrize("variable, value, words", [
    ("FACEREC_THRESHOLD", "abc", "not a number"), ("FACEREC_INDEX", "bogus", "flat, flat16, hnsw, pgvector"),
    ("FACEREC_FPIR", "2", "between 0 and 1"), ("FACEREC_SIGHTINGS", "-1", "0 or more"),
    ("FACEREC_SUGGESTIONS_MEMORY", "1000000", "at most 20000")])
def test_a_bad_environment_value_is_one_line_at_start(tmp_path, variable, value, words):
    env = {**os.environ, variable: value}
    done = subprocess.run([sys.executable, "app.py", "--home", str(tmp_path / "home"), "--port", "1"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert variable in line and words in line, line


def test_the_strangers_memory_never_exceeds_its_bound():
    from facerec.gallery.strangers import MAX_MEMORY
    from facerec.settings import _suggestions_memory

    assert _suggestions_memory(str(MAX_MEMORY)) == MAX_MEMORY  # the settings and the memory agree on the bound
    with pytest.raises(ValueError):
        _suggestions_memory(str(MAX_MEMORY + 1))


def test_the_settings_know_every_index_kind():
    from facerec.settings import _index_kind
    from facerec.vectors import INDEX_KINDS

    for kind in INDEX_KINDS:
        assert _index_kind(kind) == kind
    with pytest.raises(ValueError):
        _index_kind("ivf")


def test_the_command_line_calls_a_bug_a_bug():
    """Every ValueError used to become a user error ("error: <message>", exit 1), hiding real bugs."""
    from facerec.cli.registry import INTERNAL_ERROR, new_parser, run_parser

    def broken(_args):
        raise ValueError("operands could not be broadcast together")

    import contextlib

    parser, command, _sub, _common = new_parser("facerec-test", "a test")
    command("broken", broken, "raises as a bug would")
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        assert run_parser(parser, ["broken"]) == INTERNAL_ERROR
    line = errors.getvalue().strip()
    assert "\n" not in line and "bug" in line and "ValueError" in line and "FACEREC_DEBUG" in line, line


def test_a_full_disk_export_says_so_and_leaves_nothing(tmp_path, portrait):
    """Row 8: an export that met a full disk was a 500 `internal_error`, leaving a partial file."""
    from test_storage_full import fill, small_disk

    from facerec.errors import StorageFull

    with small_disk(tmp_path / "disk", megabytes=8) as disk:
        with Gallery(Settings(home=tmp_path / "home")) as gallery:
            gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
            fill(disk)
            with pytest.raises(StorageFull) as refused:
                gallery.export(disk / "gallery.zip")
        assert "disk is full" in assert_one_line(refused.value)
        assert not (disk / "gallery.zip").exists()
