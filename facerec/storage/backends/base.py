"""The generic backend: any SQLAlchemy URL, nothing engine-specific. Each engine's folder-module subclasses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sqlalchemy import create_engine, func, inspect
from sqlalchemy.engine import Engine, make_url

from facerec.storage.schema import ADDED_COLUMNS, NAME_KEY_INDEX, Base


class Backend:
    """Any SQLAlchemy URL, with nothing engine-specific: one engine for reads and writes."""

    name = "generic"
    file: Path | None = None  # the database file, for engines that keep one
    advice = "restore it from a backup"  # what to do when it cannot be opened
    # The precision a face's embedding is kept at: what is read back, and so what every statistic and score of
    # a stored face must be computed from (`FacesTable` rounds to it before computing anything).
    embedding_dtype: type = np.float32

    def __init__(self, url: str) -> None:
        self.url = url
        self.write_engine, self.read_engine = self._engines()
        self.sightings_engine = self._sightings_engine()

    def _sightings_engine(self) -> Engine:
        """Where sightings are written: the write engine, unless the backend can let them skip the gallery's
        write lock (an identify is a read; its sighting should not queue behind enrollments or a reindex)."""
        return self.write_engine

    def _engines(self) -> tuple[Engine, Engine]:
        engine = create_engine(self.url)
        return engine, engine

    def describe(self) -> str:
        """Where the database is, for messages: its file, or its URL without the password."""
        return str(self.file) if self.file else make_url(self.url).render_as_string(hide_password=True)

    def open(self) -> None:
        """Make the schema usable when a gallery opens it."""
        self.upgrade()

    def upgrade(self, projection=None) -> list[str]:
        """Create what is missing (tables, indexes); safe to run on an up-to-date database. Returns what it did
        (here: nothing it can tell apart from an up-to-date database). `projection` serves PostgreSQL's search
        index only (`projection.Projection`)."""
        Base.metadata.create_all(self.write_engine)
        self._ensure_name_key_index()
        return self._add_missing_columns()

    def _add_missing_columns(self) -> list[str]:
        """Columns `ADDED_COLUMNS` lists that this database's tables lack, added (looked for without the write
        lock first: the common case is that none is missing)."""
        with self.read_engine.connect() as connection:
            found = {table: {c["name"] for c in inspect(connection).get_columns(table)}
                     for table in {table for table, _column, _types in ADDED_COLUMNS}}
        missing = [(table, column, types) for table, column, types in ADDED_COLUMNS if column not in found[table]]
        if not missing:
            return []
        with self.write_engine.begin() as connection:
            for table, column, types in missing:
                if column not in {c["name"] for c in inspect(connection).get_columns(table)}:
                    sql_type = types.get(self.name, types["sqlite"])
                    connection.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}")
        return [f"added column {table}.{column}" for table, column, _types in missing]

    def _ensure_name_key_index(self) -> None:
        """Galleries made before the index existed get it once (create_all adds no index to an existing table)."""
        with self.write_engine.begin() as connection:
            connection.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {NAME_KEY_INDEX} ON identities (lower(name))")

    def name_key(self, column):
        """SQL for `facerec.names.name_key(column)`: the name with A-Z lower-cased."""
        return func.lower(column)

    def dispose(self) -> None:
        for engine in {self.write_engine, self.read_engine, self.sightings_engine}:
            engine.dispose()
