"""The gallery's health figures on both backends: undefined with one photo per person, sampled and said so when large.

The galleries and helpers are gallery_world.py's (every test runs on SQLite and on PostgreSQL)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import gallery_world as world
import numpy as np
import pytest
from gallery_world import PEOPLE, display

from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.words.health import health_in_words


# ----- health ---------------------------------------------------------------------------------------------
def test_health_is_undefined_with_one_photo_per_person_then_defined(gallery, lfw_photo) -> None:
    report = gallery.health()
    assert report.identities == len(PEOPLE) and report.faces == len(PEOPLE)
    assert math.isnan(report.closest_is_positive_accuracy)
    reading = health_in_words(report)["readings"]["closest_is_positive_accuracy"]
    assert reading.startswith("Undefined") and "two or more photos" in reading
    assert report.to_dict()["closest_is_positive_accuracy"] is None
    json.dumps(report.to_dict())
    # Which index serves (#52 item 3): the embedded default searches exactly at this size; pgvector is a graph.
    served, said = report.search_index, health_in_words(report)["readings"]["search_index"]
    if world.BACKEND.default_index == "pgvector" and not world.LOCAL_INDEX:
        assert served["engine"] == "pgvector" and served["index"] == "approximate" and said.startswith(
            "Search: approximate (pgvector on the PostgreSQL server")
    else:
        assert served["index"] == "exact" and served["faces"] == len(PEOPLE) and not served["building"]
        assert said.startswith(f"Search: exact (FAISS in this process): every query is compared with all "
                               f"{len(PEOPLE)} faces.")

    gallery.add_photo(display(PEOPLE[0]), lfw_photo(PEOPLE[0], 2))
    report = gallery.health()
    assert not math.isnan(report.closest_is_positive_accuracy)
    assert report.closest_is_positive_accuracy == 1.0  # each Alan Ball photo's nearest face is the other one
    assert "Undefined" not in health_in_words(report)["readings"]["closest_is_positive_accuracy"]
    assert "100.0%" in health_in_words(report)["readings"]["closest_is_positive_accuracy"]
    assert report.to_dict()["closest_is_positive_accuracy"] == 1.0


def add_people(gallery: Gallery, people: int, twins_every: int, seed: int = 5) -> int:
    """Random people with two photos each (about 0.75 cosine apart), plus a "twin of" person holding an exact copy
    of the first photo of every `twins_every`-th person; returns the number of twins."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((people, 512)).astype(np.float32)
    faces = np.repeat(centres, 2, axis=0) + 0.7 * rng.standard_normal((2 * people, 512)).astype(np.float32)
    entries = [{"name": f"person {i // 2:04d}", "embedding": v} for i, v in enumerate(faces)]
    entries += [{"name": f"twin of person {i:04d}", "embedding": faces[2 * i]} for i in range(0, people, twins_every)]
    parts_of(gallery).enrollment.add_embeddings(entries)
    return len(entries) - 2 * people


def test_health_of_a_large_gallery_is_sampled_and_says_so(empty_gallery, monkeypatch) -> None:
    """Above EXACT_LIMIT faces the report samples whole people for the metrics and searches the first of them
    among all faces: twins (a second name with an identical face) of searched people are found as suspected
    duplicates although the twins themselves were not sampled. (Smaller limits than the real ones, which
    `benchmarks/health_scale.py` times at 100,000 faces, keep this quick; the real ones are in the next test.)"""
    from facerec.gallery.health import report as health

    monkeypatch.setattr(health, "EXACT_LIMIT", 200)
    monkeypatch.setattr(health, "SAMPLE_FACES", 100)
    monkeypatch.setattr(health, "SEARCHED_FACES", 40)
    people = 150
    twins = add_people(empty_gallery, people, twins_every=3)
    report = empty_gallery.health()
    total = 2 * people + twins
    assert report.faces == total and report.identities == people + twins  # the gallery's own counts
    sample = report.sample
    assert sample["of_faces"] == total and 100 <= sample["faces"] <= 102 and 40 <= sample["searched_faces"] <= 42
    assert sample["seed"] == 0 and sample["exact_up_to_faces"] == 200
    assert report.notes[0].startswith(f"Sampled: the metrics are computed over {sample['faces']:,} faces")
    assert f"with all {total:,}" in report.notes[0]
    assert 0.6 < report.closest_is_positive_accuracy < 1  # defined: two photos each (a twin copy is nearer)
    duplicates = report.suspected_duplicates
    assert duplicates and all(p["similarity"] >= report.threshold for p in duplicates)
    assert all(p["b"] == "twin of " + p["a"] or p["a"] == "twin of " + p["b"] for p in duplicates)
    assert report.to_dict()["sample"] == sample
    json.dumps(report.to_dict())
    again = empty_gallery.health()
    assert again.sample == sample and again.suspected_duplicates == duplicates  # seeded: the same report


def test_health_command_says_when_it_sampled(empty_gallery) -> None:
    from facerec.gallery.health.report import EXACT_LIMIT

    if world.BACKEND.name != "sqlite":
        pytest.skip("the CLI is one shell over the API on both backends; the previous test samples on both")
    add_people(empty_gallery, EXACT_LIMIT // 2 + 50, twins_every=50)
    home = empty_gallery.services().settings.home
    empty_gallery.close()
    printed = subprocess.run([sys.executable, "-m", "facerec.cli", "health", "--home", str(home)],
                             capture_output=True, text=True, timeout=300)
    assert printed.returncode == 0, printed.stderr
    assert "Sampled: the metrics are computed over" in printed.stdout and "suspected duplicates: " in printed.stdout


