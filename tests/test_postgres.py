"""What is particular to the PostgreSQL backend, on a real PostgreSQL 18 + pgvector server (`tests/postgres_server.py`):
the schema made by `facerec db upgrade` (and a gallery refusing a database without it), writers queueing so the
journal is a commit-ordered change feed (and what goes wrong without that), pgvector's search using its HNSW index
with exact similarities, and the CLI on `--db` / FACEREC_DATABASE_URL. tests/gallery/ runs the whole
gallery API on this backend too; tests/test_replicas.py runs several replicas on one database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import create_engine, text

from facerec.errors import UnusableFile
from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings
from facerec.storage import Store, utcnow
from facerec.vectors.faiss import FaceIndex

REPO_ROOT = Path(__file__).resolve().parents[1]


def unit_vectors(count: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 512)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT, env={**os.environ, **(env or {})})


def bare_database(postgres) -> str:
    """A database with nothing in it (no extension, no tables)."""
    import psycopg

    name = f"bare_{time.monotonic_ns()}"
    with psycopg.connect(postgres.admin_uri, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return postgres.url(name)


# ----- the schema, by one command ------------------------------------------------------------------------------
def test_db_upgrade_makes_the_schema_and_a_gallery_refuses_a_database_without_it(postgres, tmp_path, lfw_photo):
    url = bare_database(postgres)
    with pytest.raises(UnusableFile, match="facerec db upgrade"):
        Gallery(Settings.from_env(home=tmp_path / "home", database_url=url))

    first = cli("db", "upgrade", "--db", url, "--json")
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)["done"]
    assert {"created the pgvector extension", "created table faces", "created table journal",
            "created table sightings", "created table api_keys", "created table strangers",
            "created table replaced_faces", "created table negative_faces", "created index ix_faces_projection_hnsw",
            "schema version none -> 9"} <= set(done)
    assert any(step.startswith("fitted the search projection on cohort ") for step in done), done
    again = cli("db", "upgrade", "--db", url)
    assert again.returncode == 0 and "the schema is up to date" in again.stdout
    assert postgres.sql(url, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                             "'faces'::regclass AND attname = 'embedding'") == [("halfvec(512)",)]

    # The CLI on that database: --db, or FACEREC_DATABASE_URL.
    home = tmp_path / "cli_home"
    enrolled = cli("enroll", str(lfw_photo("Abdullah_Gul", 1)), "--name", "Abdullah Gul", "--db", url,
                   "--home", str(home), "--json")
    assert enrolled.returncode == 0, enrolled.stderr
    found = cli("identify", str(lfw_photo("Abdullah_Gul", 2)), "--home", str(home), "--json",
                env={"FACEREC_DATABASE_URL": url})
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["name"] == "Abdullah Gul"
    stats = json.loads(cli("stats", "--db", url, "--home", str(home), "--json").stdout)
    assert stats["index"] == "pgvector" and stats["faces"] == 1 and stats["database"].startswith("postgresql")
    assert postgres.sql(url, "SELECT name FROM identities") == [("Abdullah Gul",)]
    assert not (home / "gallery.db").exists()  # nothing went to SQLite

    # A gallery made by the facerec before the sightings memory (schema 1): refused until upgraded, then kept.
    postgres.sql(url, "DROP TABLE sightings")
    postgres.sql(url, "DROP TABLE api_keys")
    postgres.sql(url, "DROP TABLE strangers")
    postgres.sql(url, "DROP TABLE replaced_faces")
    postgres.sql(url, "UPDATE settings SET value = '1' WHERE key = 'schema_version'")
    for table, column in (("faces", "origin"), ("faces", "learned_from"), ("faces", "learned_by"),
                          ("faces", "cohort_mean"), ("faces", "cohort_sd"),
                          ("sightings", "crop_jpeg"), ("sightings", "box"), ("sightings", "landmarks")):
        if table == "faces":  # (the sightings table goes whole)
            postgres.sql(url, f"ALTER TABLE {table} DROP COLUMN {column}")
    with pytest.raises(UnusableFile, match="schema version 1, this facerec needs 9"):
        Gallery(Settings.from_env(home=tmp_path / "home", database_url=url))
    upgraded = json.loads(cli("db", "upgrade", "--db", url, "--json").stdout)["done"]
    assert sorted(upgraded) == ["added column faces.cohort_mean", "added column faces.cohort_sd",
                                "added column faces.learned_by", "added column faces.learned_from",
                                "added column faces.origin", "created table api_keys", "created table replaced_faces",
                                "created table sightings", "created table strangers", "schema version 1 -> 9"]
    assert postgres.sql(url, "SELECT origin FROM faces") == [("enrolled",)]  # the faces from before: enrolled
    assert postgres.sql(url, "SELECT name FROM identities") == [("Abdullah Gul",)]
    found = json.loads(cli("identify", str(lfw_photo("Abdullah_Gul", 2)), "--db", url, "--home", str(home),
                           "--json").stdout)
    assert postgres.sql(url, "SELECT id FROM sightings") == [(found[0]["sighting_id"],)]

    postgres.sql(url, "UPDATE settings SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(UnusableFile, match="newer facerec"):
        Gallery(Settings.from_env(home=tmp_path / "home", database_url=url))
    refused = cli("list", "--db", url, "--home", str(home))
    assert refused.returncode == 1 and refused.stderr.count("error:") == 1 and "newer facerec" in refused.stderr


def test_db_upgrade_looks_only_at_facerecs_own_schema(postgres, tmp_path, lfw_photo):
    """Another schema of the same database holds tables named like facerec's, with every column: the upgrade of a
    schema-3 gallery still adds the columns facerec's own tables lack (#48 row 12: it reported success with three
    columns missing, and every enroll then failed)."""
    url = bare_database(postgres)
    assert cli("db", "upgrade", "--db", url).returncode == 0
    postgres.sql(url, "CREATE SCHEMA elsewhere")
    postgres.sql(url, "CREATE TABLE elsewhere.faces (id integer, origin text, learned_from integer, learned_by text, "
                      "cohort_mean float, cohort_sd float)")
    postgres.sql(url, "CREATE TABLE elsewhere.sightings (id integer, crop_jpeg bytea, box json, landmarks json, "
                      "score float)")
    for column in ("origin", "learned_from", "learned_by", "cohort_mean", "cohort_sd"):
        postgres.sql(url, f"ALTER TABLE public.faces DROP COLUMN {column}")
    postgres.sql(url, "UPDATE settings SET value = '3' WHERE key = 'schema_version'")
    upgraded = json.loads(cli("db", "upgrade", "--db", url, "--json").stdout)["done"]
    assert {"added column faces.origin", "added column faces.learned_from", "added column faces.learned_by",
            "added column faces.cohort_mean", "added column faces.cohort_sd", "schema version 3 -> 9"} <= set(upgraded)
    with Gallery(Settings.from_env(home=tmp_path / "home", database_url=url)) as gallery:
        assert gallery.enroll(lfw_photo("Abdullah_Gul", 1), "Abdullah Gul").photos == 1  # enroll works


def test_a_schema_7_gallery_upgrades_to_halfvec_and_the_projected_index_and_finds_the_same_person(
        postgres, tmp_path, lfw_photo):
    """Schema 7 kept `vector(512)` embeddings under an HNSW index over the whole vector: `facerec db upgrade`
    turns them into `halfvec(512)`, drops that index and builds the projected one; a model change refits it."""
    url = postgres.new_database()
    home = tmp_path / "home"
    with Gallery(Settings.from_env(home=home, database_url=url)) as gallery:
        gallery.enroll(lfw_photo("Abdullah_Gul", 1), "Abdullah Gul")
    for statement in ("DROP INDEX ix_faces_projection_hnsw", "DROP FUNCTION facerec_projection",
                      "DROP TABLE projection_directions", "DELETE FROM settings WHERE key = 'projection_fitted_for'",
                      "ALTER TABLE faces ALTER COLUMN embedding TYPE vector(512) USING embedding::vector(512)",
                      "CREATE INDEX ix_faces_embedding_hnsw ON faces USING hnsw (embedding vector_ip_ops)",
                      "UPDATE settings SET value = '7' WHERE key = 'schema_version'"):
        postgres.sql(url, statement)
    with pytest.raises(UnusableFile, match="schema version 7, this facerec needs 9"):
        Gallery(Settings.from_env(home=home, database_url=url))

    done = json.loads(cli("db", "upgrade", "--db", url, "--json").stdout)["done"]
    assert done[:1] == ["faces.embedding vector(512) -> halfvec(512)"] and done[-2:] == [
        "created index ix_faces_projection_hnsw", "schema version 7 -> 9"], done
    assert postgres.sql(url, "SELECT indexname FROM pg_indexes WHERE indexname IN ('ix_faces_projection_hnsw', "
                             "'ix_faces_embedding_hnsw')") == [("ix_faces_projection_hnsw",)]
    found = json.loads(cli("identify", str(lfw_photo("Abdullah_Gul", 2)), "--db", url, "--home", str(home),
                           "--json").stdout)
    assert found[0]["name"] == "Abdullah Gul"

    # Directions fitted for another model's cohort are fitted again, the index rebuilt over them.
    postgres.sql(url, "UPDATE settings SET value = 'another:k10' WHERE key = 'projection_fitted_for'")
    refitted = json.loads(cli("db", "upgrade", "--db", url, "--json").stdout)["done"]
    assert len(refitted) == 2 and refitted[0].startswith("fitted the search projection on cohort ")
    assert refitted[1] == "created index ix_faces_projection_hnsw"
    assert postgres.sql(url, "SELECT count(*) FROM projection_directions") == [(128,)]


def test_a_password_never_shows_in_stats(postgres, tmp_path):
    import psycopg

    with psycopg.connect(postgres.admin_uri, autocommit=True) as connection:
        connection.execute("CREATE ROLE gallery_owner LOGIN PASSWORD 'not-for-your-eyes' SUPERUSER")
    url = postgres.new_database().replace("postgres:@", "gallery_owner:not-for-your-eyes@")
    with Gallery(Settings.from_env(home=tmp_path / "home", database_url=url)) as gallery:
        stats = gallery.services().maintenance.stats()
    assert "not-for-your-eyes" not in json.dumps(stats) and "gallery_owner:***@" in stats["database"]


# ----- the journal is a commit-ordered change feed -------------------------------------------------------------
def _one_face(store: Store, session, name: str, vector: np.ndarray) -> int:
    identity = store.people.create(session, [{"name": name}], utcnow())[name]
    (face_id,) = store.faces.add_many(session, [{"identity_id": identity, "embedding": vector, "model_id": "m",
                                            "photo_sha256": name, "box": [], "landmarks": [], "crop_jpeg": None}],
                                 utcnow())
    return face_id


def test_writers_queue_so_journal_order_is_commit_order(postgres):
    url = postgres.new_database()
    first, second, reader = Store(url), Store(url), Store(url)
    follower = FaceIndex("flat")  # a replica's local copy, following the journal
    vectors = unit_vectors(2, seed=1)
    second_done = threading.Event()
    try:
        with first.transaction() as session:
            early = _one_face(first, session, "early writer", vectors[0])  # holds the write lock from here

            def second_writer() -> None:
                with second.transaction() as other:
                    _one_face(second, other, "late writer", vectors[1])
                second_done.set()

            thread = threading.Thread(target=second_writer, daemon=True)
            thread.start()
            assert not second_done.wait(1.0), "a second writer committed while the first held the lock"
            follower.sync(reader)
            assert len(follower) == 0  # nothing committed yet
        thread.join(timeout=30)
        assert second_done.is_set()
        journal = reader.journal.since(0)
        assert [face for _seq, _op, face in journal] == [early, early + 1]  # sequence order == commit order
        follower.sync(reader)
        assert sorted(follower.reconstruct_ids().tolist()) == [early, early + 1]
    finally:
        for store in (first, second, reader):
            store.dispose()


def test_without_the_lock_a_follower_would_miss_a_commit(postgres):
    """The bug the lock prevents, reproduced on the server: PostgreSQL draws a sequence number at insert time, so
    a transaction that drew seq 1 can commit after one that drew seq 2; a follower that has read up to 2 then
    never applies 1 (and delete + add would keep the counts equal, so nothing would notice)."""
    url = postgres.new_database()
    unlocked = create_engine(url)  # a writer that does not queue, as a plain SQLAlchemy engine would
    reader = Store(url)
    try:
        slow, fast = unlocked.connect(), unlocked.connect()
        slow.execute(text("INSERT INTO journal (op, face_id) VALUES ('add', 1)"))  # seq 1, not committed yet
        fast.execute(text("INSERT INTO journal (op, face_id) VALUES ('add', 2)"))  # seq 2
        fast.commit()
        follower_at = reader.journal.head()
        assert follower_at == 2
        slow.commit()
        assert reader.journal.since(follower_at) == []  # seq 1 is committed now, behind the follower: missed
        assert [seq for seq, _op, _face in reader.journal.since(0)] == [1, 2]
        slow.close()
        fast.close()
    finally:
        unlocked.dispose()
        reader.dispose()


# ----- pgvector's search -------------------------------------------------------------------------------------
def test_pgvector_search_uses_the_hnsw_index_and_returns_exact_similarities(postgres, tmp_path):
    from facerec.storage.backends.projection import VECTOR_INDEX, vector_index_ddl
    from facerec.vectors.pgvector import search_sql

    url = postgres.new_database()
    count = 5000
    vectors = unit_vectors(count, seed=2)
    with Gallery(Settings.from_env(home=tmp_path / "home", database_url=url, store_crops=False)) as gallery:
        with parts_of(gallery).store.write_engine.begin() as connection:  # a bulk load: drop the index, load, build it
            connection.exec_driver_sql(f"DROP INDEX {VECTOR_INDEX}")
        face_ids = np.array(parts_of(gallery).enrollment.add_embeddings([{"name": f"person {i}", "embedding": v}
                                                    for i, v in enumerate(vectors)]))
        with parts_of(gallery).store.write_engine.begin() as connection:
            connection.exec_driver_sql(vector_index_ddl())
            connection.exec_driver_sql("ANALYZE faces")
        index = parts_of(gallery).index
        assert index.kind == "pgvector" and len(index) == count
        with parts_of(gallery).store.read_engine.connect() as connection:
            plan = " ".join(row[0] for row in connection.exec_driver_sql(
                "EXPLAIN " + search_sql(5, candidates=20), {"query": vectors[0]}))
        assert f"Index Scan using {VECTOR_INDEX}" in plan, plan[:300]

        rng = np.random.default_rng(3)
        queries = vectors[rng.choice(count, 50, replace=False)] + 0.02 * rng.standard_normal((50, 512))
        queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
        similarities, found = index.search(queries, 5)
        stored = vectors.astype(np.float16).astype(np.float64)  # halfvec(512): what the table keeps
        exact = queries.astype(np.float64) @ stored.T
        assert np.abs(exact - queries.astype(np.float64) @ vectors.astype(np.float64).T).max() < 1e-3
        assert np.mean(found[:, 0] == face_ids[np.argmax(exact, axis=1)]) >= 0.98
        rows = {int(f): r for r, f in enumerate(face_ids)}
        for q, (sims, ids) in enumerate(zip(similarities, found)):
            assert list(sims) == sorted(sims, reverse=True)
            np.testing.assert_allclose(sims, [exact[q, rows[int(f)]] for f in ids], atol=1e-5)  # exact scores

        # More than an index scan can return (pgvector's ef_search stops at 1,000): the exact scan.
        similarities, found = index.search(queries[:1], 1200)
        assert found.shape == (1, 1200)
        np.testing.assert_allclose(similarities[0], np.sort(exact[0])[::-1][:1200], atol=1e-5)

        gallery.delete("person 0")
        assert len(parts_of(gallery).index) == count - 1 and face_ids[0] not in parts_of(gallery).index.search(vectors[:1], 5)[1]


def test_a_second_gallery_counts_the_first_ones_writes(postgres, tmp_path):
    """pgvector holds no copy; each replica's face count (which sizes the threshold) follows the journal."""
    url = postgres.new_database()
    settings = Settings.from_env(home=tmp_path / "home", database_url=url, store_crops=False)
    vectors = unit_vectors(30, seed=4)
    with Gallery(settings) as writer, Gallery(settings, pipeline=parts_of(writer).pipeline) as reader:
        parts_of(writer).enrollment.add_embeddings([{"name": f"p{i}", "embedding": v} for i, v in enumerate(vectors[:20])])
        writer.delete("p3")
        parts_of(writer).enrollment.add_embeddings([{"name": "p1", "embedding": vectors[20]}])  # a second face of p1
        assert reader.services().thresholds.in_force().comparisons == len(parts_of(reader).index) == 20 == parts_of(writer).store.counts()[1]
        assert [c.name for c in parts_of(reader).searching.search(vectors[20][None], 1)[0]] == ["p1"]


