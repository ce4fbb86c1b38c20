"""#65 item 2: a face or track identify did not keep is labelled over REST as the page labels it, by the signed
`label_token` an admin key's answer carries (`facerec.gallery.unkept_faces`); the server keeps nothing of it."""

from __future__ import annotations

import time

import numpy as np
import pytest

from api_client import api, enroll, keys, photo, refused, server  # noqa: F401
from facerec.errors import InvalidArgument
from facerec.gallery.unkept_faces import UnkeptFaces
from facerec.storage import Store

BLAIR, SHARON = "Tony_Blair", "Ariel_Sharon"


def unknown_face(api, keys, path, key: str) -> dict:
    """The face of `path` as identify answers it at a threshold nobody reaches (so it is unknown and not kept)."""
    answer = api.post("/identify", files={"photo": photo(path)}, data={"threshold": "100"},
                      headers={"X-API-Key": key})
    assert answer.status_code == 200, answer.text
    face = answer.json()["faces"][0]
    assert face["name"] == "unknown" and face.get("sighting_id") is None
    return face


def test_an_unkept_face_is_labelled_and_learned_by_its_token_and_only_an_admin_gets_one(api, keys, lfw_photo):
    admin, read = {"X-API-Key": keys.admin}, {"X-API-Key": keys.read}
    blair = enroll(api, keys, lfw_photo(BLAIR, 1), "Tony Blair")
    sharon = enroll(api, keys, lfw_photo(SHARON, 1), "Ariel Sharon")
    assert unknown_face(api, keys, lfw_photo(BLAIR, 2), keys.read).get("label_token") is None
    token = unknown_face(api, keys, lfw_photo(BLAIR, 2), keys.admin)["label_token"]
    label = {"label_token": token, "person_id": blair["identity_id"]}
    refused(api.post("/sightings", json=label, headers=read), 403, "forbidden")
    tampered = token[:-3] + ("AAA" if token[-3:] != "AAA" else "BBB")
    assert "not one this gallery gave" in refused(
        api.post("/sightings", json={**label, "label_token": tampered}, headers=admin), 400, "invalid_argument")
    refused(api.post("/sightings", json={**label, "person_id": 987654}, headers=admin), 404, "unknown_person")
    labelled = api.post("/sightings", json=label, headers=admin)
    assert labelled.status_code == 201, labelled.text
    sighting = labelled.json()
    assert sighting["name"] == "Tony Blair" and sighting["source"] == "corrected"
    learned = sighting["learning"]["learned_face_id"]  # the token carried the aligned face: learned as a template
    templates = api.get(f"/people/{blair['identity_id']}/templates", headers=admin).json()
    assert [(t["origin"], t["face_id"]) for t in templates][-1] == ("learned", learned)
    # The same token, now as "not this person" for someone else: kept as Sharon's negative example, and undone
    denied = api.post("/negatives", json={"label_token": token, "person_id": sharon["identity_id"]}, headers=admin)
    assert denied.status_code == 201, denied.text
    negative = denied.json()
    assert negative["identity_id"] == sharon["identity_id"] and negative["negative_id"] >= 1
    assert api.delete(f"/negatives/{negative['negative_id']}", headers=admin).status_code == 200


def test_a_token_is_refused_in_one_line_once_expired_or_from_another_model(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'gallery.db'}")
    try:
        embedding = np.full(512, 512 ** -0.5, np.float32)
        token = UnkeptFaces(store, "model-a", keep_crops=True).token(embedding, None, None)
        assert UnkeptFaces(store, "model-a", keep_crops=True).read(token).embedding.tolist() == embedding.tolist()
        with pytest.raises(InvalidArgument, match="another model"):
            UnkeptFaces(store, "model-b", keep_crops=True).read(token)
        time.sleep(2.1)
        with pytest.raises(InvalidArgument, match="minutes old; identify the photo again"):
            UnkeptFaces(store, "model-a", keep_crops=True, max_age_s=1).read(token)
        with pytest.raises(InvalidArgument, match="not one this gallery gave"):
            UnkeptFaces(store, "model-a", keep_crops=True).read("u1." + "A" * 70_000 + ".x")
    finally:
        store.dispose()
