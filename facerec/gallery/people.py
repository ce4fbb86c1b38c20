"""The people in a gallery: find one by id or name, list, rename, delete."""

from __future__ import annotations

import numpy as np

from facerec.errors import InvalidArgument, NameTaken, UnknownIdentity
from facerec.gallery.results import IdentityInfo
from facerec.names import clean_name, name_key
from facerec.storage import Identity, Store, as_utc
from facerec.storage.failures import ConflictingWrite
from facerec.storage.unit_of_work import UnitOfWork


def find_identity(tx: UnitOfWork, identity: str | int) -> Identity:
    """The person with this id, or this name (as typed first: a name stored before names were cleaned, then in
    its cleaned form); UnknownIdentity when there is none."""
    if isinstance(identity, (int, np.integer)) and not isinstance(identity, bool):
        person = tx.people.by_id(int(identity))
        if person is None:
            raise UnknownIdentity(f"no enrolled person has the id {int(identity)}")
    else:
        person = tx.people.by_name(str(identity))
        if person is None:
            person = tx.people.by_name(_cleaned_or_none(identity))
    if person is None:
        raise UnknownIdentity(f"no enrolled person called '{identity}'")
    return person


def refuse_taken_name(tx: UnitOfWork, name: str, allowed_id: int | None = None) -> None:
    """A name is taken when another person has it, or has it in another letter case (`facerec.names`)."""
    for identity, taken in tx.people.same_name_key(name_key(name)):
        if identity == allowed_id:
            continue
        if taken == name:
            raise NameTaken(f"'{name}' is already enrolled; add this photo to that person instead", taken)
        raise NameTaken(f"'{name}' differs only in letter case from enrolled '{taken}'; use that name "
                        "(to add a photo to that person) or another one", taken)


def list_people(store: Store, query: str | None = None) -> list[IdentityInfo]:
    with store.reading() as tables:
        return [info(person) for person in tables.people.listed(query)]


def list_page(store: Store, query: str | None = None, offset: int = 0,
              limit: int = 50) -> tuple[list[IdentityInfo], int]:
    """One page of `list` (same filter and order: `limit` people from position `offset`) and how many match in all,
    without reading the others (the REST API pages through large galleries)."""
    if offset < 0 or limit < 1:
        raise InvalidArgument("offset must be at least 0 and limit at least 1")
    with store.reading() as tables:
        page = [info(person) for person in tables.people.listed(query, offset, limit)]
        return page, tables.people.count(query)


def get(store: Store, identity: str | int) -> IdentityInfo:
    with store.reading() as tables:
        return info(find_identity(tables, identity))


def rename(store: Store, identity: str | int, new_name: str) -> IdentityInfo:
    new_name = clean_name(new_name)
    try:
        with store.transaction() as tx:
            person = find_identity(tx, identity)
            refuse_taken_name(tx, new_name, person.id)
            tx.people.rename(person, new_name)
            renamed = info(person)
    except ConflictingWrite:
        raise NameTaken(f"'{new_name}' is already enrolled", new_name) from None
    return renamed


def delete(store: Store, identity: str | int) -> IdentityInfo:
    """The person and their faces, from the database (the caller brings the index up to date)."""
    with store.transaction() as tx:
        person = find_identity(tx, identity)
        deleted = info(person)
        tx.people.delete(person)
    return deleted


def info(person: Identity) -> IdentityInfo:
    # One form in every answer (SQLite hands stored times back naive, a fresh rename aware: the API's updated_at
    # carried "+00:00" only after a PATCH).
    return IdentityInfo(person.id, person.name, len(person.faces), person.note, as_utc(person.created_at),
                        as_utc(person.updated_at), [f.id for f in person.faces], learned_count(person))


def learned_count(person: Identity) -> int:
    """How many of the person's faces were learned from confirmed sightings (not photos a user gave)."""
    return sum(face.origin == "learned" for face in person.faces)


def _cleaned_or_none(name: object) -> str | None:
    try:
        return clean_name(str(name))
    except InvalidArgument:
        return None
