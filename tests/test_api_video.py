"""#50: `POST /api/v1/videos/identify` end to end: `python app.py` in a subprocess, real HTTP, videos built at test
time from shipped portraits (`tests/video_clips.py`).

One JSON answer per video with one entry per track (a face followed across frames), each track one sighting an
admin confirms as a photo's face (learning the track's best face); the same keys as photo identify; the upload
leaves the server with the answer; a file that is no video, a video over the limits and a body over the video
limit are one-line refusals.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app_server import REPO_ROOT, running_app
from tests.video_clips import Path2D, clip

# Shipped public-domain portraits (tests/faces): Obama's photo 1 enrolled, his photos 2 and 3 in clips (framed as
# LFW frames a face: `portrait_square`); Grace Hopper is never enrolled.
ALAN, STRANGER = "Barack_Obama", "Grace_Hopper"
ROUTE = "/videos/identify"


def create_key(home: Path, role: str) -> str:
    done = subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", role, "--name",
                           f"video {role}", "--json", "--home", str(home)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["key"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("api-video") / "home") as app:
        yield app


@pytest.fixture(scope="module")
def keys(server) -> dict[str, str]:
    return {"admin": create_key(server.home, "admin"), "read": create_key(server.home, "read")}


@pytest.fixture(scope="module")
def api(server, keys, portrait):
    """A client on /api/v1, with Barack Obama enrolled from one photo."""
    with httpx.Client(base_url=f"{server.url}api/v1", timeout=300, trust_env=False) as client:
        enrolled = client.post("/people", files={"photo": ("a.jpg", portrait(ALAN, 1).read_bytes(), "image/jpeg")},
                               data={"name": "Barack Obama", "allow_low_quality": "true"},
                               headers={"X-API-Key": keys["admin"]})
        assert enrolled.status_code == 201, enrolled.text
        yield client


def video(path: Path) -> dict:
    return {"video": (path.name, path.read_bytes(), "video/mp4")}


def refused(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["code"] == code, body
    assert "\n" not in response.text and "Traceback" not in response.text
    return body["error"]


def leftovers(server) -> list[Path]:
    """Uploaded videos still on the server (the API writes them to its scratch folder, GRADIO_TEMP_DIR here)."""
    return list(server.home.with_name(server.home.name + "-gradio-tmp").glob("api-video-*"))


def test_a_video_is_one_answer_with_a_track_per_face_each_one_sighting(server, api, keys, portrait_square, tmp_path):
    walk = clip(tmp_path / "walk.mp4", [Path2D(portrait_square(ALAN, 2), (0.15, 0.5), (0.55, 0.5), frames=(0, 30)),
                                        Path2D(portrait_square(STRANGER, 1), (0.85, 0.5), (0.75, 0.5),
                                               frames=(40, 74))],
                frames=75)
    response = api.post(ROUTE, files=video(walk), headers={"X-API-Key": keys["read"]})
    assert response.status_code == 200, response.text
    answer = response.json()
    tracks = answer["tracks"]
    # (a one-frame track of something face-like in a photo's background may come too: unknown, as it should)
    assert [t["name"] for t in tracks if t["known"]] == ["Barack Obama"]
    alan = next(t for t in tracks if t["known"])
    stranger = max((t for t in tracks if not t["known"]), key=lambda t: t["frames_seen"])
    assert alan["first_frame"] <= 3 and 27 <= alan["last_frame"] <= 30 and alan["frames_seen"] >= 8
    assert stranger["first_frame"] >= 39 and stranger["last_time"] == pytest.approx(stranger["last_frame"] / 25)
    assert alan["score"] >= answer["score_threshold"] > stranger["score"]
    assert answer["video"]["frames"] == 75 and answer["counts"]["frames"] == 75
    assert "1 person named: Barack Obama" in answer["summary"]
    assert "sighting_id" in alan and "sighting_id" not in stranger  # a track is one sighting, not one per frame
    assert "label_token" not in stranger  # a read key's answer carries no face
    assert not leftovers(server)  # the upload left with the answer
    # The sighting is confirmed as a photo's is (an admin key), which learns the track's best face.
    confirmed = api.post(f"/sightings/{alan['sighting_id']}/confirm", headers={"X-API-Key": keys["admin"]})
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["name"] == "Barack Obama"
    assert confirmed.json()["learning"]["learned_face_id"] is not None, confirmed.json()  # the track's face
    # The same keys as photo identify: none, or a wrong one, is refused before the body is read.
    refused(api.post(ROUTE, files=video(walk)), 401, "unauthorized")
    refused(api.post(ROUTE, files=video(walk), headers={"X-API-Key": "frk_" + "x" * 43}), 401, "unauthorized")


def test_an_admin_labels_or_denies_a_track_that_was_not_kept_by_its_token(api, keys, portrait_square, tmp_path):
    """#65 item 2: what the page's video rows do for a track that was not kept, over REST."""
    admin = {"X-API-Key": keys["admin"]}
    walk = clip(tmp_path / "stranger.mp4", [Path2D(portrait_square(STRANGER, 1), (0.3, 0.5), (0.6, 0.5),
                                                   frames=(0, 30))], frames=31)
    response = api.post(ROUTE, files=video(walk), headers=admin)
    assert response.status_code == 200, response.text
    stranger = max(response.json()["tracks"], key=lambda t: t["frames_seen"])
    assert not stranger["known"] and "sighting_id" not in stranger
    obama = api.get("/people", params={"search": "Obama"}, headers=admin).json()["people"][0]["id"]
    denied = api.post("/negatives", json={"label_token": stranger["label_token"], "person_id": obama}, headers=admin)
    assert denied.status_code == 201, denied.text
    assert api.delete(f"/negatives/{denied.json()['negative_id']}", headers=admin).status_code == 200
    labelled = api.post("/sightings?learn=false", json={"label_token": stranger["label_token"], "person_id": obama},
                        headers=admin)
    assert labelled.status_code == 201, labelled.text
    assert labelled.json()["source"] == "corrected" and labelled.json()["name"] == "Barack Obama"
    assert api.delete(f"/sightings/{labelled.json()['id']}", headers=admin).status_code == 200


