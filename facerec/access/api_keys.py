"""API keys for the REST API: created, listed and revoked by `facerec api-key`, checked on every request.

Kept in the gallery's own database (table `api_keys`), so every app serving one database (replicas on one
PostgreSQL) accepts the same keys, and a key created or revoked from the CLI counts at the next request, without a
restart. Only the SHA-256 of a key is stored: a key is 256 random bits (`secrets.token_urlsafe(32)`), so a plain
hash cannot be reversed or brute-forced, and a copy of the database (or a backup) does not give anyone a key. The
key itself is shown once, when it is created. A presented key is looked up by its hash and the stored hash compared
in constant time (`hmac.compare_digest`).

Roles: `read` (identify, verify, list and get people) and `admin` (everything, including every write, export, import
and the health report); `facerec.api.auth` says which route needs which.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from facerec.errors import InvalidArgument
from facerec.names import clean_name
from facerec.storage import Store, as_utc
from facerec.storage.schema import ApiKeyRow

ROLES = ("read", "admin")
KEY_PREFIX = "frk_"  # facerec key: recognisable in a config file or a secret scanner
SHOWN_CHARACTERS = 8  # of the random part, kept in the clear so `api-key list` can tell keys apart


@dataclass(frozen=True)
class ApiKey:
    """One key as `api-key list` shows it: never the key, only its first characters (`shown`)."""

    id: int
    name: str
    role: str
    shown: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "role": self.role, "key": f"{self.shown}...",
                "created_at": self.created_at.isoformat(),
                "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None}


class ApiKeys:
    """The keys of one gallery database. Their table is part of the schema (made when a SQLite gallery opens, and
    by `facerec db upgrade` on PostgreSQL, which a replica never changes): nothing here creates tables."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def create(self, role: str, name: str | None = None) -> tuple[ApiKey, str]:
        """A new key with `role` ("read" or "admin"): (its record, the key itself, to be shown once)."""
        if role not in ROLES:
            raise InvalidArgument(f"the role must be one of {', '.join(ROLES)}; got '{role}'")
        label = clean_name(name) if name else f"{role} key"
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        row = self._store.api_keys.add(label, role, _digest(key), key[: len(KEY_PREFIX) + SHOWN_CHARACTERS])
        return _record(row), key

    def list(self) -> list[ApiKey]:
        """Every key ever created, revoked ones included (they say when), oldest first."""
        return [_record(row) for row in self._store.api_keys.all()]

    def revoke(self, key_id: int) -> ApiKey:
        """Stop a key from working, from the next request on (in every app on this database)."""
        row = self._store.api_keys.revoke(key_id)
        if row is None:
            raise InvalidArgument(f"there is no API key {key_id}; `facerec api-key list` shows them")
        return _record(row)

    def authenticate(self, key: str) -> ApiKey | None:
        """The active key `key` is, or None (unknown or revoked)."""
        digest = _digest(key)
        row = self._store.api_keys.by_digest(digest)
        if row is None or row.revoked_at is not None or not hmac.compare_digest(row.key_sha256, digest):
            return None
        return _record(row)

    def any_active(self) -> bool:
        """Whether any key works: with none, the REST API is off."""
        return self._store.api_keys.count_active() > 0


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _record(row: ApiKeyRow) -> ApiKey:
    return ApiKey(row.id, row.name, row.role, row.shown, as_utc(row.created_at), as_utc(row.revoked_at))
