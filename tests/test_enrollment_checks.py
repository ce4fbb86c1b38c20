"""The checks that keep one person one identity: add-photo refuses somebody else's face, and the same photo
enrolled at once under several names (threads of one process, or two processes) is enrolled once: the checks
repeated inside the write transaction decide."""

from __future__ import annotations
import hashlib
import threading
from pathlib import Path
import pytest
from facerec.errors import DuplicatePhoto, IdentityMismatch, PossibleDuplicate
from facerec.gallery import Gallery

from hardening import (  # noqa: F401 - pytest finds the shared fixtures by name in this module
    HOPPER, OBAMA, RACERS, SERENA, assert_cli_refused, assert_one_line, base, display, export, facerec_cli,
    folder_digest, home, open_gallery, pipeline, sql, unchanged,
)


def test_add_photo_refuses_somebody_elses_face(home, pipeline, portrait):
    hopper = portrait(HOPPER, 1)  # a poor enrollment photo on this model: allowed, so the refusal is the mismatch
    before = folder_digest(home)
    with open_gallery(home, pipeline) as gallery:
        with pytest.raises(IdentityMismatch) as caught:
            gallery.add_photo(display(OBAMA), hopper, allow_low_quality=True)
        message = assert_one_line(caught.value)
        assert "does not match 'Barack Obama'" in message and "nothing was added" in message
    assert folder_digest(home) == before

    cli = facerec_cli("add-photo", display(OBAMA), str(hopper), "--allow-low-quality", home=home)
    assert_cli_refused(cli, "does not match")
    assert folder_digest(home) == before

    with open_gallery(home, pipeline) as gallery:
        # Someone who matches another enrolled person better is refused too (Obama's photo under Eileen Collins).
        with pytest.raises(IdentityMismatch, match="matches Barack Obama"):
            gallery.add_photo("Eileen Collins", portrait(OBAMA, 3))
        # A real second photo is added; the override adds anyway, and identify then says what it was told.
        assert gallery.add_photo(display(OBAMA), portrait(OBAMA, 2)).photos == 2
        assert gallery.add_photo(display(OBAMA), hopper, allow_mismatch=True, allow_low_quality=True).photos == 3
        (match,) = gallery.identify(hopper)
        assert match.name == display(OBAMA)


def race(home: Path, enrollments: list[tuple[Gallery, Path, str]], hold_lock: bool) -> list[str]:
    """Run the enrollments in threads started together; returns each outcome (the name, or the refusal's type).
    With `hold_lock`, each enrollment waits after its first checks (`enrollment.between_check_and_write`) until
    every one has passed them, so all reach their writes together with nothing committed yet: only the checks
    repeated inside the write transaction can stop the duplicates. The race made certain, not timed (a held
    database lock and a sleep let a slow machine's threads see an earlier commit in their first checks)."""
    from unittest import mock

    from facerec.gallery import enrollment

    start = threading.Barrier(len(enrollments))
    checked = threading.Barrier(len(enrollments) if hold_lock else 1)
    outcomes: list[str] = []

    def enroll(gallery, photo, name):
        start.wait()
        try:
            outcomes.append(gallery.enroll(photo, name).name)
        except (DuplicatePhoto, PossibleDuplicate) as refused:
            outcomes.append(type(refused).__name__)

    with mock.patch.object(enrollment, "between_check_and_write", lambda: checked.wait(timeout=120)):
        threads = [threading.Thread(target=enroll, args=enrollment_args) for enrollment_args in enrollments]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
    assert len(outcomes) == len(enrollments)
    return outcomes


def test_same_photo_enrolled_at_once_under_three_names_is_enrolled_once(home, pipeline, lfw_photo):
    first, second = open_gallery(home, pipeline), open_gallery(home, pipeline)  # as the app and the CLI are
    try:
        for trial, person in enumerate(RACERS):
            photo = lfw_photo(person, 1)
            # two threads sharing one Gallery (the app's workers) and one on another Gallery (another process)
            outcomes = race(home, [(gallery, photo, f"{person} {n}") for n, gallery in enumerate((first, first,
                                                                                                 second))],
                            hold_lock=trial == 0)
            assert sum(o.startswith(person) for o in outcomes) == 1, outcomes
            digest = hashlib.sha256(photo.read_bytes()).hexdigest()
            assert sql(home, "SELECT COUNT(*) FROM faces WHERE photo_sha256 = ?", (digest,)) == [(1,)]
        # Two photos of one person under two names at once: the look-alike check is inside the transaction too.
        outcomes = race(home, [(first, lfw_photo(SERENA, 1), "Serena A"), (second, lfw_photo(SERENA, 3), "Serena B")],
                        hold_lock=True)
        assert sorted(outcomes)[0] == "PossibleDuplicate" and sorted(outcomes)[1].startswith("Serena"), outcomes
    finally:
        second.close()
        first.close()
