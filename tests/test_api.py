"""The REST API end to end: `python app.py` in a subprocess, real HTTP to 127.0.0.1, real LFW faces.

Covers every route of /api/v1 (and that the OpenAPI document lists exactly those), every error status with its
one-line message (the UI's own, for bad photos: compared through gradio_client on the same app), the keys (made by
the CLI while the app runs: off without one, 401 without or with a wrong or revoked key, 403 for a read key on every
write route, stored hashed), the upload limits, and the README's curl examples, run exactly as written.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from api_client import api, cli, delete, enroll, keys, people, photo, refused, server  # noqa: F401 - fixtures
from app_server import REPO_ROOT
from group_photos import group_photo
from poor_photos import poor_photo

POWELL, BLAIR, ANISTON, SERENA = "Colin_Powell", "Tony_Blair", "Jennifer_Aniston", "Serena_Williams"
PAGED = ("Hugo_Chavez", "Vladimir_Putin", "Gerhard_Schroeder")
TWO_FACES = ("Laura_Bush", 2)  # an LFW photo with two detected faces
WRONG_KEY = "frk_" + "x" * 43
# Every route of the API: what the OpenAPI document must list, no more and no less.
ROUTES = {("post", "/people"), ("get", "/people"), ("get", "/people/{person_id}"), ("patch", "/people/{person_id}"),
          ("delete", "/people/{person_id}"), ("post", "/people/{person_id}/photos"), ("post", "/identify"),
          ("post", "/verify"), ("get", "/gallery/health"), ("get", "/gallery/export"), ("post", "/gallery/import"),
          ("post", "/quality"), ("post", "/sightings/{sighting_id}/confirm"),
          ("post", "/sightings/{sighting_id}/correct"), ("delete", "/sightings/{sighting_id}"),
          ("get", "/people/{person_id}/templates"), ("delete", "/people/{person_id}/templates/{face_id}"),
          ("get", "/suggestions"), ("get", "/suggestions/{suggestion_id}/faces"), ("post", "/videos/identify"),
          ("post", "/suggestions/{suggestion_id}/name"), ("delete", "/suggestions/{suggestion_id}"),
          ("get", "/library"), ("post", "/library/run"), ("get", "/library/groups/{group}/faces"),
          ("post", "/library/groups/{group}/name"), ("post", "/library/groups/{group}/add"),
          ("delete", "/library/groups/{group}"), ("get", "/cameras"),
          ("post", "/sightings/{sighting_id}/not-this-person"), ("delete", "/negatives/{negative_id}"),
          ("post", "/people/{person_id}/merge"), ("post", "/faces/{face_id}/move"), ("post", "/sightings"),
          ("post", "/negatives")}


# ----- keys -----------------------------------------------------------------------------------------------
def test_the_api_is_off_until_a_key_is_created_then_on_without_a_restart(keys):
    message = refused(keys.off, 503, "api_off")
    assert "facerec api-key create --role admin" in message and "X-API-Key" in message
    assert keys.revoked_before == 200  # the CLI's new key worked at once in the running app


def test_keys_are_stored_hashed_and_listed_without_the_key(server, keys):
    with sqlite3.connect(server.home / "gallery.db") as database:
        rows = database.execute("SELECT * FROM api_keys").fetchall()
        stored = {row[0] for row in database.execute("SELECT key_sha256 FROM api_keys")}
    dump = repr(rows)
    for key in (keys.admin, keys.read, keys.revoked):
        assert key not in dump and key[len("frk_") + 8:] not in dump
        assert hashlib.sha256(key.encode()).hexdigest() in stored
    assert all(len(key) >= 40 for key in (keys.admin, keys.read))
    done = cli(server.home, "api-key", "list", "--json")
    assert done.returncode == 0, done.stderr
    listed = {k["name"]: k for k in json.loads(done.stdout)}
    assert {"tests admin", "tests read", "soon revoked"} <= set(listed)
    assert keys.admin not in done.stdout and listed["tests admin"]["key"] == keys.admin[:12] + "..."
    assert listed["soon revoked"]["revoked_at"] and listed["tests admin"]["revoked_at"] is None
    missing = cli(server.home, "api-key", "revoke", "999")
    assert missing.returncode == 1 and missing.stderr.strip() == \
        "error: there is no API key 999; `facerec api-key list` shows them."


def test_every_write_route_refuses_a_missing_wrong_revoked_or_read_key(api, keys, lfw_photo):
    target = enroll(api, keys, lfw_photo(BLAIR, 1), "Tony Blair")
    before = people(api, keys)
    export = api.get("/gallery/export", headers={"X-API-Key": keys.admin})
    assert export.status_code == 200
    person = f"/people/{target['identity_id']}"
    writes = [
        ("post", "/people", {"files": {"photo": photo(lfw_photo(BLAIR, 2))}, "data": {"name": "Someone"}}),
        ("patch", person, {"json": {"name": "Renamed"}}),
        ("delete", person, {}),
        ("post", f"{person}/photos", {"files": {"photo": photo(lfw_photo(BLAIR, 3))}}),
        ("post", "/gallery/import", {"files": {"archive": ("g.zip", export.content, "application/zip")}}),
        ("get", "/gallery/export", {}),
        ("get", "/gallery/health", {}),
        ("post", "/quality", {"files": {"photo": photo(lfw_photo(BLAIR, 2))}}),
        ("post", "/sightings/1/confirm", {}),
        ("post", "/sightings/1/correct", {"json": {"person_id": target["identity_id"]}}),
        ("delete", "/sightings/1", {}),
        ("post", "/sightings/1/not-this-person", {}),
        ("delete", "/negatives/1", {}),
        ("post", f"{person}/merge", {"json": {"into_person_id": target["identity_id"]}}),
        ("post", "/faces/1/move", {"json": {"person_id": target["identity_id"]}}),
        ("get", "/suggestions", {}),  # #41: faces of people not enrolled, for admins only
        ("get", "/suggestions/1/faces", {}),
        ("post", "/suggestions/1/name", {"json": {"name": "Someone"}}),
        ("delete", "/suggestions/1", {}),
    ]
    for method, path, request in writes:
        for headers, status, code in (({}, 401, "unauthorized"), ({"X-API-Key": WRONG_KEY}, 401, "unauthorized"),
                                      ({"X-API-Key": keys.revoked}, 401, "unauthorized"),
                                      ({"X-API-Key": keys.read}, 403, "forbidden")):
            message = refused(api.request(method, path, headers=headers, **request), status, code)
            if status == 403:
                assert "needs an admin key" in message and "tests read" in message
    assert people(api, keys) == before  # nothing changed
    reads = [("get", "/people", {}), ("get", person, {}),
             ("post", "/identify", {"files": {"photo": photo(lfw_photo(BLAIR, 2))}}),
             ("post", "/verify", {"files": {"photo_a": photo(lfw_photo(BLAIR, 1)),
                                            "photo_b": photo(lfw_photo(BLAIR, 2))}})]
    for method, path, request in reads:
        for headers in ({}, {"X-API-Key": WRONG_KEY}, {"X-API-Key": keys.revoked}):
            refused(api.request(method, path, headers=headers, **request), 401, "unauthorized")
        for key in (keys.read, keys.admin):
            assert api.request(method, path, headers={"X-API-Key": key}, **request).status_code == 200
    delete(api, keys, target["identity_id"])


# ----- sightings and enrollment quality ---------------------------------------------------------------------
def test_identify_keeps_sightings_an_admin_confirms_corrects_or_rejects(api, keys, lfw_photo):
    admin, read = {"X-API-Key": keys.admin}, {"X-API-Key": keys.read}
    sharon = enroll(api, keys, lfw_photo("Ariel_Sharon", 1), "Ariel Sharon")
    arroyo = enroll(api, keys, lfw_photo("Gloria_Macapagal_Arroyo", 1), "Gloria Macapagal Arroyo")
    found = api.post("/identify", files={"photo": photo(lfw_photo("Ariel_Sharon", 2))}, headers=read).json()
    face = found["faces"][0]
    assert face["name"] == "Ariel Sharon" and isinstance(face["sighting_id"], int)
    sighting = f"/sightings/{face['sighting_id']}"
    refused(api.post(f"{sighting}/confirm", headers=read), 403, "forbidden")
    confirmed = api.post(f"{sighting}/confirm", headers=admin)
    assert confirmed.status_code == 200 and confirmed.json()["source"] == "confirmed"
    learned = confirmed.json()["learning"]["learned_face_id"]  # #41: the confirmed face is a template now
    templates = f"/people/{sharon['identity_id']}/templates"
    refused(api.get(templates, headers=read), 403, "forbidden")
    listed = api.get(templates, headers=admin).json()
    assert [(t["origin"], t["learned_from_sighting"]) for t in listed] == [
        ("enrolled", None), ("learned", face["sighting_id"])] and listed[1]["face_id"] == learned
    assert listed[1]["learned_by"].startswith("API key ")
    corrected = api.post(f"{sighting}/correct", json={"person_id": arroyo["identity_id"]}, headers=admin).json()
    assert corrected["name"] == "Gloria Macapagal Arroyo" and corrected["source"] == "corrected"
    assert corrected["learning"]["learned_face_id"] is None  # not her face: add-photo's checks refuse it
    assert corrected["undone"] == {"removed_face_ids": [learned], "restored_face_ids": []}
    assert [t["origin"] for t in api.get(templates, headers=admin).json()] == ["enrolled"]  # and Sharon's undone
    memory = api.get("/gallery/health", headers=admin).json()["sightings"]
    assert memory["enabled"] and memory["sources"].get("corrected", 0) >= 1
    refused(api.post(f"{sighting}/correct", json={"person_id": 987654}, headers=admin), 404, "unknown_person")
    forgotten = api.delete(sighting, headers=admin).json()
    assert forgotten["source"] == "rejected" and forgotten["name"] == "Gloria Macapagal Arroyo"
    assert "No sighting" in refused(api.delete(sighting, headers=admin), 404, "unknown_sighting")
    again = api.post("/identify", files={"photo": photo(lfw_photo("Ariel_Sharon", 2))}, headers=read).json()
    kept = api.post(f"/sightings/{again['faces'][0]['sighting_id']}/confirm?learn=false", headers=admin).json()
    assert "learning" not in kept or kept["learning"] is None  # asked not to learn
    relearned = api.post(f"/sightings/{again['faces'][0]['sighting_id']}/confirm", headers=admin).json()
    face_id = relearned["learning"]["learned_face_id"]
    refused(api.delete(f"{templates}/{face_id}", headers=read), 403, "forbidden")
    refused(api.delete(f"/people/{arroyo['identity_id']}/templates/{face_id}", headers=admin), 404, "not_found")
    assert api.delete(f"{templates}/{face_id}", headers=admin).json()["origin"] == "learned"
    only = api.get(templates, headers=admin).json()[0]["face_id"]
    assert "last photo" in refused(api.delete(f"{templates}/{only}", headers=admin), 400, "invalid_argument")
    delete(api, keys, sharon["identity_id"])
    delete(api, keys, arroyo["identity_id"])


def test_merge_and_move_over_rest(api, keys, lfw_photo):
    """#62 item 4: one person enrolled twice merged by an admin key; one face moved to a new person."""
    admin, read = {"X-API-Key": keys.admin}, {"X-API-Key": keys.read}
    first = enroll(api, keys, lfw_photo(POWELL, 1), "Colin Powell")
    second = api.post("/people", files={"photo": photo(lfw_photo(POWELL, 2))},
                      data={"name": "C. Powell", "allow_lookalike": "true"}, headers=admin).json()
    merge = f"/people/{second['identity_id']}/merge"
    refused(api.post(merge, json={"into_person_id": first["identity_id"]}, headers=read), 403, "forbidden")
    merged = api.post(merge, json={"into_person_id": first["identity_id"]}, headers=admin).json()
    assert merged["removed_person"] == "C. Powell" and len(merged["moved_face_ids"]) == 1
    refused(api.get(f"/people/{second['identity_id']}", headers=read), 404, "unknown_person")
    moved = api.post(f"/faces/{merged['moved_face_ids'][0]}/move", json={"new_name": "Powell again"},
                     headers=admin).json()
    assert moved["name"] == "Powell again"
    delete(api, keys, first["identity_id"])
    delete(api, keys, moved["identity_id"])


