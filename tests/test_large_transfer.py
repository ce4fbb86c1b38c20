"""A gallery of 2,000 people exported from the app imports back through the app and through the REST API.

Before (#39): the web app and the REST API took an import of at most 15 MiB, while an export had no cap, so a
gallery exported from the app could not be imported back through it. The gallery here holds 2,000 real CelebA
faces (two aligned crops per person, as facerec stores them) with unit vectors of the shipped model, so its
export is ~25 MB; it is made with an import (re-embedding 4,000 crops would cost minutes, and the round trip, not
the vectors, is what is tested).
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from facerec.gallery import Gallery
from facerec.formats.archive import EMBEDDINGS, EXPORT_FORMAT, MANIFEST
from facerec.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
PEOPLE, PER_PERSON = 2_000, 2
PASSWORD = "transfer"


def archive_of_celeba(celeba112: Path, model_id: str, out: Path) -> Path:
    """An export of 2,000 CelebA identities, two crops each, with seeded unit vectors."""
    folders = [folder for folder in sorted(celeba112.iterdir()) if len(list(folder.glob("*.jpg"))) >= PER_PERSON]
    assert len(folders) >= PEOPLE
    records, crops = [], {}
    for number, folder in enumerate(folders[:PEOPLE]):
        for photo in sorted(folder.glob("*.jpg"))[:PER_PERSON]:
            data = photo.read_bytes()
            name = f"crops/{len(records)}.jpg"
            crops[name] = data
            records.append({"name": f"Person {number:04d}", "note": None, "model_id": model_id,
                            "photo_sha256": hashlib.sha256(data).hexdigest(), "box": [], "landmarks": [],
                            "crop": name})
    vectors = np.random.default_rng(0).normal(size=(len(records), 512)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    buffer = io.BytesIO()
    np.save(buffer, vectors)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in crops.items():
            archive.writestr(name, data)
        archive.writestr(EMBEDDINGS, buffer.getvalue())
        archive.writestr(MANIFEST, json.dumps({"format": EXPORT_FORMAT, "faces": records}))
    return out


def admin_key(home: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "admin", "--json",
                           "--home", str(home)], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                          check=True)
    return json.loads(done.stdout)["key"]


def test_an_export_of_2000_people_made_through_the_app_imports_back_through_it(tmp_path, celeba112):
    import httpx
    from gradio_client import Client, handle_file

    from app_server import running_app

    source = tmp_path / "source"
    with Gallery(Settings(home=source)) as gallery:
        counts = gallery.import_(archive_of_celeba(celeba112, gallery.services().maintenance.model_id, tmp_path / "made.zip"))
    assert counts["added"] == PEOPLE * PER_PERSON
    key = admin_key(source)
    with running_app(source, admin_password=PASSWORD) as app:
        exported, _message = Client(app.url, verbose=False).predict(True, PASSWORD, api_name="/export")
        through_ui = Path(exported)
        answer = httpx.get(f"{app.url}api/v1/gallery/export", headers={"X-API-Key": key}, timeout=300)
        assert answer.status_code == 200
        through_rest = tmp_path / "rest.zip"
        through_rest.write_bytes(answer.content)
    assert through_ui.stat().st_size > 15 << 20 and through_rest.stat().st_size > 15 << 20  # over the old cap

    for number, (archive, route) in enumerate(((through_ui, "rest"), (through_rest, "ui"))):
        home = tmp_path / f"copy{number}"
        Gallery(Settings(home=home)).close()
        key = admin_key(home)
        with running_app(home, admin_password=PASSWORD) as app:
            if route == "rest":
                with open(archive, "rb") as handle:
                    answer = httpx.post(f"{app.url}api/v1/gallery/import", headers={"X-API-Key": key},
                                        files={"archive": ("gallery.zip", handle, "application/zip")}, timeout=600)
                assert answer.status_code == 200, answer.text
                added = answer.json()["added"]
            else:
                _message, counts = Client(app.url, verbose=False).predict(handle_file(str(archive)), PASSWORD,
                                                                          api_name="/import")
                added = counts["added"]
        assert added == PEOPLE * PER_PERSON, route
        with Gallery(Settings(home=home)) as copy:
            assert copy.services().maintenance.stats()["identities"] == PEOPLE and copy.services().maintenance.stats()["faces"] == PEOPLE * PER_PERSON

