"""The store: every query the gallery makes, over the tables of `facerec.storage.schema`.

`writing()` is one write transaction (writers queue for one lock, see the backend), `session()` a read session.
Methods that take a `session` run inside the caller's transaction, so a check and the write it guards see the
same state; the others open their own read session. Embeddings go in and come out as float32 NumPy vectors: how
a backend stores them is the store's business.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterable
from datetime import datetime

import numpy as np
from sqlalchemy import event, func, insert, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from facerec.errors import StorageFull, UnusableFile
from facerec.storage.backends import backend_for
from facerec.storage.schema import Face, Identity, JournalEntry, Setting, utcnow
from facerec.storage.sightings import SightingsTable


class Store:
    """Thin access layer over the tables. `writing()` is one write transaction; `session()` a read session."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.backend = backend_for(url)
        self.path = self.backend.file
        self.write_engine, self.read_engine = self.backend.write_engine, self.backend.read_engine
        try:
            self.backend.open()
        except UnusableFile:
            self.dispose()
            raise
        except SQLAlchemyError as error:
            self.dispose()
            reason = " ".join(str(getattr(error, "orig", None) or error).split())[:200]
            raise UnusableFile(f"cannot open the gallery database {self.backend.describe()} ({reason}); "
                               f"{self.backend.advice}. Nothing was changed.") from None
        for engine in {self.write_engine, self.backend.sightings_engine}:
            event.listen(engine, "handle_error", _disk_full_as_storage_full)
        self._writes = sessionmaker(self.write_engine, expire_on_commit=False)
        self._sighting_writes = sessionmaker(self.backend.sightings_engine, expire_on_commit=False)
        self._reads = sessionmaker(self.read_engine, expire_on_commit=False)
        self.sightings = SightingsTable(self)

    @property
    def display_url(self) -> str:
        return display_url(self.url)

    def writing(self) -> Session:
        """A session for one write transaction: use as `with store.writing() as s, s.begin(): ...`."""
        return self._writes()

    def session(self) -> Session:
        """A session for reads."""
        return self._reads()

    def writing_sightings(self) -> Session:
        """A session for one write transaction of sightings only, which on PostgreSQL does not queue for the
        gallery's write lock (`Backend.sightings_engine`)."""
        return self._sighting_writes()

    def dispose(self) -> None:
        self.backend.dispose()

    # ----- the journal ----------------------------------------------------------------------------------------
    def journal_head(self, session: Session | None = None) -> int:
        """Sequence number of the latest journal row (0 for an empty gallery): the database fingerprint."""
        if session is None:
            with self.session() as session:
                return self.journal_head(session)
        return int(session.scalar(select(func.coalesce(func.max(JournalEntry.seq), 0))))

    def journal_entry(self, seq: int) -> tuple[str, int] | None:
        """(op, face id) of the journal row `seq`, or None when there is none."""
        with self.session() as session:
            row = session.execute(select(JournalEntry.op, JournalEntry.face_id).where(JournalEntry.seq == seq)).first()
            return (str(row[0]), int(row[1])) if row else None

    def journal_since(self, seq: int) -> list[tuple[int, str, int]]:
        with self.session() as session:
            rows = session.execute(
                select(JournalEntry.seq, JournalEntry.op, JournalEntry.face_id)
                .where(JournalEntry.seq > seq).order_by(JournalEntry.seq)
            )
            return [(int(s), str(o), int(f)) for s, o, f in rows]

    def faces_added_since(self, session: Session, seq: int) -> list[tuple[int, str, np.ndarray]]:
        """(identity id, name, embedding) of every face the journal added after `seq` and still held."""
        face_ids = list(session.scalars(select(JournalEntry.face_id).where(JournalEntry.seq > seq,
                                                                           JournalEntry.op == "add")))
        return [(int(identity), str(name), _decoded(vector)) for chunk in chunked(face_ids)
                for identity, name, vector in session.execute(select(Identity.id, Identity.name, Face.embedding)
                                                              .join(Identity).where(Face.id.in_(chunk)))]

    # ----- faces ----------------------------------------------------------------------------------------------
    def embeddings(self, face_ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(face ids [N] int64, embeddings [N, D] float32) of all faces, or of the given ids."""
        with self.session() as session:
            query = select(Face.id, Face.embedding).order_by(Face.id)
            if face_ids is None:
                rows = session.execute(query).all()
            else:
                rows = [row for chunk in chunked(face_ids) for row in session.execute(query.where(Face.id.in_(chunk)))]
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, 512), np.float32)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        return ids, np.stack([_decoded(r[1]) for r in rows])

    def face_labels(self, face_ids: list[int] | None = None) -> dict[int, tuple[int, str]]:
        """{face id: (identity id, name)} for every face, or only for the given face ids."""
        query = select(Face.id, Identity.id, Identity.name).join(Identity)
        with self.session() as session:
            if face_ids is None:
                rows = list(session.execute(query))
            else:
                rows = [r for chunk in chunked(face_ids) for r in session.execute(query.where(Face.id.in_(chunk)))]
            return {int(f): (int(i), str(n)) for f, i, n in rows}

    def face_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(identity ids [P] int64, ascending; their face counts [P]) of every person with a face."""
        with self.session() as session:
            rows = session.execute(select(Face.identity_id, func.count(Face.id)).group_by(Face.identity_id)
                                   .order_by(Face.identity_id)).all()
        return np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64)

    def faces_of(self, identity_ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(face ids [N], their identity ids [N], embeddings [N, D]) of these people's faces, by face id."""
        with self.session() as session:
            rows = sorted(row for chunk in chunked(identity_ids)
                          for row in session.execute(select(Face.id, Face.identity_id, Face.embedding)
                                                     .where(Face.identity_id.in_(chunk))))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 512), np.float32)
        return (np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
                np.stack([_decoded(r[2]) for r in rows]))

    def names(self, identity_ids: list[int]) -> dict[int, str]:
        """{identity id: name} of these people."""
        with self.session() as session:
            return {int(i): str(n) for chunk in chunked(identity_ids)
                    for i, n in session.execute(select(Identity.id, Identity.name).where(Identity.id.in_(chunk)))}

    def faces_of_photo(self, session: Session, photo_sha256: str) -> list[tuple[str, list, str]]:
        """(photo sha256, box, person's name) of every face enrolled from this photo."""
        return [tuple(row) for row in session.execute(
            select(Face.photo_sha256, Face.box, Identity.name).join(Identity)
            .where(Face.photo_sha256 == photo_sha256))]

    def photos_of(self, session: Session, identity_ids: list[int]) -> list[tuple[int, str, list]]:
        """(identity id, photo sha256, box) of every face of these people."""
        return [tuple(row) for chunk in chunked(identity_ids)
                for row in session.execute(select(Face.identity_id, Face.photo_sha256, Face.box)
                                           .where(Face.identity_id.in_(chunk)))]

    def crop(self, face_id: int) -> bytes | None:
        """The stored JPEG crop of a face (None in privacy mode, or when there is no such face)."""
        with self.session() as session:
            face = session.get(Face, face_id)
            return face.crop_jpeg if face else None

    def model_ids(self) -> list[str]:
        """Every model whose embeddings the gallery holds, sorted."""
        with self.session() as session:
            return sorted(session.scalars(select(Face.model_id).distinct()))

    def other_model_ids(self, model_id: str, limit: int = 5) -> list[str]:
        """Up to `limit` models other than `model_id` whose embeddings the gallery holds (sorted)."""
        with self.session() as session:
            # Two index lookups first: `model_id != ...` scans the whole index, and this runs on every identify.
            if all(session.scalar(select(Face.model_id).where(other).limit(1)) is None
                   for other in (Face.model_id < model_id, Face.model_id > model_id)):
                return []
            return sorted(session.scalars(select(Face.model_id).where(Face.model_id != model_id)
                                          .distinct().limit(limit)))

    # ----- people ---------------------------------------------------------------------------------------------
    def identity_by_id(self, session: Session, identity_id: int) -> Identity | None:
        return session.get(Identity, identity_id)

    def identity_by_name(self, session: Session, name: str | None) -> Identity | None:
        return None if name is None else session.scalar(select(Identity).where(Identity.name == name))

    def identities(self, session: Session, query: str | None = None, offset: int = 0,
                   limit: int | None = None) -> list[Identity]:
        """People by name; `query` keeps those whose name holds it, in any letter case; `offset` and `limit` take
        one page of them."""
        statement = self._people(query).order_by(Identity.name).offset(offset)
        return list(session.scalars(statement if limit is None else statement.limit(limit)))

    def count_identities(self, session: Session, query: str | None = None) -> int:
        """How many people `identities` would list for `query`, without reading them."""
        return int(session.scalar(select(func.count()).select_from(self._people(query).subquery())))

    def _people(self, query: str | None):
        statement = select(Identity)
        # autoescape: '%' and '_' in a search are letters, not LIKE wildcards, on both backends (ESCAPE '/').
        return (statement.where(self.backend.name_key(Identity.name).contains(query.lower(), autoescape=True))
                if query else statement)

    def identity_ids(self, session: Session, names: Iterable[str]) -> dict[str, int]:
        """{name: identity id} of the people with exactly these names."""
        return {name: identity for chunk in chunked(sorted(set(names)))
                for name, identity in session.execute(select(Identity.name, Identity.id)
                                                      .where(Identity.name.in_(chunk)))}

    def same_name_key(self, session: Session, key: str) -> list[tuple[int, str]]:
        """(id, name) of the people whose name has this `facerec.gallery.names.name_key`."""
        return [(int(i), str(n)) for i, n in session.execute(
            select(Identity.id, Identity.name).where(self.backend.name_key(Identity.name) == key))]

    def names_with_keys(self, session: Session, keys: list[str]) -> list[str]:
        """Names of the people whose `name_key` is one of `keys`."""
        return [str(name) for chunk in chunked(keys)
                for name, in session.execute(select(Identity.name)
                                             .where(self.backend.name_key(Identity.name).in_(chunk)))]

    # ----- writes (inside the caller's `writing()` transaction) -----------------------------------------------
    def add_person(self, session: Session, name: str, note: str | None, face: dict) -> tuple[int, int]:
        """A new person with one face (`face`: the `add_faces` row keys but identity_id); (identity id, face id)."""
        identity = Identity(name=name, note=note)
        session.add(identity)
        record = _face(face)
        identity.faces.append(record)
        session.flush()
        session.add(JournalEntry(op="add", face_id=record.id))
        return identity.id, record.id

    def add_face_to(self, session: Session, person: Identity, face: dict) -> int:
        """Another face of `person` (who is then updated now); returns its id."""
        record = _face(face)
        person.faces.append(record)
        person.updated_at = utcnow()
        session.flush()
        session.add(JournalEntry(op="add", face_id=record.id))
        return record.id

    def create_identities(self, session: Session, people: list[dict], now: datetime) -> dict[str, int]:
        """New people from {"name", optional "note", "created_at", "updated_at"} rows, in one statement;
        {name: identity id}."""
        if not people:
            return {}
        created = session.scalars(insert(Identity).returning(Identity.id, sort_by_parameter_order=True),
                                  [{"note": None, "created_at": now, "updated_at": now, **person}
                                   for person in people])
        return dict(zip([person["name"] for person in people], created))

    def add_faces(self, session: Session, rows: list[dict], now: datetime) -> list[int]:
        """Faces in one statement, journalled; each row: identity_id, embedding (float32 vector), model_id,
        photo_sha256, box, landmarks, crop_jpeg (or None), optional created_at (else `now`). Returns the new
        face ids in row order."""
        if not rows:
            return []
        face_ids = list(session.scalars(insert(Face).returning(Face.id, sort_by_parameter_order=True),
                                        [{"created_at": now, **row, "embedding": _encoded(row["embedding"])}
                                         for row in rows]))
        session.execute(insert(JournalEntry), [{"op": "add", "face_id": f} for f in face_ids])
        return face_ids

    def rename(self, session: Session, person: Identity, name: str) -> None:
        person.name, person.updated_at = name, utcnow()
        session.flush()

    def delete_person(self, session: Session, person: Identity) -> None:
        """The person, their faces (journalled) and their sightings."""
        for face in person.faces:
            session.add(JournalEntry(op="remove", face_id=face.id))
        self.sightings.remove_person(session, person.id)
        session.delete(person)

    def faces_for_update(self, session: Session) -> list[Face]:
        return list(session.scalars(select(Face)))

    def replace_embedding(self, session: Session, face: Face, embedding: np.ndarray, model_id: str) -> None:
        """A face re-embedded by another model: journalled as a remove and an add of the same face."""
        face.embedding, face.model_id = _encoded(embedding), model_id
        session.add(JournalEntry(op="remove", face_id=face.id))
        session.add(JournalEntry(op="add", face_id=face.id))

    # ----- settings and counts --------------------------------------------------------------------------------
    def get_setting(self, key: str, default: str | None = None) -> str | None:
        with self.session() as session:
            row = session.get(Setting, key)
            return row.value if row else default

    def set_setting(self, key: str, value) -> None:
        with self.writing() as session, session.begin():
            session.merge(Setting(key=key, value=value if isinstance(value, str) else json.dumps(value)))

    def counts(self) -> tuple[int, int]:
        with self.session() as session:
            return (int(session.scalar(select(func.count(Identity.id)))),
                    int(session.scalar(select(func.count(Face.id)))))