def test_not_this_person_over_rest_and_its_undo(api, keys, lfw_photo):
    """#62 item 3: an admin says a named face is not the person; the same face is then no longer named them, and
    removing the negative brings the name back."""
    admin, read = {"X-API-Key": keys.admin}, {"X-API-Key": keys.read}
    sharon = enroll(api, keys, lfw_photo("Ariel_Sharon", 1), "Ariel Sharon")
    probe = lfw_photo("Ariel_Sharon", 2)
    face = api.post("/identify", files={"photo": photo(probe)}, headers=read).json()["faces"][0]
    assert face["name"] == "Ariel Sharon"
    said = f"/sightings/{face['sighting_id']}/not-this-person"
    refused(api.post(said, headers=read), 403, "forbidden")
    answer = api.post(said, headers=admin).json()
    assert answer["source"] == "not this person" and isinstance(answer["negative_id"], int)
    assert api.post("/identify", files={"photo": photo(probe)}, headers=read).json()["faces"][0]["known"] is False
    assert api.delete(f"/negatives/{answer['negative_id']}", headers=admin).json()["identity_id"] == \
        sharon["identity_id"]
    assert api.post("/identify", files={"photo": photo(probe)}, headers=read).json()["faces"][0]["name"] == \
        "Ariel Sharon"
    refused(api.delete(f"/negatives/{answer['negative_id']}", headers=admin), 404, "unknown_person")
    delete(api, keys, sharon["identity_id"])


