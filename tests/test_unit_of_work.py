"""#65 item 3: a unit of work. `store.transaction()` yields the store's tables bound to its session, so a service
never holds a session: a check and the write it guards see the same state by construction (the write is visible
to the transaction's own reads before it commits, to nobody else's), a failure rolls the whole unit back, and a
table method that opens its own read is left as it is (it is never handed the transaction's session)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings
from facerec.storage.unit_of_work import UnitOfWork

NOW = datetime(2026, 12, 7, tzinfo=timezone.utc)


@pytest.fixture
def store(tmp_path):
    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        yield parts_of(gallery).store


def names(store) -> list[str]:
    with store.reading() as tables:
        return [person.name for person in tables.people.listed()]


def test_a_write_is_seen_by_its_own_unit_and_by_others_only_once_committed(store):
    with store.transaction() as tx:
        assert isinstance(tx, UnitOfWork)
        ids = tx.people.create([{"name": "Ada Lovelace"}], NOW)
        assert tx.people.by_name("Ada Lovelace").id == ids["Ada Lovelace"]  # the check sees the write
        assert names(store) == []  # another read does not, before the commit
    assert names(store) == ["Ada Lovelace"]


def test_a_failure_inside_the_unit_rolls_all_of_it_back(store):
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.people.create([{"name": "Grace Hopper"}], NOW)
        raise RuntimeError("the guarded write's check failed")
    assert names(store) == []


def test_only_methods_that_run_in_the_callers_session_are_given_it(store):
    with store.reading() as tables:
        assert tables.people.count() == 0  # `count(session, query=None)`: given the unit's session
        assert tables.people.names([]) == {}  # `names(identity_ids)` opens its own read: called as it is
        assert tables.faces.statistics_of is store.faces.statistics_of  # an attribute, not a method: untouched
