"""The people enrolled, as a list to page through and entries to read, rename or delete (`facerec.gallery.people`
holds the rules); a delete also brings the vector index up to date, so the next search no longer finds them."""

from __future__ import annotations

from facerec.gallery.core import Core
from facerec.gallery.people import delete, get, list_page, list_people, rename
from facerec.gallery.results import IdentityInfo


class Directory:
    def __init__(self, core: Core) -> None:
        self._store, self._index = core.store, core.index

    def list(self, query: str | None = None) -> list[IdentityInfo]:
        """Enrolled identities by name; `query` filters by case-insensitive substring."""
        return list_people(self._store, query)

    def page(self, query: str | None = None, offset: int = 0, limit: int = 50) -> tuple[list[IdentityInfo], int]:
        """One page of `list` and how many match in all."""
        return list_page(self._store, query, offset, limit)

    def get(self, identity: str | int) -> IdentityInfo:
        """One person, by name or id (`UnknownIdentity` when there is none)."""
        return get(self._store, identity)

    def count(self) -> int:
        """How many people are enrolled."""
        return self._store.counts()[0]

    def face_crop(self, face_id: int) -> bytes | None:
        """The stored JPEG crop of a face (None in privacy mode)."""
        return self._store.faces.crop(face_id)

    def negative_crop(self, negative_id: int) -> bytes | None:
        """The stored JPEG crop of a negative example ("not this person"; None where crops are not kept)."""
        return self._store.negatives.crop(negative_id)

    def rename(self, identity: str | int, new_name: str) -> IdentityInfo:
        return rename(self._store, identity, new_name)

    def delete(self, identity: str | int) -> IdentityInfo:
        """Remove a person and all their faces from the database and the index."""
        info = delete(self._store, identity)
        self._index.after_write(self._store)
        return info