def test_many_read_key_identifies_at_a_pinned_minus_one_leave_health_unchanged(api, keys, lfw, lfw_photo):
    """The poisoning of #28: strangers named at a pin of -1 (-10 on today's normalised score) were kept as sightings
    under wrong names, and Health then listed the people they were pinned on as weak enrollments. #28 reported a
    thousand calls; 250 (five of each of 50 strangers) are far past every bound on kept sightings (ten per person
    an hour), which is all a thousand added, in a quarter of the time."""
    admin, read = {"X-API-Key": keys.admin}, {"X-API-Key": keys.read}
    enrolled = [enroll(api, keys, lfw_photo(name, 1), name) for name in (POWELL, BLAIR, ANISTON, SERENA)]
    for name in (POWELL, BLAIR):  # two honest sightings, so that Health has figures to change
        api.post("/identify", files={"photo": photo(lfw_photo(name, 2))}, headers=read)
    before = api.get("/gallery/health", headers=admin).json()
    strangers = [folder for folder in sorted(lfw.iterdir()) if len(list(folder.glob("*.jpg"))) == 1][:50]
    uploads = [photo(next(folder.glob("*.jpg"))) for folder in strangers]
    named = 0
    for call in range(250):
        answer = api.post("/identify", files={"photo": uploads[call % len(uploads)]}, data={"threshold": "-10"},
                          headers=read)
        assert answer.status_code == 200, answer.text
        named += sum(face["name"] is not None for face in answer.json()["faces"])
    assert named >= 250  # the pin answered every call: every stranger was named
    after = api.get("/gallery/health", headers=admin).json()
    for key in ("sightings", "closest_is_positive_accuracy", "median_distances", "faces", "identities"):
        assert after[key] == before[key], key
    for person in enrolled:
        delete(api, keys, person["identity_id"])


