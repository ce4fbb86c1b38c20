"""The strangers memory at 20,000 kept faces: the admin's suggestions list and an anonymous identify while the
kept faces are grouped.

    nice -n 5 python benchmarks/strangers_memory.py --out benchmarks/results/strangers_memory.json   # ~3 min

The real app (`app.py`, suggestions on with a memory of 20,000, a gallery of 20 LFW people, an admin password)
starts on a database holding 20,000 kept, ungrouped faces of strangers (planted: `tests/planted_strangers.py`,
2,600 people seen 4 times among 9,600 seen once, each with a real aligned crop), as anonymous identifies would
leave them. Then, together, until the first grouping of them is published and for `--after` seconds more:
- an admin lists the suggestions over the REST API (`GET /api/v1/suggestions`, a page of 20) every half second;
- an anonymous page session identifies photos of people not enrolled through the web app's API, one at a time
  (each keeps its unknown face: a write to the same database).
The result: p50/p99/max of both while the grouping ran and after, how long the grouping took, the size of a
list's answer (REST, and the page's `/suggestions` answer), the app's peak resident memory, and the bytes the
strangers table holds per face. Before #48 row 5, the list grouped inside the write transaction: 23.7 s of CPU
for the list, an identify held 19.6 s, and the page's answer was 17.5 MB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.faces.choice import largest_face_index  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "strangers"
MEMORY = 20_000
PEOPLE, PER_PERSON = 2_600, 4


def figures(seconds: list[float]) -> dict:
    if not seconds:
        return {"count": 0}
    values = np.array(seconds)
    return {"count": len(values), "p50_s": float(np.percentile(values, 50)),
            "p99_s": float(np.percentile(values, 99)), "max_s": float(values.max())}


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def prepared_gallery(home: Path, people: list[list[Path]], strangers: list[Path]) -> dict:
    """20 people enrolled, one stranger identified (for a real kept crop), then the planted faces."""
    from planted_strangers import clustered, plant
    from sqlalchemy import func, select

    from facerec.storage.schema import Stranger

    settings = Settings(home=home, suggestions=True, suggestions_memory=MEMORY)
    with Gallery(settings) as gallery:
        for photos in people:
            photo, faces = gallery.services().photos.detect(photos[0])
            gallery.enroll(photo, photos[0].parent.name.replace("_", " "), face_index=largest_face_index(faces),
                           allow_lookalike=True, allow_low_quality=True)
        gallery.identify(strangers[0])
        parts_of(gallery).strangers.count()  # waits until the face identify queued is kept
        with parts_of(gallery).store.session() as session:
            crop = session.scalars(select(Stranger.crop_jpeg)).first()
        embeddings, photos = clustered(PEOPLE, PER_PERSON, MEMORY - PEOPLE * PER_PERSON - 1)
        plant(parts_of(gallery).store, gallery.services().maintenance.model_id, embeddings, photos, crop)
        with parts_of(gallery).store.session() as session:
            count, stored = session.execute(select(func.count(Stranger.id), func.sum(
                func.length(Stranger.embedding) + func.length(Stranger.crop_jpeg) + func.length(Stranger.box)
                + func.length(Stranger.landmarks) + func.length(Stranger.photo_sha256)))).one()
    return {"kept_faces": int(count), "stored_bytes_per_face": float(stored) / count, "crop_bytes": len(crop)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--after", type=float, default=20.0, help="seconds measured after the grouping is published")
    parser.add_argument("--limit-s", type=float, default=600.0, help="give up waiting for the grouping after this")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import httpx
    from app_server import running_app
    from gradio_client import Client, handle_file

    identities = [photos for photos in list_identities(args.data / "lfw").values() if len(photos) >= 2]
    people, strangers = identities[:20], [photos[0] for photos in identities[20:80]]
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        memory = prepared_gallery(home, people, strangers)
        key = json.loads(subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "admin",
                                         "--json", "--home", str(home)], capture_output=True, text=True, check=True,
                                        cwd=ROOT).stdout)["key"]
        environment = {"FACEREC_SUGGESTIONS": "on", "FACEREC_SUGGESTIONS_MEMORY": str(MEMORY)}
        with running_app(home, admin_password=PASSWORD, extra_env=environment) as app, \
                httpx.Client(base_url=f"{app.url}api/v1", headers={"X-API-Key": key}, timeout=600) as admin:
            page = Client(app.url, verbose=False, download_files=False)
            alone = []
            for photo in strangers[1:11]:  # before anything is grouped (no list asked yet)
                started = time.perf_counter()
                page.predict(handle_file(str(photo)), None, 3, "", api_name="/identify")
                alone.append(time.perf_counter() - started)
            state = {"grouping": True, "stop": False}
            identifies: dict[str, list[float]] = {"during": [], "after": []}

            def identify_loop() -> None:
                turn = 0
                while not state["stop"]:
                    photo = strangers[11 + turn % (len(strangers) - 11)]
                    turn += 1
                    phase = "during" if state["grouping"] else "after"  # started while grouping: "during"
                    started = time.perf_counter()
                    page.predict(handle_file(str(photo)), None, 3, "", api_name="/identify")
                    identifies[phase].append(time.perf_counter() - started)

            lists: dict[str, list[float]] = {"during": [], "after": []}
            answer_bytes, grouping_started = 0, time.perf_counter()
            worker = threading.Thread(target=identify_loop)
            worker.start()
            grouped_at, deadline = None, grouping_started + args.limit_s
            try:
                while time.perf_counter() < deadline:
                    phase = "during" if state["grouping"] else "after"
                    started = time.perf_counter()
                    answer = admin.get("/suggestions", params={"limit": 20})
                    lists[phase].append(time.perf_counter() - started)
                    answer.raise_for_status()
                    listed = answer.json()
                    answer_bytes = max(answer_bytes, len(answer.content))
                    if state["grouping"] and not listed["refreshing"] and listed["grouped_at"]:
                        state["grouping"], grouped_at = False, time.perf_counter()
                        deadline = grouped_at + args.after
                    time.sleep(0.5)
            finally:
                state["stop"] = True
                worker.join(timeout=600)
            page_answer = page.predict(1, PASSWORD, api_name="/suggestions")
            total = listed["total"]
            peak = peak_rss_mb(app.process.pid)
    write_result(args.out, {
        "question": "does an anonymous identify keep answering, and the admin's list stay small and quick, while "
                    "20,000 kept faces of strangers are grouped?",
        "memory": {**memory, "capacity": MEMORY, "planted_people": PEOPLE, "faces_per_person": PER_PERSON},
        "grouping_seconds": None if grouped_at is None else grouped_at - grouping_started,
        "suggestions": total,
        "admin_list": {"route": "REST GET /api/v1/suggestions?limit=20, admin key, every 0.5 s",
                       "during": figures(lists["during"]), "after": figures(lists["after"]),
                       "answer_bytes": answer_bytes,
                       "page_answer_bytes": len(json.dumps(page_answer, default=str))},
        "anonymous_identify": {"route": "the page's /identify (Gradio queue), no password, a photo of someone not "
                                        "enrolled (its face is kept: a write)",
                               "alone": figures(alone), "during": figures(identifies["during"]),
                               "after": figures(identifies["after"])},
        "app_memory": {"peak_rss_mb": peak},
        "before": {"admin_list_cpu_s": 23.7, "identify_held_s": 19.6, "page_answer_mb": 17.5,
                   "source": "issue #48 row 5, main @5480af4"},
    }, model_path=Settings().model_path, threads=None)
    print(json.dumps(json.loads(Path(args.out).read_text()), indent=1)[:3000])


if __name__ == "__main__":
    main()