def display_url(url: str) -> str:
    """The URL without its password, for reports."""
    return make_url(url).render_as_string(hide_password=True)


def chunked(ids: Iterable, size: int = 500):
    """Split long id lists: SQLite limits the number of bound parameters in one statement."""
    ids = list(ids)
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _face(values: dict) -> Face:
    return Face(**{**values, "embedding": _encoded(values["embedding"])})


def _encoded(vector: np.ndarray) -> bytes:
    return np.asarray(vector, np.float32).tobytes()


def _decoded(value: bytes) -> np.ndarray:
    return np.frombuffer(value, dtype=np.float32)


SQLITE_FULL = 13
POSTGRESQL_DISK_FULL = "53100"


def _disk_full_as_storage_full(context) -> Exception | None:
    """A write that failed because the disk is full becomes one plain sentence (StorageFull), whatever the
    backend said (SQLite's "database or disk is full", PostgreSQL's SQLSTATE 53100); other errors pass through."""
    error = context.original_exception
    full = (getattr(error, "sqlite_errorcode", None) == SQLITE_FULL or getattr(error, "sqlstate", None) ==
            POSTGRESQL_DISK_FULL or "disk is full" in str(error) or isinstance(error, OSError) and error.errno ==
            errno.ENOSPC)
    if full:
        return StorageFull("the gallery's disk is full: nothing was saved; free some space and try again")
    return None