def test_a_poor_enrollment_photo_is_422_with_its_quality_unless_allowed(api, keys, lfw_photo):
    admin = {"X-API-Key": keys.admin}
    poor = ("distant.jpg", poor_photo(lfw_photo("Gerhard_Schroeder", 1)), "image/jpeg")
    checked = api.post("/quality", files={"photo": poor}, headers=admin).json()
    # blur among the reasons (the 7-bit model's calibration names the blurred face's unstable embedding first)
    assert checked["low"] is True and "blurred" in checked["reasons"]
    assert api.post("/quality", files={"photo": photo(lfw_photo(SERENA, 1))}, headers=admin).json()["low"] is False
    before = people(api, keys)
    response = api.post("/people", files={"photo": poor}, data={"name": "Gerhard Schroeder"}, headers=admin)
    message = refused(response, 422, "low_quality")
    assert "poor enrollment photo" in message and response.json()["quality"]["score"] == checked["score"]
    assert people(api, keys) == before
    allowed = api.post("/people", files={"photo": poor},
                       data={"name": "Gerhard Schroeder", "allow_low_quality": "true"}, headers=admin)
    assert allowed.status_code == 201 and allowed.json()["quality"]["low"] is True
    delete(api, keys, allowed.json()["identity_id"])


# ----- the OpenAPI document -------------------------------------------------------------------------------
def test_the_openapi_document_lists_every_route_and_the_key(api):
    document = api.get("/openapi.json").json()  # no key needed: it holds no gallery data
    listed = {(method, path) for path, operations in document["paths"].items() for method in operations}
    assert listed == ROUTES
    assert document["servers"] == [{"url": "/api/v1"}]
    assert document["components"]["securitySchemes"]["ApiKey"] == {
        "type": "apiKey", "in": "header", "name": "X-API-Key",
        "description": "A key from `facerec api-key create --role read|admin`."}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert operation["security"] == [{"ApiKey": []}], (method, path)
            assert {"401", "403", "422", "503"} <= set(operation["responses"]), (method, path)
    docs = api.get("/docs")
    assert docs.status_code == 200 and "/api/v1/openapi.json" in docs.text


def test_the_docs_page_needs_nothing_from_the_internet(api):
    """#31 item 1: Swagger UI came from a CDN, so /api/v1/docs was a blank page offline."""
    page = api.get("/docs").text
    assert "http://" not in page and "https://" not in page and "cdn" not in page.lower()
    for asset in re.findall(r'(?:src|href)="(/api/v1/[^"]+)"', page):
        served = api.get(asset.removeprefix("/api/v1"))
        assert served.status_code == 200 and len(served.content) > 500, asset
    assert 'src="/api/v1/docs-assets/swagger-ui-bundle.js"' in page


def test_the_docs_fallback_lists_every_route_without_a_script():
    from fastapi import FastAPI

    from facerec.api.docs_page import plain_routes_page

    app = FastAPI()

    @app.get("/people/{person_id}", summary="One <person>")
    def person(person_id: int):
        return {}

    page = plain_routes_page(app, "t", "/api/v1/openapi.json")
    assert "<script" not in page and "GET /people/{person_id}" in page and "One &lt;person&gt;" in page


