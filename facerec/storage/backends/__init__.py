"""One database engine per module, Django-style: what differs between engines lives here and nowhere else.

A backend makes the two engines the store uses (reads, and writes that queue for one lock), creates or upgrades
the schema (`upgrade`, what `facerec db upgrade` runs) and checks it when a gallery opens (`open`: embedded
databases are simply upgraded then). `backend_for(url)` picks one by the URL's scheme: `sqlite` (the default),
`postgresql` (with pgvector). Any other scheme is refused, as Django refuses an unknown engine: the base backend
takes no write lock, so on another engine the journal would no longer be in commit order and a replica could miss
changes.
"""

from __future__ import annotations


from facerec.storage.backends.base import Backend
from facerec.storage.backends.kinds import database_kind
from facerec.storage.backends.postgresql import PostgreSQLBackend
from facerec.storage.backends.sqlite import SQLiteBackend

BACKENDS: dict[str, type[Backend]] = {"sqlite": SQLiteBackend, "postgresql": PostgreSQLBackend}


def backend_for(url: str) -> Backend:
    """The backend for a URL's scheme (`sqlite`, `postgresql+psycopg`, ...); UnusableFile for any other."""
    return BACKENDS[database_kind(url)](url)
