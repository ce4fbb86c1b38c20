"""The two places a test gallery's database can live, behind one small interface (not a test module itself), so a
test suite runs unchanged on both:

- `SQLiteGalleries`: `gallery.db` in the gallery folder, searched by FAISS (the embedded default);
- `PostgresGalleries`: one database per gallery folder on the session's real PostgreSQL + pgvector server
  (`tests/postgres_server.py`), searched by pgvector unless a test asks for a local FAISS copy.

Each maps a gallery folder to its database URL (`url_for`; None means the default SQLite file), copies a gallery
(`copy`: the folder, and on PostgreSQL the database as a template copy) and runs raw SQL against it (`sql`, with
sqlite3's `?` placeholders on both).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np


class SQLiteGalleries:
    name = "sqlite"
    default_index = "auto"

    def url_for(self, home: Path) -> str | None:
        return None

    def copy(self, source: Path, target: Path) -> None:
        shutil.copytree(source, target)

    def sql(self, home: Path, statement: str, params: tuple = ()) -> list[tuple]:
        connection = sqlite3.connect(Path(home) / "gallery.db", timeout=60)
        try:
            rows = connection.execute(statement, params).fetchall()
            connection.commit()
            return rows
        finally:
            connection.close()

    def vector(self, vector: np.ndarray):
        """An embedding as an SQL parameter for the faces table."""
        return np.asarray(vector, np.float32).tobytes()

    def image_columns(self, home: Path) -> dict[str, int]:
        """{table.column: rows holding JPEG or PNG bytes} over every blob column of every table."""
        found = {}
        for (table,) in self.sql(home, "SELECT name FROM sqlite_master WHERE type = 'table'"):
            for column in [row[1] for row in self.sql(home, f"PRAGMA table_info({table})")]:
                found[f"{table}.{column}"] = self.sql(
                    home, f"SELECT COUNT(*) FROM {table} WHERE typeof({column}) = 'blob' AND "
                          f"(hex(substr({column}, 1, 3)) = 'FFD8FF' OR hex(substr({column}, 1, 4)) = '89504E47')")[0][0]
        return found


class PostgresGalleries:
    name = "postgresql"
    default_index = "pgvector"

    def __init__(self, server) -> None:
        self.server = server
        self._urls: dict[Path, str] = {}

    def url_for(self, home: Path) -> str:
        """The database of this gallery folder, created (empty, schema upgraded) the first time it is asked for."""
        key = Path(home).resolve()
        if key not in self._urls:
            self._urls[key] = self.server.new_database()
        return self._urls[key]

    def copy(self, source: Path, target: Path) -> None:
        shutil.copytree(source, target)
        self._urls[Path(target).resolve()] = self.server.new_database(template=self.url_for(source))

    def sql(self, home: Path, statement: str, params: tuple = ()) -> list[tuple]:
        return self.server.sql(self.url_for(home), statement, params)

    def vector(self, vector: np.ndarray) -> str:
        return "[" + ",".join(map(repr, np.asarray(vector, np.float32).tolist())) + "]"

    def image_columns(self, home: Path) -> dict[str, int]:
        found = {}
        columns = self.sql(home, "SELECT table_name, column_name FROM information_schema.columns WHERE "
                                 "table_schema = 'public' AND data_type = 'bytea'")
        for table, column in columns:
            found[f"{table}.{column}"] = self.sql(
                home, f"SELECT COUNT(*) FROM {table} WHERE substring({column} from 1 for 3) = '\\xffd8ff'::bytea "
                      f"OR substring({column} from 1 for 4) = '\\x89504e47'::bytea")[0][0]
        assert "faces.crop_jpeg" in found  # the check looks where crops would be
        return found