# ----- people, identify, verify ---------------------------------------------------------------------------
def test_enrol_identify_verify(api, keys, lfw_photo, tmp_path):
    enrolled = enroll(api, keys, lfw_photo(POWELL, 1), "Colin Powell", note="secretary of state")
    assert enrolled["name"] == "Colin Powell" and enrolled["photos"] == 1 and enrolled["lookalikes"] == []
    assert len(enrolled["face"]["box"]) == 4 and 0 < enrolled["threshold"] < 1 < enrolled["score_threshold"]
    read = {"X-API-Key": keys.read}
    found = api.post("/identify", files={"photo": photo(lfw_photo(POWELL, 2))}, data={"top_k": "2"}, headers=read)
    assert found.status_code == 200, found.text
    answer = found.json()
    assert [f["name"] for f in answer["faces"]] == ["Colin Powell"]
    face = answer["faces"][0]
    assert face["known"] and face["identity_id"] == enrolled["identity_id"] and face["similarity"] > 0.8
    assert len(face["box"]) == 4 and 1 <= len(face["candidates"]) <= 2 and answer["top_k"] == 2
    assert face["candidates"][0] == {"name": "Colin Powell", "identity_id": enrolled["identity_id"],
                                     "similarity": face["similarity"], "score": face["score"]}
    # #64 row 3: `score` is the decision's score on every route; the detector's confidence has its own name
    assert face["score"] >= face["score_threshold"] and face["similarity"] >= face["threshold"]  # named
    assert 0.9 <= face["detection_score"] <= 1 and "match_score" not in face
    assert 0 < face["stranger_far"] < 1e-3  # how rare this score is for a stranger
    assert answer["score_threshold"] == answer["threshold_policy"]["threshold"] and 0 < answer["expected_fpir"] < 0.05
    assert 0 < answer["threshold"] < 1  # still a cosine: the one two typical faces of this gallery must reach
    strict = api.post("/identify", files={"photo": photo(lfw_photo(POWELL, 2))}, data={"threshold": "12"},
                      headers=read).json()
    assert strict["faces"][0]["name"] == "unknown" and not strict["faces"][0]["known"]
    assert strict["score_threshold"] == 12 and strict["threshold_policy"]["pinned"]
    cosine_pin = api.post("/identify", files={"photo": photo(lfw_photo(POWELL, 2))}, data={"threshold": "0.72"},
                          headers=read)  # an old cosine pin: refused in one line, never reread as a score
    assert cosine_pin.status_code == 400 and "looks like a raw cosine" in cosine_pin.json()["error"]
    same = api.post("/verify", files={"photo_a": photo(lfw_photo(POWELL, 1)), "photo_b": photo(lfw_photo(POWELL, 2))},
                    headers=read).json()
    assert same["same_person"] and same["similarity"] >= same["threshold"] and same["expected_fpir"] is not None
    assert same["score"] >= same["score_threshold"]
    other = api.post("/verify", files={"photo_a": photo(lfw_photo(POWELL, 1)), "photo_b": photo(lfw_photo(BLAIR, 1))},
                     headers=read).json()
    assert not other["same_person"]

    # a group photo is never silently reduced to its largest face: 422 lists the faces, face_a picks one
    group = group_photo([lfw_photo(BLAIR, 1), lfw_photo(POWELL, 2)], tmp_path / "group.jpg")
    several = api.post("/verify", files={"photo_a": photo(group), "photo_b": photo(lfw_photo(POWELL, 1))},
                       headers=read)
    assert "face" in refused(several, 422, "multiple_faces") and len(several.json()["faces"]) == 2
    picked = [api.post("/verify", files={"photo_a": photo(group), "photo_b": photo(lfw_photo(POWELL, 1))},
                       data={"face_a": str(index)}, headers=read).json()["same_person"] for index in (0, 1)]
    assert picked == [False, True]

    got = api.get(f"/people/{enrolled['identity_id']}", headers=read).json()
    assert (got["name"], got["photos"], got["note"]) == ("Colin Powell", 1, "secretary of state")
    added = api.post(f"/people/{enrolled['identity_id']}/photos", files={"photo": photo(lfw_photo(POWELL, 3))},
                     headers={"X-API-Key": keys.admin})
    assert added.status_code == 201 and added.json()["photos"] == 2
    assert api.get(f"/people/{enrolled['identity_id']}", headers=read).json()["photos"] == 2
    renamed = api.patch(f"/people/{enrolled['identity_id']}", json={"name": "General Powell"},
                        headers={"X-API-Key": keys.admin})
    assert renamed.status_code == 200 and renamed.json()["name"] == "General Powell"
    assert delete(api, keys, enrolled["identity_id"])["photos"] == 2
    refused(api.get(f"/people/{enrolled['identity_id']}", headers=read), 404, "unknown_person")


def test_duplicates_look_alikes_and_taken_names_are_409_with_who(api, keys, lfw_photo):
    powell = enroll(api, keys, lfw_photo(POWELL, 1), "Colin Powell")
    admin = {"X-API-Key": keys.admin}
    before = people(api, keys)
    response = api.post("/people", files={"photo": photo(lfw_photo(POWELL, 1))}, data={"name": "Copy"}, headers=admin)
    assert "already enrolled, as 'Colin Powell'" in refused(response, 409, "duplicate_photo")
    assert response.json()["matches"] == [{"name": "Colin Powell", "score": None}]
    response = api.post("/people", files={"photo": photo(lfw_photo(POWELL, 2))}, data={"name": "Look Alike"},
                        headers=admin)
    assert "matches already-enrolled Colin Powell" in refused(response, 409, "possible_duplicate")
    [match] = response.json()["matches"]
    # #64 row 4: the score the check compared, under the name every route gives it (it was under "similarity")
    assert set(match) == {"name", "score"} and match["name"] == "Colin Powell" and match["score"] > 1.0
    response = api.post("/people", files={"photo": photo(lfw_photo(BLAIR, 1))}, data={"name": "colin POWELL"},
                        headers=admin)
    assert "differs only in letter case" in refused(response, 409, "name_taken")
    assert response.json()["taken"] == "Colin Powell"
    response = api.post(f"/people/{powell['identity_id']}/photos", files={"photo": photo(lfw_photo(BLAIR, 1))},
                        headers=admin)
    assert "does not match 'Colin Powell'" in refused(response, 409, "identity_mismatch")
    blair = enroll(api, keys, lfw_photo(BLAIR, 1), "Tony Blair")
    response = api.patch(f"/people/{blair['identity_id']}", json={"name": "Colin Powell"}, headers=admin)
    refused(response, 409, "name_taken")
    assert people(api, keys) == sorted(before + [("Tony Blair", 1)])
    anyway = enroll(api, keys, lfw_photo(POWELL, 2), "Look Alike", allow_lookalike="true")
    assert anyway["lookalikes"][0]["name"] == "Colin Powell"
    for person in (powell, blair, anyway):
        delete(api, keys, person["identity_id"])