def test_api_keys_never_change_the_schema_of_a_postgresql_gallery(postgres, tmp_path):
    """A replica opens the database as a role that may not change the schema: the keys' table comes from
    `facerec db upgrade` like every other table, and using keys issues no DDL (#29 review: `create_all` ran at
    run time)."""
    from sqlalchemy import event

    from facerec.access.api_keys import ApiKeys
    from facerec.storage import Store

    url = postgres.new_database()
    store = Store(url)
    statements: list[str] = []
    event.listen(store.write_engine, "before_cursor_execute",
                 lambda _c, _cursor, statement, *_rest: statements.append(statement))
    try:
        keys = ApiKeys(store)
        _record, key = keys.create("read", "replica test")
        assert keys.authenticate(key) is not None and len(keys.list()) == 1
    finally:
        store.dispose()
    assert statements and not [s for s in statements if s.lstrip().upper().startswith(("CREATE", "ALTER", "DROP"))]


def test_identify_does_not_wait_for_the_gallerys_write_lock(postgres, tmp_path, lfw_photo):
    """Identify is a read: the sighting it keeps is written under its own lock, so it answers while another
    replica's enrollment or a reindex holds the gallery's write lock (#29 review: it queued behind them)."""
    import threading

    import psycopg
    from postgres_server import libpq_uri

    from facerec.storage.backends.postgresql import WRITE_LOCK

    url = postgres.new_database()
    with Gallery(Settings.from_env(home=tmp_path / "home", database_url=url)) as gallery:
        gallery.enroll(lfw_photo("Abdullah_Gul", 1), "Abdullah Gul")
        answers = []
        with psycopg.connect(libpq_uri(url), autocommit=True) as holder:
            holder.execute(f"SELECT pg_advisory_lock({WRITE_LOCK})")  # as a long write elsewhere would
            worker = threading.Thread(target=lambda: answers.extend(gallery.identify(lfw_photo("Abdullah_Gul", 2))))
            worker.start()
            worker.join(timeout=60)
            finished_while_held = not worker.is_alive()
            holder.execute(f"SELECT pg_advisory_unlock({WRITE_LOCK})")
        worker.join(timeout=60)
    assert finished_while_held, "identify waited for the gallery's write lock"
    assert [m.name for m in answers] == ["Abdullah Gul"] and answers[0].sighting_id is not None
    assert postgres.sql(url, "SELECT COUNT(*) FROM sightings") == [(1,)]


