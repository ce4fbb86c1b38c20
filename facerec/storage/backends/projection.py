"""The faces' search index on PostgreSQL: an HNSW graph over each embedding projected onto the model's principal
subspace, whose candidates are re-scored with the whole embedding in the same query.

Face embeddings concentrate: 128 of the 512 directions hold 99.95% of their energy (the shipped model's score
cohort against LFW's one-photo people), so a graph over the 128-d projection (`halfvec`) proposes the same
candidates as one over the whole vector while each hop reads a quarter of the bytes. At a million faces it is a
fifth of the index on disk and answers identify as exact search does (`benchmarks/pgvector_choices.py`).

The projection lives in the database, not in Python: the directions are rows of `projection_directions` and
`facerec_projection(embedding)` (an SQL function) projects onto them, so the index is an expression index on the
faces table. No write path computes anything: every face inserted, by any replica or tool, is indexed by the
server; a search projects its query with the same function. The directions are fitted on the model's score
cohort (its training side) by `facerec db upgrade`, which records which cohort they came from and fits them
again, rebuilding the index, when the gallery's model changes.

The function reads a table, so PostgreSQL cannot see that it is immutable; it is declared so, and only `install`
changes the table, always with the index rebuilt in the same transaction. It sets its own `search_path` because
PostgreSQL runs index builds, ANALYZE and VACUUM with a restricted one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DIMS = 128
VECTOR_INDEX = "ix_faces_projection_hnsw"
OLD_VECTOR_INDEX = "ix_faces_embedding_hnsw"  # schema 7: HNSW over the whole vector(512)
DIRECTIONS_TABLE = "projection_directions"
FUNCTION = "facerec_projection"
FITTED_FOR_KEY = "projection_fitted_for"  # the settings row naming the cohort the directions were fitted on
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64  # pgvector's defaults: at 1e6 they already answer as exact search does


@dataclass(frozen=True)
class Projection:
    """Directions [DIMS, 512] float32 (orthonormal rows) and what they were fitted on (a cohort id); fitted by
    `facerec.vectors.pgvector.projection`."""

    directions: np.ndarray
    fitted_for: str


def projected(expression: str) -> str:
    """SQL projecting a `halfvec(512)` expression; `projected("embedding")` is the indexed expression, which a
    search must order by verbatim for the planner to use the index."""
    return f"{FUNCTION}({expression})::halfvec({DIMS})"


def vector_index_ddl() -> str:
    """The faces' search index (also what a bulk load that dropped it builds again)."""
    return (f"CREATE INDEX {VECTOR_INDEX} ON faces USING hnsw (({projected('embedding')}) halfvec_ip_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})")


def fitted_for(connection) -> str | None:
    """The cohort id the installed directions were fitted on; None before `install`."""
    return connection.exec_driver_sql("SELECT value FROM settings WHERE key = %(key)s",
                                      {"key": FITTED_FOR_KEY}).scalar()


def install(connection, projection: Projection | None) -> list[str]:
    """Inside `upgrade`'s transaction: the directions, the function and the index, (re)fitted when `projection`
    comes from another cohort than the installed one. Returns what it did."""
    done = []
    installed = fitted_for(connection)
    if projection is None:
        if installed is None:
            raise ValueError("the search index needs the model's projection")
        return done
    if installed != projection.fitted_for:
        connection.exec_driver_sql(f"DROP INDEX IF EXISTS {VECTOR_INDEX}")
        connection.exec_driver_sql(f"CREATE TABLE IF NOT EXISTS {DIRECTIONS_TABLE} "
                                   f"(position integer PRIMARY KEY, direction halfvec(512) NOT NULL)")
        connection.exec_driver_sql(f"DELETE FROM {DIRECTIONS_TABLE}")
        # As text: the connection may predate the extension (created in this transaction), so no vector adapter
        connection.exec_driver_sql(f"INSERT INTO {DIRECTIONS_TABLE} (position, direction) "
                                   f"VALUES (%(position)s, CAST(%(direction)s AS halfvec(512)))",
                                   [{"position": position, "direction": _vector_text(direction)}
                                    for position, direction in enumerate(projection.directions)])
        _create_function(connection)
        connection.exec_driver_sql("INSERT INTO settings (key, value) VALUES (%(key)s, %(value)s) ON CONFLICT (key) "
                                   "DO UPDATE SET value = excluded.value",
                                   {"key": FITTED_FOR_KEY, "value": projection.fitted_for})
        done.append(f"fitted the search projection on cohort {projection.fitted_for}")
    if not connection.exec_driver_sql("SELECT 1 FROM pg_indexes WHERE indexname = %(name)s "
                                      "AND schemaname = current_schema()", {"name": VECTOR_INDEX}).first():
        connection.exec_driver_sql(vector_index_ddl())
        done.append(f"created index {VECTOR_INDEX}")
    return done


def _create_function(connection) -> None:
    schema, extension = connection.exec_driver_sql(
        "SELECT current_schema(), (SELECT extnamespace::regnamespace::text FROM pg_extension "
        "WHERE extname = 'vector')").one()
    path = ", ".join(dict.fromkeys((_identifier(schema), _identifier(extension))))
    connection.exec_driver_sql(
        f"CREATE OR REPLACE FUNCTION {FUNCTION}(embedding halfvec) RETURNS halfvec "
        f"LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = {path} AS $$ "
        f"SELECT array_agg(-(embedding <#> direction) ORDER BY position)::halfvec FROM {DIRECTIONS_TABLE} $$")


def _vector_text(vector: np.ndarray) -> str:
    return "[" + ",".join(format(float(x), ".9g") for x in np.asarray(vector, np.float32)) + "]"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
