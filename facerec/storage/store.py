"""The store: the gallery's database, its sessions, and one table object per aggregate.

`transaction()` is one write transaction (writers queue for one lock, see the backend), `session()` a read session.
The queries live with their aggregate: `store.people` (identities), `store.faces` (embeddings, photos, crops),
`store.journal` (the commit-ordered change log the vector index follows), `store.sightings` (the memory of
recent identifications), `store.replaced` (templates a learned face took the place of, kept for its undo) and
`store.strangers` (faces of people not enrolled, for suggestions) and `store.api_keys` (the REST API's keys).
Their methods
that take a `session` run inside the caller's transaction, so a check and the write it guards see the same state;
the others open their own read session. Embeddings go in and come out as float32 NumPy vectors: how a backend
stores them is the storage package's business.

One transaction owner: only the store opens sessions and commits them. SQL lives in facerec/storage/ (and the vector
engines' folders, facerec/vectors/); services above it never see a session: they read and write through the tables
of one unit of work, `with store.transaction() as tx:` (or `sightings_transaction()`, `reading()`), whose methods
run in that transaction (`facerec.storage.unit_of_work`; tests/test_sql_boundary.py refuses the rest).
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from facerec.errors import StorageFull, UnusableFile
from facerec.storage.api_keys import ApiKeysTable
from facerec.storage.backends import backend_for
from facerec.storage.faces import FacesTable
from facerec.storage.journal import JournalTable
from facerec.storage.people import PeopleTable
from facerec.storage.negatives import NegativesTable
from facerec.storage.replaced import ReplacedFacesTable
from facerec.storage.schema import Face, Identity, Setting
from facerec.storage.sightings import SightingsTable
from facerec.storage.strangers import StrangersTable
from facerec.storage.unit_of_work import UnitOfWork
from facerec.words.phrasing import one_line


class Store:
    """Thin access layer over the tables. `transaction()` is one write transaction; `session()` a read session."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.backend = backend_for(url)
        self.path = self.backend.file
        self.write_engine, self.read_engine = self.backend.write_engine, self.backend.read_engine
        try:
            self.backend.open()
        except UnusableFile:
            self.dispose()
            raise
        except SQLAlchemyError as error:
            self.dispose()
            reason = one_line(getattr(error, "orig", None) or error, 200)
            raise UnusableFile(f"cannot open the gallery database {self.backend.describe()} ({reason}); "
                               f"{self.backend.advice}. Nothing was changed.") from None
        for engine in {self.write_engine, self.backend.sightings_engine}:
            event.listen(engine, "handle_error", _disk_full_as_storage_full)
        self._writes = sessionmaker(self.write_engine, expire_on_commit=False)
        self._sighting_writes = sessionmaker(self.backend.sightings_engine, expire_on_commit=False)
        self._reads = sessionmaker(self.read_engine, expire_on_commit=False)
        self.journal = JournalTable(self.session)
        self.faces = FacesTable(self.session, self.backend.embedding_dtype)
        self.sightings = SightingsTable(self.session)
        self.strangers = StrangersTable(self.session)
        self.replaced = ReplacedFacesTable(self.faces)
        self.negatives = NegativesTable(self.session)
        self.api_keys = ApiKeysTable(self.transaction, self.session)
        self.people = PeopleTable(self.session, self.backend.name_key, self.sightings, self.faces, self.replaced)

    @property
    def display_url(self) -> str:
        return display_url(self.url)

    def session(self) -> Session:
        """A session for reads."""
        return self._reads()

    @contextmanager
    def transaction(self) -> Iterator[UnitOfWork]:
        """One write transaction, the way services write: `with store.transaction() as tx: tx.people.add(...)`
        commits when the block ends and rolls back if it raises (`UnitOfWork`: the tables bound to its session)."""
        with self._writes() as session, session.begin():
            yield UnitOfWork(self, session)

    @contextmanager
    def sightings_transaction(self) -> Iterator[UnitOfWork]:
        """One write transaction of sightings (and strangers) only, like `transaction()`, on the engine that on
        PostgreSQL does not queue for the gallery's write lock (`Backend.sightings_engine`)."""
        with self._sighting_writes() as session, session.begin():
            yield UnitOfWork(self, session)

    @contextmanager
    def reading(self) -> Iterator[UnitOfWork]:
        """One read session's tables, for several reads that must agree (`with store.reading() as tables:`)."""
        with self._reads() as session:
            yield UnitOfWork(self, session)

    def dispose(self) -> None:
        self.backend.dispose()

    # ----- settings and counts --------------------------------------------------------------------------------
    def get_setting(self, key: str, default: str | None = None) -> str | None:
        with self.session() as session:
            row = session.get(Setting, key)
            return row.value if row else default

    def set_setting(self, key: str, value) -> None:
        with self.transaction() as session:
            session.merge(Setting(key=key, value=value if isinstance(value, str) else json.dumps(value)))

    def delete_setting(self, key: str) -> None:
        with self.transaction() as session:
            row = session.get(Setting, key)
            if row is not None:
                session.delete(row)

    def setting_once(self, key: str, make) -> str:
        """The setting `key`, made by `make()` and stored the first time it is asked for, in one write transaction
        (so every process on this database agrees on it: writers queue for one lock)."""
        found = self.get_setting(key)
        if found is not None:
            return found
        with self.transaction() as session:
            row = session.get(Setting, key)
            if row is None:
                row = Setting(key=key, value=make())
                session.add(row)
            return row.value

    def counts(self) -> tuple[int, int]:
        """(people, faces) in the gallery."""
        with self.session() as session:
            return (int(session.scalar(select(func.count(Identity.id)))),
                    int(session.scalar(select(func.count(Face.id)))))


def display_url(url: str) -> str:
    """The URL without its password, for reports."""
    return make_url(url).render_as_string(hide_password=True)


SQLITE_FULL = 13
POSTGRESQL_DISK_FULL = "53100"


def _disk_full_as_storage_full(context) -> Exception | None:
    """A write that failed because the disk is full becomes one plain sentence (StorageFull), whatever the
    backend said (SQLite's "database or disk is full", PostgreSQL's SQLSTATE 53100); other errors pass through."""
    error = context.original_exception
    full = (getattr(error, "sqlite_errorcode", None) == SQLITE_FULL or getattr(error, "sqlstate", None) ==
            POSTGRESQL_DISK_FULL or "disk is full" in str(error) or isinstance(error, OSError) and error.errno ==
            errno.ENOSPC)
    if full:
        return StorageFull("the gallery's disk is full: nothing was saved; free some space and try again")
    return None
