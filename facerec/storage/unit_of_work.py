"""A unit of work: the store's tables bound to one session, so a service reads and writes through them without
ever holding the session.

`with store.transaction() as tx:` (or `store.reading()`, `store.sightings_transaction()`) yields one. Its tables
are the store's (`tx.people`, `tx.faces`, ...) with every method that runs in the caller's session given this one:
`tx.people.by_name("Ada")` is `store.people.by_name(session, "Ada")`. A check and the write it guards therefore
see the same state by construction, and a fresh read inside a write (a table method that opens its own session
because it was called on the store instead) does not happen by accident: inside a transaction a service has only
`tx`. The few things a service asks of the session itself (a row by its key, deleting or expiring a row, a flush
before a count) are named methods here."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from sqlalchemy.orm import Session

TABLES = ("people", "faces", "journal", "sightings", "strangers", "replaced", "negatives", "api_keys")


class BoundTable:
    """One table object with this unit's session passed to each method that runs in the caller's session."""

    def __init__(self, table: Any, session: Session) -> None:
        self._table, self._session = table, session

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._table, name)
        if callable(found) and _runs_in_session(type(self._table), name):
            return functools.partial(found, self._session)
        return found


class UnitOfWork:
    """The tables of one transaction or one read, and what a service may ask of its session."""

    def __init__(self, store: Any, session: Session) -> None:
        self._session = session
        for name in TABLES:
            setattr(self, name, BoundTable(getattr(store, name), session))

    def get(self, kind: type, key: int) -> Any:
        """The row of table class `kind` with this primary key, or None."""
        return self._session.get(kind, key)

    def delete(self, row: Any) -> None:
        self._session.delete(row)

    def flush(self) -> None:
        """Send what is pending to the database (inside the transaction), so a query sees it."""
        self._session.flush()

    def expire(self, row: Any) -> None:
        """Read `row` again on next use (another row's change moved it)."""
        self._session.expire(row)

    def __getattr__(self, name: str) -> Any:
        # The store's own table methods take the session as their first argument; code of the storage package and
        # the package's own tests that still pass a unit of work there get the session's attributes.
        return getattr(self._session, name)


@functools.cache
def _runs_in_session(kind: type, name: str) -> bool:
    """Whether a table's method runs in the caller's session: its first argument (after self) is `session`."""
    raw = inspect.getattr_static(kind, name, None)
    if raw is None:
        return False
    function = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    if not inspect.isfunction(function):
        return False
    parameters = list(inspect.signature(function).parameters)
    first = 0 if isinstance(raw, staticmethod) else 1
    return len(parameters) > first and parameters[first] == "session"
