"""API keys on a real SQLite gallery database: what is stored, what authenticates, what revocation does."""

from __future__ import annotations

import hashlib

import pytest

from facerec.access.api_keys import ApiKeys
from facerec.errors import InvalidArgument
from facerec.storage import Store


@pytest.fixture
def keys(tmp_path) -> ApiKeys:
    store = Store(f"sqlite:///{tmp_path / 'gallery.db'}")
    yield ApiKeys(store)
    store.dispose()


def test_a_new_key_authenticates_with_its_role_and_only_its_hash_is_stored(keys, tmp_path):
    assert not keys.any_active()
    record, key = keys.create("read", "front door")
    assert key.startswith("frk_") and len(key) == 4 + 43  # 32 random bytes, URL-safe base64
    assert (record.role, record.name, record.active) == ("read", "front door", True)
    assert keys.authenticate(key) == record and keys.any_active()
    raw = (tmp_path / "gallery.db").read_bytes() + (tmp_path / "gallery.db-wal").read_bytes()
    assert key.encode() not in raw and key[12:].encode() not in raw
    assert hashlib.sha256(key.encode()).hexdigest().encode() in raw


def test_wrong_keys_do_not_authenticate(keys):
    _record, key = keys.create("admin")
    for wrong in ("", key[:-1], key + "x", key.upper(), hashlib.sha256(key.encode()).hexdigest(), "frk_\u00e9\x00"):
        assert keys.authenticate(wrong) is None


def test_revoking_stops_a_key_and_only_that_key(keys):
    first, first_key = keys.create("admin", "one")
    second, second_key = keys.create("read", "two")
    assert first_key != second_key
    revoked = keys.revoke(first.id)
    assert not revoked.active and keys.authenticate(first_key) is None
    assert keys.authenticate(second_key) == second
    assert keys.revoke(first.id).revoked_at == revoked.revoked_at  # revoking again changes nothing
    keys.revoke(second.id)
    assert not keys.any_active()
    assert [(k.id, k.active) for k in keys.list()] == [(first.id, False), (second.id, False)]


def test_bad_roles_names_and_ids_are_refused(keys):
    with pytest.raises(InvalidArgument, match="role must be one of read, admin"):
        keys.create("root")
    with pytest.raises(InvalidArgument, match="name cannot contain"):
        keys.create("read", "door\x1b[2J")
    with pytest.raises(InvalidArgument, match="there is no API key 42"):
        keys.revoke(42)
    assert keys.list() == []