def test_what_is_no_video_or_too_much_video_is_one_line(server, api, keys, portrait_square, tmp_path):
    read = {"X-API-Key": keys["read"]}
    photo = portrait_square(ALAN, 2)
    message = refused(api.post(ROUTE, files={"video": ("a.mp4", photo.read_bytes(), "video/mp4")}, headers=read),
                      422, "invalid_video")
    assert "a.mp4 is not an" in message
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(clip(tmp_path / "whole.mp4", [Path2D(photo, (0.5, 0.5), (0.5, 0.5))]).read_bytes()[:600])
    refused(api.post(ROUTE, files=video(broken), headers=read), 422, "invalid_video")
    # Over the default 9,000 frames (tiny frames: the container says so before anything is decoded).
    long = clip(tmp_path / "long.mp4", [], frames=9_001, size=(32, 32), fps=100)
    message = refused(api.post(ROUTE, files=video(long), headers=read), 413, "video_too_large")
    assert "9,000 frames" in message
    refused(api.post(ROUTE, files=video(long), data={"top_k": "0"}, headers=read), 422, "invalid_request")
    assert not leftovers(server)
    # A body announcing more than a video may be is refused by its length, before a byte of it is read.
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.putrequest("POST", "/api/v1" + ROUTE)
    connection.putheader("X-API-Key", keys["read"])
    connection.putheader("Content-Type", "multipart/form-data; boundary=x")
    connection.putheader("Content-Length", str(300 << 20))
    connection.endheaders()
    answer = connection.getresponse()
    assert answer.status == 413 and json.loads(answer.read())["code"] == "too_large"
    connection.close()


def test_the_video_answer_has_a_schema_in_the_openapi_document(api):
    """#65 item 4: the REST video answer had no schema; a client generated from the document knew nothing of it."""
    document = api.get("/openapi.json").json()
    answered = document["paths"]["/videos/identify"]["post"]["responses"]["200"]["content"]["application/json"]
    assert answered["schema"] == {"$ref": "#/components/schemas/VideoIdentified"}
    track = document["components"]["schemas"]["Track"]["properties"]
    assert {"name", "known", "score", "first_time", "last_time", "box", "candidates", "sighting_id"} <= set(track)