def test_unknown_people_and_routes_are_404(api, keys, lfw_photo):
    admin = {"X-API-Key": keys.admin}
    for method, request in (("get", {}), ("patch", {"json": {"name": "X"}}), ("delete", {})):
        message = refused(api.request(method, "/people/987654", headers=admin, **request), 404, "unknown_person")
        assert message == "No enrolled person has the id 987654."
    refused(api.post("/people/987654/photos", files={"photo": photo(lfw_photo(BLAIR, 1))}, headers=admin),
            404, "unknown_person")
    assert refused(api.get("/no-such-route", headers=admin), 404, "not_found") == "Not Found."
    refused(api.get("/identify", headers=admin), 405, "method_not_allowed")


def test_several_faces_422_lists_them_and_face_index_picks_one(api, keys, lfw_photo):
    group = lfw_photo(*TWO_FACES)
    admin = {"X-API-Key": keys.admin}
    response = api.post("/people", files={"photo": photo(group)}, data={"name": "Group Face"}, headers=admin)
    assert "has 2 faces" in refused(response, 422, "multiple_faces")
    faces = response.json()["faces"]
    assert [f["index"] for f in faces] == [0, 1] and all(len(f["box"]) == 4 for f in faces)
    response = api.post("/people", files={"photo": photo(group)}, data={"name": "Group Face", "face_index": "5"},
                        headers=admin)
    assert "out of range" in refused(response, 400, "invalid_argument")
    found = api.post("/identify", files={"photo": photo(group)}, headers={"X-API-Key": keys.read}).json()
    assert len(found["faces"]) == 2
    chosen = enroll(api, keys, group, "Group Face", face_index="1")
    assert chosen["face"]["box"] == faces[1]["box"]
    delete(api, keys, chosen["identity_id"])


def test_bad_photos_answer_with_the_message_the_ui_shows(server, api, keys, tmp_path, lfw_photo):
    from gradio_client import Client, handle_file

    files = {"notes.txt": (b"this is not a photo\n", 422, "invalid_image"),
             "truncated.jpg": (lfw_photo(POWELL, 1).read_bytes()[:3000], 422, "invalid_image"),
             "empty.jpg": (b"", 422, "invalid_image"),
             "wall.png": (_png(Image.new("RGB", (320, 240), (128, 128, 128))), 422, "no_face"),
             "huge.png": (_png(Image.new("L", (8000, 6000))), 413, "image_too_large")}
    ui = Client(server.url, verbose=False)
    for name, (data, status, code) in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        for route, ui_call, fields in (("/identify", ("/identify", None, 3, "", 1.0), {}),
                                       ("/people", ("/enroll", "Nobody", None, False, "", ""), {"name": "Nobody"})):
            with pytest.raises(Exception) as shown:
                ui.predict(handle_file(str(path)), *ui_call[1:], api_name=ui_call[0])
            response = api.post(route, files={"photo": (name, data, "application/octet-stream")}, data=fields,
                                headers={"X-API-Key": keys.admin})
            assert refused(response, status, code) == str(shown.value), (name, route)
    assert ("Nobody", 1) not in people(api, keys)


def test_uploads_over_the_limit_are_413(server, api, keys):
    admin = {"X-API-Key": keys.admin}
    big = np.random.default_rng(0).integers(0, 256, (15 << 20) + 1, dtype=np.uint8).tobytes()
    message = refused(api.post("/identify", files={"photo": ("big.jpg", big, "image/jpeg")}, headers=admin),
                      413, "too_large")
    assert message == "The photo is over the upload limit of 15 MB."
    message = refused(api.post("/people", files={"photo": ("big.jpg", big, "image/jpeg")}, data={"name": "Big"},
                               headers=admin), 413, "too_large")
    # Over the whole body's limit: refused by its Content-Length alone, before a byte of the body is sent.
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.putrequest("POST", "/api/v1/verify")
    for header, value in ({**admin, "Content-Type": "multipart/form-data; boundary=x",
                           "Content-Length": str(100 << 20)}).items():
        connection.putheader(header, value)
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413
    assert json.loads(response.read()) == {"error": "The request body is over the limit of 31 MB.", "code": "too_large"}
    connection.close()

    def chunks():  # no Content-Length: counted as it arrives
        yield b"--x\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.jpg\"\r\n\r\n"
        for _ in range(3):
            yield big

    response = api.post("/identify", content=chunks(), headers={**admin, "Content-Type": "multipart/form-data; "
                                                                                          "boundary=x"})
    assert refused(response, 413, "too_large") == "The request body is over the limit of 31 MB."
    assert ("Big", 1) not in people(api, keys)


def test_malformed_requests_are_one_line_422_or_400(api, keys, lfw_photo):
    admin = {"X-API-Key": keys.admin}
    assert refused(api.post("/people", files={"photo": photo(lfw_photo(BLAIR, 1))}, headers=admin),
                   422, "invalid_request") == "Field name: field required."
    assert refused(api.post("/people", data={"name": "X"}, headers=admin), 422,
                   "invalid_request") == "Field photo: field required."
    for fields in ({"top_k": "0"}, {"top_k": "many"}, {"fpir": "2"}, {"threshold": "-300"}):
        message = refused(api.post("/identify", files={"photo": photo(lfw_photo(BLAIR, 1))}, data=fields,
                                   headers=admin), 422, "invalid_request")
        assert message.startswith(f"Field {next(iter(fields))}: ")
    refused(api.get("/people/not-a-number", headers=admin), 422, "invalid_request")
    refused(api.get("/people", params={"limit": "501"}, headers=admin), 422, "invalid_request")
    refused(api.patch("/people/1", content=b"{not json", headers={**admin, "Content-Type": "application/json"}),
            422, "invalid_request")
    message = refused(api.post("/people", files={"photo": photo(lfw_photo(BLAIR, 1))},
                               data={"name": "bad\x1b[31mname"}, headers=admin), 400, "invalid_argument")
    assert message.startswith("A name cannot contain") and "U+001B" in message


