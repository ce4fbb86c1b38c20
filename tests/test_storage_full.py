"""A full disk: writes say so in one sentence and change nothing (507 on the REST API); identify still answers.

Before (#29 row 3): identify failed with "Something went wrong (OperationalError)" because the insert of its
sighting failed. The disk is filled for real: the gallery lives on its own small tmpfs (mounting needs root, as the
tests run in CI), and a filler file takes every free byte, so SQLite meets ENOSPC and reports SQLITE_FULL.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from ci_environment import in_ci
from facerec.api.errors import error_response
from facerec.errors import StorageFull
from facerec.gallery import Gallery
from facerec.settings import Settings
from facerec.gallery.composition import parts_of


@contextlib.contextmanager
def small_disk(folder: Path, megabytes: int = 32):
    """A tmpfs of `megabytes` mounted at `folder`, unmounted afterwards."""
    if os.geteuid() != 0:
        message = "mounting a small disk needs root"
        pytest.fail(message) if in_ci() else pytest.skip(message)
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m,mode=0700", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(disk: Path) -> None:
    """Take every free byte of the disk with a filler file."""
    descriptor = os.open(disk / "filler", os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        for block in (b"\0" * (1 << 20), b"\0" * (1 << 12), b"\0"):
            try:
                while os.write(descriptor, block):
                    pass
            except OSError as error:
                assert error.errno == errno.ENOSPC
    finally:
        os.close(descriptor)
    assert os.statvfs(disk).f_bavail == 0


def test_a_full_disk_refuses_writes_in_one_sentence_and_identify_still_answers(tmp_path: Path, portrait,
                                                                                caplog) -> None:
    with small_disk(tmp_path / "disk") as disk:
        gallery = Gallery(Settings(home=disk / "home"))
        try:
            gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
            fill(disk)
            counts = parts_of(gallery).store.counts()
            with pytest.raises(StorageFull) as refused:
                gallery.enroll(portrait("Joe_Biden", 1), "Joe Biden")
            assert str(refused.value) == ("the gallery's disk is full: nothing was saved; free some space and try "
                                          "again")
            assert parts_of(gallery).store.counts() == counts
            (match,) = gallery.identify(portrait("Barack_Obama", 2))  # its sighting cannot be written
            assert match.name == "Barack Obama" and match.sighting_id is None
            assert "not kept as a sighting" in caplog.text
            (disk / "filler").unlink()  # space again: writes work again
            assert gallery.enroll(portrait("Joe_Biden", 1), "Joe Biden").name == "Joe Biden"
        finally:
            gallery.close()


def test_the_rest_api_answers_507_for_a_full_disk() -> None:
    answer = error_response(StorageFull("the gallery's disk is full: nothing was saved; free some space and try "
                                        "again"))
    assert answer.status_code == 507
    assert json.loads(answer.body) == {"error": "The gallery's disk is full: nothing was saved; free some space "
                                                "and try again.", "code": "storage_full"}