def test_the_index_and_shared_buffers_are_read_and_a_server_too_small_for_the_index_is_said(postgres, tmp_path):
    """#52: with PostgreSQL's default shared_buffers every search at a million faces copied the graph's pages in
    from the operating system's cache (benchmarks/pgvector_choices.py: the same index several times slower). The
    gallery reads both sizes from the server, and tells the operator (the CLI, the terminal that started the app;
    never the page) when the index outgrows them."""
    import json as json_module

    from facerec.words.engines import index_outgrows_buffers

    url = postgres.new_database()
    with Gallery(Settings.from_env(home=tmp_path / "home", database_url=url, store_crops=False)) as gallery:
        maintenance = gallery.services().maintenance
        empty = maintenance.stats()["index_memory"]
        parts_of(gallery).enrollment.add_embeddings([{"name": f"p{i}", "embedding": v}
                                                     for i, v in enumerate(unit_vectors(2000, seed=5))])
        grown = maintenance.stats()["index_memory"]
        assert grown["index_bytes"] > empty["index_bytes"] > 0
        assert grown["shared_buffers_bytes"] == 128 * 1024 ** 2  # the test server runs PostgreSQL's default
        assert maintenance.server_warnings() == []  # a small index fits
    measured = json_module.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "results" /
                                  "pgvector_choices.json").read_text())
    shipped = next(row for row in measured["rows"] if row["variant"] == "shipped")  # a million faces' index
    warning = index_outgrows_buffers({"index_bytes": shipped["index_bytes"], "shared_buffers_bytes": 128 * 1024 ** 2})
    assert warning.startswith("PostgreSQL's shared_buffers (128 MB) is smaller than the faces' search index (2.5 GB)")
    assert index_outgrows_buffers({"index_bytes": shipped["index_bytes"], "shared_buffers_bytes": 3 * 1024 ** 3}) is None