def test_ids_and_offsets_past_64_bits_are_422_not_500(api, keys):
    """They were 500 OverflowError (#29 row 4)."""
    admin = {"X-API-Key": keys.admin}
    for method, path in (("get", "/people/9223372036854775808"), ("delete", "/people/99999999999999999999"),
                         ("post", "/sightings/99999999999999999999/confirm"), ("delete", "/sightings/-1"),
                         ("get", "/people/0")):
        refused(api.request(method, path, headers=admin), 422, "invalid_request")
    refused(api.post("/sightings/1/correct", json={"person_id": 10**20}, headers=admin), 422, "invalid_request")
    refused(api.get("/people", params={"offset": 10**20}, headers=admin), 422, "invalid_request")
    far = api.get("/people", params={"offset": 2**63 - 1}, headers=admin)
    assert far.status_code == 200 and far.json()["people"] == []
    refused(api.get("/people/9223372036854775807", headers=admin), 404, "unknown_person")


def test_dates_have_one_format_in_every_answer(api, keys, lfw_photo):
    """updated_at carried "+00:00" only in PATCH answers (#31 item 6)."""
    person = enroll(api, keys, lfw_photo(BLAIR, 1), "Date Format")
    admin = {"X-API-Key": keys.admin}
    answers = [api.get(f"/people/{person['identity_id']}", headers=admin).json(),
               api.patch(f"/people/{person['identity_id']}", json={"name": "Date Formats"}, headers=admin).json(),
               api.get(f"/people/{person['identity_id']}", headers=admin).json(),
               next(p for p in api.get("/people", params={"search": "date formats"}, headers=admin).json()["people"])]
    for answer in answers:
        for key in ("created_at", "updated_at"):
            assert answer[key].endswith("+00:00"), (key, answer[key])
    delete(api, keys, person["identity_id"])


def test_list_is_paged_and_searchable(api, keys, lfw_photo):
    enrolled = [enroll(api, keys, lfw_photo(person, 1), f"Paged {person.replace('_', ' ')}") for person in PAGED]
    read = {"X-API-Key": keys.read}
    first = api.get("/people", params={"search": "PAGED", "limit": 2}, headers=read).json()
    rest = api.get("/people", params={"search": "paged", "limit": 2, "offset": 2}, headers=read).json()
    assert first["total"] == rest["total"] == 3 and (first["offset"], rest["offset"]) == (0, 2)
    names = [p["name"] for p in first["people"] + rest["people"]]
    assert names == sorted(f"Paged {p.replace('_', ' ')}" for p in PAGED)
    assert all(p["photos"] == 1 for p in first["people"]) and len(rest["people"]) == 1
    empty = api.get("/people", params={"search": "nobody like this"}, headers=read).json()
    assert empty == {"people": [], "total": 0, "offset": 0, "limit": 50}
    for person in enrolled:
        delete(api, keys, person["identity_id"])


def test_export_import_and_health(server, api, keys, lfw_photo):
    admin = {"X-API-Key": keys.admin}
    aniston = enroll(api, keys, lfw_photo(ANISTON, 1), "Jennifer Aniston")
    export = api.get("/gallery/export", params={"include_crops": "true"}, headers=admin)
    assert export.status_code == 200 and export.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(export.content)) as archive:
        manifest = json.loads(archive.read("gallery.json"))
        assert any(n.startswith("crops/") for n in archive.namelist())
    assert "Jennifer Aniston" in {face["name"] for face in manifest["faces"]}
    delete(api, keys, aniston["identity_id"])
    imported = api.post("/gallery/import", files={"archive": ("g.zip", export.content, "application/zip")},
                        headers=admin)
    assert imported.status_code == 200 and imported.json()["added"] >= 1, imported.text
    assert people(api, keys, "aniston") == [("Jennifer Aniston", 1)]
    message = refused(api.post("/gallery/import", files={"archive": ("g.zip", b"not a zip", "application/zip")},
                               headers=admin), 400, "invalid_argument")
    assert message.startswith("Cannot import this file") and message.endswith("Nothing was imported.")
    health = api.get("/gallery/health", headers=admin)
    assert health.status_code == 200
    report = health.json()
    assert report["identities"] >= 1 and set(report["median_distances"]) >= {"MedianDistance"}
    assert "closest_is_positive_accuracy" in report and report["threshold_policy"]["threshold"] == report["score_threshold"]
    [person] = api.get("/people", params={"search": "aniston"}, headers=admin).json()["people"]
    delete(api, keys, person["id"])
    # Nothing of those requests is left on the server: no export or import copy in the app's private folder.
    assert list(server.home.with_name(server.home.name + "-gradio-tmp").rglob("api-*")) == []


