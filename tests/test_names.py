"""People's names: invisible and control characters are refused at enrollment, names that need joiners and
accents are kept, and the CLI prints names stored by an older version escaped."""

from __future__ import annotations
import pytest
from facerec.errors import InvalidArgument

from hardening import (  # noqa: F401 - pytest finds the shared fixtures by name in this module
    HOPPER, assert_one_line, base, export, facerec_cli, home, open_gallery, pipeline, sql, unchanged,
)


def test_invisible_and_control_characters_are_refused(unchanged, pipeline, portrait):
    with open_gallery(unchanged, pipeline) as gallery:
        for name in ("Bo\u200bb", "Bob\u202egnirtS", "Bob\x1b[31m", "Bob\ufeff", "Bob\x07", "Bob\ue000"):
            with pytest.raises(InvalidArgument, match="U\\+") as caught:
                gallery.enroll(portrait(HOPPER, 1), name)
            assert_one_line(caught.value)
            with pytest.raises(InvalidArgument, match="U\\+"):
                gallery.rename("Eileen Collins", name)


def test_names_that_need_joiners_and_accents_are_kept(home, pipeline):
    with open_gallery(home, pipeline) as gallery:
        persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # a zero-width non-joiner between letters
        assert gallery.rename("Eileen Collins", persian).name == persian
        assert gallery.rename(persian, "Ame\u0301lie  Poulain").name == "Amélie Poulain"  # NFKC, spaces


def test_cli_prints_names_stored_by_an_older_version_escaped(home):
    sql(home, "UPDATE identities SET name = ? WHERE name = 'Eileen Collins'", ("Eileen\x1b[2J\x1b[31mCollins\u202e",))
    listed = facerec_cli("list", home=home)
    assert listed.returncode == 0
    assert "\x1b" not in listed.stdout and "\u202e" not in listed.stdout
    assert "Eileen\\x1b[2J\\x1b[31mCollins\\u202e" in listed.stdout
    deleted = facerec_cli("delete", "Eileen\x1b[2J\x1b[31mCollins\u202e", home=home)  # it can still be removed
    assert deleted.returncode == 0 and "\x1b" not in deleted.stdout
