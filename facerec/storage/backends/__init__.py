"""One database engine per module, Django-style: what differs between engines lives here and nowhere else.

A backend makes the two engines the store uses (reads, and writes that queue for one lock), creates or upgrades
the schema (`upgrade`, what `facerec db upgrade` runs) and checks it when a gallery opens (`open`: embedded
databases are simply upgraded then). `backend_for(url)` picks one by the URL's scheme: `sqlite` (the default),
`postgresql` (with pgvector), anything else SQLAlchemy can reach, with nothing engine-specific.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url

from facerec.storage.backends.base import Backend
from facerec.storage.backends.postgresql import PostgreSQLBackend
from facerec.storage.backends.sqlite import SQLiteBackend

BACKENDS: dict[str, type[Backend]] = {"sqlite": SQLiteBackend, "postgresql": PostgreSQLBackend}


def backend_for(url: str) -> Backend:
    """The backend for a URL's scheme (`sqlite`, `postgresql+psycopg`, ...): its engine's own, else the generic."""
    scheme = make_url(url).drivername.split("+")[0]
    return BACKENDS.get(scheme, Backend)(url)
