"""Where the gallery's identities, faces and vectors are kept: the tables (`schema`), the one object that queries
them (`store.Store`) and one module per database engine (`backends`)."""

from .backends.sqlite import database_file
from .schema import Face, Identity, JournalEntry, Setting, utcnow
from .store import Store, chunked

__all__ = ["Face", "Identity", "JournalEntry", "Setting", "Store", "chunked", "database_file", "utcnow"]
