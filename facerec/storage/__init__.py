"""Where the gallery's identities, faces and vectors are kept: the tables (`schema`), the store (`store.Store`:
sessions, and one table object per aggregate: `people`, `faces`, `journal`, `sightings`) and one module per
database engine (`backends`)."""

from facerec.storage.backends import backend_for
from facerec.storage.backends.sqlite import database_file
from facerec.storage.schema import Face, Identity, JournalEntry, Setting, as_utc, utcnow
from facerec.storage.rows import chunked
from facerec.storage.store import Store


def upgrade(url: str, projection=None) -> list[str]:
    """Create or upgrade the schema of the database at `url` (`facerec db upgrade`); returns what was done.
    `projection`: the model's (`facerec.vectors.pgvector.projection.model_projection`), for PostgreSQL's search
    index."""
    backend = backend_for(url)
    try:
        return backend.upgrade(projection)
    finally:
        backend.dispose()


__all__ = ["Face", "Identity", "JournalEntry", "Setting", "Store", "as_utc", "chunked", "database_file", "upgrade",
           "utcnow"]
