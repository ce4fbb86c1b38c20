"""The identities table: enrolled people by name (unique; looked up in any letter case through the backend's
`name_key`), and the writes that add, rename and delete a person with their faces."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Callable

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from facerec.storage.faces import FacesTable
from facerec.storage.journal import JournalTable
from facerec.storage.replaced import ReplacedFacesTable
from facerec.storage.rows import chunked
from facerec.storage.schema import Identity, NegativeFace, ReplacedFace, Sighting, utcnow
from facerec.storage.sightings import SightingsTable


class PeopleTable:
    def __init__(self, session: Callable[[], Session], name_key: Callable, sightings: SightingsTable,
                 faces: FacesTable, replaced: ReplacedFacesTable) -> None:
        self.session = session  # opens a read session (`Store.session`)
        self.faces = faces  # a new person's face is written as the faces table writes every face
        self.name_key = name_key  # the backend's SQL for `facerec.names.name_key`
        self.sightings = sightings  # a person's sightings go with them
        self.replaced = replaced  # and so do the templates set aside for an undo

    def by_id(self, session: Session, identity_id: int) -> Identity | None:
        return session.get(Identity, identity_id)

    def by_name(self, session: Session, name: str | None) -> Identity | None:
        return None if name is None else session.scalar(select(Identity).where(Identity.name == name))

    def listed(self, session: Session, query: str | None = None, offset: int = 0,
               limit: int | None = None) -> list[Identity]:
        """People by name; `query` keeps those whose name holds it, in any letter case; `offset` and `limit` take
        one page of them."""
        statement = self._matching(query).order_by(Identity.name).offset(offset)
        return list(session.scalars(statement if limit is None else statement.limit(limit)))

    def count(self, session: Session, query: str | None = None) -> int:
        """How many people `listed` would give for `query`, without reading them."""
        return int(session.scalar(select(func.count()).select_from(self._matching(query).subquery())))

    def _matching(self, query: str | None):
        statement = select(Identity)
        # autoescape: '%' and '_' in a search are letters, not LIKE wildcards, on both backends (ESCAPE '/').
        return (statement.where(self.name_key(Identity.name).contains(query.lower(), autoescape=True))
                if query else statement)

    def names(self, identity_ids: list[int]) -> dict[int, str]:
        """{identity id: name} of these people."""
        with self.session() as session:
            return {int(i): str(n) for chunk in chunked(identity_ids)
                    for i, n in session.execute(select(Identity.id, Identity.name).where(Identity.id.in_(chunk)))}

    def ids(self, session: Session, names: Iterable[str]) -> dict[str, int]:
        """{name: identity id} of the people with exactly these names."""
        return {name: identity for chunk in chunked(sorted(set(names)))
                for name, identity in session.execute(select(Identity.name, Identity.id)
                                                      .where(Identity.name.in_(chunk)))}

    def same_name_key(self, session: Session, key: str) -> list[tuple[int, str]]:
        """(id, name) of the people whose name has this `facerec.names.name_key`."""
        return [(int(i), str(n)) for i, n in session.execute(
            select(Identity.id, Identity.name).where(self.name_key(Identity.name) == key))]

    def names_with_keys(self, session: Session, keys: list[str]) -> list[str]:
        """Names of the people whose `name_key` is one of `keys`."""
        return [str(name) for chunk in chunked(keys)
                for name, in session.execute(select(Identity.name).where(self.name_key(Identity.name).in_(chunk)))]

    # ----- writes (inside the caller's `transaction()`) -----------------------------------------------
    def add(self, session: Session, name: str, note: str | None, face: dict) -> tuple[int, int]:
        """A new person with one face (`face`: `FacesTable.add_many`'s row keys but identity_id); (identity id,
        face id)."""
        identity = Identity(name=name, note=note)
        session.add(identity)
        record = self.faces.new_row(face)
        identity.faces.append(record)
        session.flush()
        JournalTable.record(session, "add", [record.id])
        return identity.id, record.id

    def add_face(self, session: Session, person: Identity, face: dict) -> int:
        """Another face of `person` (who is then updated now); returns its id."""
        record = self.faces.new_row(face)
        person.faces.append(record)
        person.updated_at = utcnow()
        session.flush()
        JournalTable.record(session, "add", [record.id])
        return record.id

    def create(self, session: Session, people: list[dict], now: datetime) -> dict[str, int]:
        """New people from {"name", optional "note", "created_at", "updated_at"} rows, in one statement;
        {name: identity id}."""
        if not people:
            return {}
        created = session.scalars(insert(Identity).returning(Identity.id, sort_by_parameter_order=True),
                                  [{"note": None, "created_at": now, "updated_at": now, **person}
                                   for person in people])
        return dict(zip([person["name"] for person in people], created))

    def rename(self, session: Session, person: Identity, name: str) -> None:
        person.name, person.updated_at = name, utcnow()
        session.flush()

    def delete(self, session: Session, person: Identity) -> None:
        """The person, their faces (journalled), their sightings and the faces set aside for an undo."""
        JournalTable.record(session, "remove", [face.id for face in person.faces])
        self.sightings.remove_person(session, person.id)
        self.replaced.remove_person(session, person.id)
        session.execute(delete(NegativeFace).where(NegativeFace.identity_id == person.id))
        session.delete(person)

    def hand_over(self, session: Session, source: Identity, target: Identity) -> None:
        """Everything kept of `source` beside their faces (sightings, set-aside templates, negative examples)
        becomes `target`'s: what a merge moves besides the faces themselves."""
        for table in (Sighting, ReplacedFace, NegativeFace):
            session.execute(update(table).where(table.identity_id == source.id).values(identity_id=target.id))
