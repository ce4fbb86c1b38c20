"""Whether the tests run under CI (CI=true), where missing research data fails instead of skipping. A module of its
own, not conftest's: tests/gallery/ has a conftest.py too, and `from conftest import ...` could find either."""

from __future__ import annotations

import os


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"
