"""The fixtures of the gallery tests in this folder: a module-scoped gallery per backend (SQLite, PostgreSQL), copied
for each test (tests/gallery/gallery_world.py)."""

from gallery_world import (  # noqa: F401
    backend,
    base,
    empty_gallery,
    gallery,
    home,
    on_backend,
    pipeline,
)
