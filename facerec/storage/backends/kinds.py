"""Which database engine a URL names: SQLite or PostgreSQL, nothing else (see `facerec.storage.backends`)."""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from facerec.errors import UnusableFile

KINDS = ("sqlite", "postgresql")  # the engines with a backend of their own: the only ones a gallery may live in


def database_kind(url: str) -> str:
    """The engine a database URL names ("sqlite" or "postgresql"), or UnusableFile (one line, no password)."""
    try:
        scheme = make_url(url).drivername.split("+")[0]
    except ArgumentError:
        raise UnusableFile("the gallery database URL is not a database URL: facerec keeps galleries in SQLite "
                           "(sqlite:///PATH) or PostgreSQL (postgresql+psycopg://USER@HOST/NAME)") from None
    if scheme not in KINDS:
        raise UnusableFile(f"facerec keeps galleries in SQLite or PostgreSQL, not {scheme}: give sqlite:///PATH or "
                           "postgresql+psycopg://USER@HOST/NAME")
    return scheme
