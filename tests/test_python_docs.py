"""The Python API's documentation runs as written (issue #49, item 1): the README's example and docs/python.md's
session are taken out of the pages and run, from the repository's folder, in a fresh interpreter with none of the
FACEREC_ variables a reader's shell would not have; what they print is what they say. docs/python.md also names
every verb the API has (tests/test_public_api.py counts them)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from test_public_api import VERBS

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), flags=re.DOTALL)


def run(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACEREC_")}
    done = subprocess.run([sys.executable, "-"], input=code, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_readme_example_runs_and_names_the_person() -> None:
    (block,) = python_blocks("README.md")
    printed = run(block).splitlines()
    assert len(printed) == 1 and printed[0].startswith("Barack Obama cosine "), printed


def test_the_python_page_session_runs_and_answers_as_it_says() -> None:
    (block,) = python_blocks("docs/python.md")
    printed = run(block)
    for line in ("enrolled Barack Obama as id 1", "Barack Obama has 2 photos", "Biden's photo: unknown",
                 "same person", "['Barack Obama', 'Grace M. Hopper']", "2 people, 3 faces", "3 faces exported",
                 "{'added': 1, 'skipped': 2}", "UnknownIdentity: no enrolled person called 'Ada Lovelace'"):
        assert line in printed.splitlines(), (line, printed)
    assert "Obama's third photo: Barack Obama cosine " in printed


def test_the_python_page_names_every_verb() -> None:
    page = (ROOT / "docs" / "python.md").read_text()
    assert all(f"`{verb}(" in page or f"`Gallery.{verb}(" in page for verb in VERBS), VERBS
