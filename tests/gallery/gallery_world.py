"""The shared world of this folder's tests: the Gallery API end to end on real LFW photos and the shipped ONNX model,
on both backends: real SQLite files with real FAISS indexes, and a real PostgreSQL + pgvector server (`tests/gallery_backends.py`). Every test runs on both;
those marked `local_index` test the FAISS index saved in the gallery folder and use one on PostgreSQL too (a
replica-local copy following the PostgreSQL journal), instead of pgvector.

Photos used (all checked to hold exactly one face at the detector's default settings):
- PEOPLE: photo 1 is enrolled, photo 2 is the query; the two photos of each are ~0.90 cosine apart with the
  shipped model, well above the threshold the policy sets for a 3-face gallery (~0.6), so "the other photo is
  identified" is a real claim.
- STRANGERS: one-photo LFW people never enrolled; their best similarity to PEOPLE is below 0.45.

A module-scoped gallery with photo 1 of each PEOPLE is built once per backend and copied (folder, and database)
for every test that needs a populated gallery (cheap: no re-embedding), so each test works on its own gallery.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gallery_backends import PostgresGalleries, SQLiteGalleries

from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings

PEOPLE = ("Alan_Ball", "Art_Hoffmann", "Biljana_Plavsic")
STRANGERS = ("Andy_Griggs", "Andy_Rooney", "Andy_Warhol")
EXTRA_PERSON = "Antonio_Trillanes"  # two single-face photos, ~0.89 apart; enrolled only where a test needs it
BACKEND: SQLiteGalleries | PostgresGalleries = SQLiteGalleries()  # the one the running test uses (`on_backend`)
LOCAL_INDEX: dict = {}  # {"index_kind": "flat"} for a `local_index` test on PostgreSQL


def display(folder_name: str) -> str:
    return folder_name.replace("_", " ")


# ----- helpers ----------------------------------------------------------------------------------------------
def open_gallery(home: Path, pipeline=None, **overrides) -> Gallery:
    """A Gallery on `home` (and its database on the test's backend); sharing an already-loaded pipeline (same
    shipped model) saves model loading time."""
    settings = Settings.from_env(home=home, database_url=BACKEND.url_for(home), **{**LOCAL_INDEX, **overrides})
    return Gallery(settings, pipeline=pipeline)


def sql(home: Path, statement: str, params: tuple = ()) -> list[tuple]:
    """One statement on the gallery's database (`?` placeholders), committed."""
    return BACKEND.sql(home, statement, params)


def db_face_ids(home: Path) -> list[int]:
    return [row[0] for row in sql(home, "SELECT id FROM faces ORDER BY id")]


def journal_head(home: Path) -> int:
    return sql(home, "SELECT COALESCE(MAX(seq), 0) FROM journal")[0][0]


def assert_index_matches_db(gallery: Gallery) -> None:
    """The FAISS index holds exactly the database's faces, with the database's vectors."""
    parts_of(gallery).index.sync(parts_of(gallery).store)
    index_ids, index_vectors = parts_of(gallery).index.reconstruct_all()
    db_ids, db_vectors = parts_of(gallery).store.faces.embeddings()
    order = np.argsort(index_ids)
    assert index_ids[order].tolist() == db_ids.tolist()
    assert len(parts_of(gallery).index) == gallery.services().maintenance.stats()["faces"] == len(db_ids)
    if len(db_ids):  # float16 storage (index kinds "flat16", "hnsw") rounds each component by up to ~5e-4
        tolerance = 1e-3 if parts_of(gallery).index.kind in ("flat16", "hnsw") else 1e-5
        np.testing.assert_allclose(index_vectors[order], db_vectors, atol=tolerance)


def snapshot(gallery: Gallery) -> tuple:
    """Everything an operation that must change nothing could have changed."""
    return (parts_of(gallery).store.counts(), parts_of(gallery).store.journal.head(), [(p.name, p.photos) for p in gallery.people()],
            sorted(parts_of(gallery).index.reconstruct_ids().tolist()))


def embed_photo(gallery: Gallery, path: Path) -> np.ndarray:
    photo, faces = gallery.services().photos.detect(path)
    assert len(faces) == 1, f"{path.name}: expected one face, found {len(faces)}"
    return parts_of(gallery).pipeline.embed(photo, faces)[1][0]


# ----- fixtures ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request):
    return SQLiteGalleries() if request.param == "sqlite" else PostgresGalleries(request.getfixturevalue("postgres"))


@pytest.fixture(autouse=True)
def on_backend(backend, request):
    """Every test of this module runs on each backend; `local_index` tests keep a FAISS index on PostgreSQL too."""
    global BACKEND, LOCAL_INDEX
    BACKEND = backend
    LOCAL_INDEX = {"index_kind": "flat"} if (request.node.get_closest_marker("local_index")
                                             and backend.name == "postgresql") else {}
    yield
    BACKEND, LOCAL_INDEX = SQLiteGalleries(), {}


@pytest.fixture(scope="module")
def base(tmp_path_factory, lfw_photo, backend):
    """(home, pipeline): a closed gallery holding photo 1 of each PEOPLE, opened the way the app does."""
    home = tmp_path_factory.mktemp(f"base_gallery_{backend.name}")
    settings = Settings.from_env(home=home, database_url=backend.url_for(home))
    gallery = Gallery(settings)  # the shipped model, no injected pipeline
    for person in PEOPLE:
        result = gallery.enroll(lfw_photo(person, 1), display(person))
        assert result.name == display(person) and result.photos == 1 and not result.lookalikes
    gallery.close()
    if backend.name == "postgresql":  # and a saved FAISS index beside it, for the `local_index` tests
        Gallery(settings.with_(index_kind="flat"), pipeline=parts_of(gallery).pipeline).close()
    return home, parts_of(gallery).pipeline


@pytest.fixture
def pipeline(base):
    return base[1]


@pytest.fixture
def home(base, tmp_path) -> Path:
    """A private copy of the base gallery's folder."""
    target = tmp_path / "home"
    BACKEND.copy(base[0], target)
    return target


@pytest.fixture
def gallery(home, pipeline):
    opened = open_gallery(home, pipeline)
    yield opened
    opened.close()


@pytest.fixture
def empty_gallery(tmp_path, pipeline):
    opened = open_gallery(tmp_path / "empty_home", pipeline)
    yield opened
    opened.close()


