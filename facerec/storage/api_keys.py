"""The api_keys table's queries: the REST API's keys, kept by the SHA-256 of each key (`facerec.access.api_keys`
says why and does the hashing; here are only the reads and writes).

Each write is one short transaction of its own, opened here through the store (`Store.transaction`): services never
open sessions or commit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ContextManager

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from facerec.storage.schema import ApiKeyRow, utcnow


class ApiKeysTable:
    def __init__(self, transaction: Callable[[], ContextManager[Session]], reading: Callable[[], Session]) -> None:
        self._transaction, self._reading = transaction, reading  # `Store.transaction` and `Store.session`

    def add(self, name: str, role: str, key_sha256: str, shown: str) -> ApiKeyRow:
        """Store a new key (committed on return); the row comes back with its id and creation time."""
        with self._transaction() as session:
            row = ApiKeyRow(name=name, role=role, key_sha256=key_sha256, shown=shown)
            session.add(row)
            session.flush()
        return row

    def all(self) -> list[ApiKeyRow]:
        """Every key ever stored, revoked ones included, oldest first."""
        with self._reading() as session:
            return list(session.scalars(select(ApiKeyRow).order_by(ApiKeyRow.id)))

    def revoke(self, key_id: int) -> ApiKeyRow | None:
        """Mark key `key_id` revoked now, unless it already was (its first revocation time stays); None if there is
        no such key."""
        with self._transaction() as session:
            row = session.get(ApiKeyRow, key_id)
            if row is not None and row.revoked_at is None:
                row.revoked_at = utcnow()
        return row

    def by_digest(self, key_sha256: str) -> ApiKeyRow | None:
        """The key whose hash is `key_sha256`, revoked or not; None if there is none."""
        with self._reading() as session:
            return session.scalar(select(ApiKeyRow).where(ApiKeyRow.key_sha256 == key_sha256))

    def count_active(self) -> int:
        """How many keys are not revoked."""
        with self._reading() as session:
            return int(session.scalar(select(func.count(ApiKeyRow.id)).where(ApiKeyRow.revoked_at.is_(None))))