def test_deleting_through_the_api_empties_the_web_cache_as_the_ui_does(server, api, keys, lfw_photo):
    """Identify's annotated photo of the person never becomes a file in Gradio's cache (it travels inside the
    answer); what the cache still holds, such as an upload never asked about, a delete through the API removes at
    once, as the UI's own delete does, so no picture of the person stays downloadable."""
    import httpx
    from gradio_client import Client, handle_file

    person = enroll(api, keys, lfw_photo(BLAIR, 2), "Cached Face")
    matches = Client(server.url, verbose=False).predict(handle_file(str(lfw_photo(BLAIR, 1))),
                                                        api_name="/identify")[3]
    assert [m["name"] for m in matches] == ["Cached Face"]
    cache = server.home.with_name(server.home.name + "-gradio-tmp")
    pictures = lambda: {p for p in cache.rglob("*") if p.is_file() and p.suffix in (".webp", ".png")}  # noqa: E731
    assert not pictures()
    upload = lfw_photo(BLAIR, 3)
    answer = httpx.post(f"{server.url}gradio_api/upload", files={"files": (upload.name, upload.read_bytes(),
                                                                           "image/jpeg")}, timeout=60)
    assert answer.status_code == 200
    waiting = {p for p in cache.rglob("*") if p.is_file() and p.name == upload.name}
    assert waiting
    delete(api, keys, person["identity_id"])
    assert not [p for p in waiting if p.exists()]


def test_an_unexpected_error_is_a_one_line_500(caplog):
    """The route class every route uses, on a route with a bug: the client gets one line, the log the traceback."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from fastapi import APIRouter

    from facerec.api.routes import OneLineErrors

    router = APIRouter(route_class=OneLineErrors)  # as build_router makes every route

    @router.get("/boom")
    def boom():
        raise RuntimeError("secret detail /srv/facerec/gallery.db")

    app = FastAPI()
    app.include_router(router)
    response = TestClient(app).get("/boom")
    assert response.status_code == 500
    assert response.json() == {"error": "Something went wrong (RuntimeError); the server log has details.",
                               "code": "internal_error"}
    assert "secret" not in response.text and "secret detail" in caplog.text


# ----- the README's examples ------------------------------------------------------------------------------
README_MARK = "<!-- rest-api-examples: run by tests/test_api.py -->"


def readme_examples() -> list[str]:
    """The commands of the README's REST API example block (comments dropped), exactly as written."""
    text = (REPO_ROOT / "docs" / "api.md").read_text()  # the REST API's page, linked from the README
    block = re.search(re.escape(README_MARK) + r"\n```bash\n(.*?)\n```", text, re.S)
    assert block, "docs/api.md has no REST API example block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_readme_curl_examples_work_as_written(server, tmp_path, lfw_photo):
    for index, name in ((1, "alice.jpg"), (2, "alice2.jpg"), (3, "alice3.jpg")):
        (tmp_path / name).write_bytes(lfw_photo(SERENA, index).read_bytes())
    commands = readme_examples()
    marker = "@@@ exit"
    script = "\n".join(f"{command.replace('127.0.0.1:7860', f'127.0.0.1:{server.port}')}\n"
                       f"printf '\\n{marker} %s\\n' $?" for command in commands)
    env = {**os.environ, "FACEREC_HOME": str(server.home), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    parts = done.stdout.split(marker)  # output 0, then "status 0\noutput 1", ..., "status n-1\n"
    statuses = [part.split("\n", 1)[0].strip() for part in parts[1:]]
    outputs = [part.strip() for part in [parts[0]] + [part.partition("\n")[2] for part in parts[1:-1]]]
    assert len(outputs) == len(commands) and statuses == ["0"] * len(commands), done.stdout + done.stderr
    answers = {}
    for command, output in zip(commands, outputs):
        if command.startswith("curl"):
            answers[command] = json.loads(output) if output else None

    def answer(fragment: str):
        [command] = [c for c in answers if fragment in c]
        return answers[command]

    assert answer("name=Alice")["name"] == "Alice"
    identified = answer("/identify")
    assert [f["name"] for f in identified["faces"]] == ["Alice"] and identified["faces"][0]["known"]
    assert answer("/verify")["same_person"] is True
    assert "Alice" in [p["name"] for p in answer("search=ali")["people"]]
    assert answer('curl -H "X-API-Key: $READ_KEY" http://127.0.0.1:7860/api/v1/people/$ALICE')["photos"] == 1
    assert answer("/photos")["photos"] == 2
    assert answer("PATCH")["name"] == "Alice Smith"
    assert answer("/gallery/health")["identities"] >= 1
    assert zipfile.is_zipfile(tmp_path / "gallery.zip")
    deleted = answer('DELETE -H "X-API-Key: $ADMIN_KEY"')
    assert (deleted["name"], deleted["photos"]) == ("Alice Smith", 2)
    assert answer("/gallery/import")["added"] == 2
    assert answer('DELETE -H "X-API-Key: $READ_KEY"')["code"] == "forbidden"
    assert answer("name=Mallory")["code"] == "unauthorized"


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()
