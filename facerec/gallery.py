"""The Gallery: the one object the UI and the CLI call to enrol, identify, verify and manage people.

The database (`facerec.store`) is the source of truth; the FAISS index (`facerec.index`) is a cache of it,
changed only after a transaction commits and brought up to date from the journal before every search, so
several threads and processes can share one gallery folder.

Every check that decides whether a write may happen (name taken, same photo already enrolled, look-alike) is
repeated inside the write transaction, which SQLite serialises across threads and processes, so two
simultaneous enrolments cannot both pass it. A write that is refused changes nothing.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
from PIL import Image
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from .archive import EXPORT_FORMAT, ImportLimits, encode_crop, open_private, read_export
from .detect import DetectedFace
from .embed import checked_embeddings
from .errors import (
    DuplicatePhoto, FaceRecError, IdentityMismatch, InvalidArgument, ModelMismatch, MultipleFaces, NameTaken, NoFace,
    PossibleDuplicate, UnknownIdentity,
)
from .health import HealthReport, gallery_health
from .image import ImageInput
from .index import FaceIndex, refuse_to_replace_saved_index
from .messages import no_face_message, similarity_text
from .names import clean_name, name_key
from .pipeline import FacePipeline, Photo
from .results import Candidate, EnrollResult, FaceMatch, IdentityInfo, VerifyResult
from .settings import Settings
from .store import Face, Identity, JournalEntry, Store, chunked, database_file, utcnow
from .threshold_policy import ThresholdInForce

SAVE_INDEX_EVERY = 50


class Gallery:
    def __init__(self, settings: Settings | None = None, pipeline: FacePipeline | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.pipeline = pipeline or FacePipeline(self.settings)
        # Before any file is created: without a pinned threshold, a missing or unreadable model card is an error.
        self.policy = self.settings.threshold_policy(self.pipeline.embedder.sha256)
        home = self.settings.home
        if not home.exists():
            home.mkdir(parents=True, mode=0o700)  # the gallery's faces are its owner's alone
        database = database_file(self.settings.resolved_database_url)
        if database is not None and (not database.exists() or database.stat().st_size == 0):
            refuse_to_replace_saved_index(home)  # gallery.db deleted or emptied: never start over its index
        self.store = Store(self.settings.resolved_database_url)
        self.model_id = self.pipeline.embedder.model_id
        try:
            self.index = FaceIndex.open(home, self.store, self.model_id, self.settings.index_kind,
                                        hnsw_m=self.settings.hnsw_m, ef_search=self.settings.hnsw_ef_search)
        except BaseException:
            self.store.dispose()
            raise
        # One line each for the user (the CLI prints them, the app logs them): what opening had to repair.
        self.notices: list[str] = [self.index.notice] if self.index.notice else []
        self._writes_since_save = 0

    @classmethod
    def open(cls, home: str | Path | None = None, **overrides) -> "Gallery":
        """Open (creating if needed) the gallery in `home` (default: FACEREC_HOME, else ./facerec_home)."""
        return cls(Settings.from_env(home=home, **overrides))

    def __enter__(self) -> "Gallery":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        """Save the index (a cache; a crash before this costs only a journal replay) and release the database."""
        try:
            self.index.catch_up(self.store)
            self.index.save(self.settings.home, self.model_id, self.store)
        finally:
            self.store.dispose()

    # ----- the threshold in force ---------------------------------------------------------------------------
    @property
    def threshold(self) -> float:
        """The cosine similarity at or above which a face is taken to be an enrolled person, now: derived from the
        accepted stranger-match rate for the gallery's current size (or pinned). See `threshold_in_force`."""
        return self.threshold_in_force().threshold

    def threshold_in_force(self, fpir: float | None = None, threshold: float | None = None,
                           with_people: bool = False) -> ThresholdInForce:
        """The threshold identify and the look-alike check use for this gallery now, with its expected
        stranger-match rate (`facerec.threshold_policy`); `fpir` / `threshold` override the settings for one
        decision. The people count is only reported, so it is read only when asked for."""
        self.index.catch_up(self.store)
        people = self.store.counts()[0] if with_people else None
        return self.policy.for_gallery(len(self.index), people, fpir=fpir, threshold=threshold)

    def verification_threshold(self, fpir: float | None = None, threshold: float | None = None) -> ThresholdInForce:
        """The threshold verify uses: the same rule for one comparison (its FPIR is the per-comparison FAR)."""
        return self.policy.for_verification(fpir=fpir, threshold=threshold)

    # ----- reading photos -------------------------------------------------------------------------------
    def read(self, photo: ImageInput, label: str | None = None) -> Photo:
        """Decode a photo once (to detect, enrol or identify from it); `label` names it in error messages."""
        return self.pipeline.read(photo, label)

    def detect(self, photo: ImageInput | Photo) -> tuple[Photo, list[DetectedFace]]:
        """Decode and detect: what the UI draws before the user picks a face."""
        photo = photo if isinstance(photo, Photo) else self.read(photo)
        return photo, self.pipeline.detect(photo)

    # ----- enrolment ------------------------------------------------------------------------------------
    def enroll(self, photo: ImageInput | Photo, name: str, face_index: int | None = None,
               allow_lookalike: bool = False, note: str | None = None) -> EnrollResult:
        """Enrol a new person from one photo.

        Raises MultipleFaces (unless `face_index` picks one), NoFace, DuplicatePhoto, InvalidArgument (name taken,
        also in another letter case, or unusable: `facerec.names`) and PossibleDuplicate when the face matches another identity at or above the threshold (a
        duplicate or look-alike), unless `allow_lookalike`.
        """
        name = clean_name(name)
        photo, face, crop, embedding = self._one_face(photo, face_index)
        with self.store.session() as session:
            self._refuse_taken_name(session, name)
        self._refuse_duplicate_photo(photo, face)
        rule = self.threshold_in_force()  # catches the index up: every face committed up to here is searched
        searched_to = self.index.seq
        lookalikes = self._lookalikes(embedding, rule)
        if lookalikes and not allow_lookalike:
            raise self._possible_duplicate(lookalikes, rule)
        try:
            with self.store.writing() as session, session.begin():
                # The same checks again, now that no other writer can commit: the earlier ones only spared us
                # taking the lock for a doomed write.
                self._refuse_taken_name(session, name)
                self._refuse_duplicate_photo(photo, face, session)
                # At the rule of the first search: a face committed since makes the gallery's threshold at most
                # marginally higher, and the result reports the rule the check used.
                late = self._lookalikes(embedding, rule, self._committed_since(session, searched_to, embedding))
                if late and not allow_lookalike:
                    raise self._possible_duplicate(late, rule)
                lookalikes = _merged(lookalikes, late)
                identity = Identity(name=name, note=note)
                session.add(identity)
                record = self._face_record(photo, face, crop, embedding)
                identity.faces.append(record)
                session.flush()
                session.add(JournalEntry(op="add", face_id=record.id))
                identity_id, face_id = identity.id, record.id
        except IntegrityError:
            raise NameTaken(f"'{name}' is already enrolled; add this photo to that person instead", name) from None
        self._after_write()
        return EnrollResult(identity_id, name, face_id, 1, face, crop, lookalikes, rule)

    def add_photo(self, identity: str | int, photo: ImageInput | Photo, face_index: int | None = None,
                  allow_mismatch: bool = False) -> EnrollResult:
        """Add another photo of an enrolled person; `lookalikes` in the result lists other people it resembles.

        Raises IdentityMismatch, unless `allow_mismatch`, when the face is not this person's: it matches none of
        their faces at the threshold (the enrolment look-alike test), or it matches someone else better.
        """
        photo, face, crop, embedding = self._one_face(photo, face_index)
        self._refuse_duplicate_photo(photo, face)
        with self.store.session() as session:
            person = self._identity(session, identity)
            name, own_faces = person.name, [f.id for f in person.faces]
        rule = self.threshold_in_force()
        lookalikes = self._lookalikes(embedding, rule)
        if not allow_mismatch and (not lookalikes or lookalikes[0][0] != name):
            raise self._mismatch(name, own_faces, embedding, lookalikes, rule)
        with self.store.writing() as session, session.begin():
            person = self._identity(session, identity)
            self._refuse_duplicate_photo(photo, face, session)
            record = self._face_record(photo, face, crop, embedding)
            person.faces.append(record)
            person.updated_at = utcnow()
            session.flush()
            session.add(JournalEntry(op="add", face_id=record.id))
            result = (person.id, person.name, record.id, len(person.faces))
        self._after_write()
        return EnrollResult(*result, face, crop, [(n, s) for n, s in lookalikes if n != result[1]], rule)

    def add_embeddings(self, entries: list[dict]) -> list[int]:
        """Bulk enrolment of precomputed embeddings in one transaction (evaluation, imports, benchmarks).

        Each entry: {"name", "embedding" [512] float32 (scaled to unit length; NaN, infinite or zero refused),
        "photo_sha256", "box", "landmarks", optional "crop" (uint8 112x112x3)}. Identities are created as needed.
        Returns the new face ids.
        """
        if not entries:
            return []
        now = utcnow()
        names = [clean_name(entry["name"]) for entry in entries]
        try:
            vectors = np.array([entry["embedding"] for entry in entries], np.float32)
        except (TypeError, ValueError):
            raise InvalidArgument("every embedding must be a list of numbers, all of one length") from None
        vectors = checked_embeddings(vectors, self.index.dimension, normalise=True)
        with self.store.writing() as session, session.begin():
            ids = {name: identity for chunk in chunked(sorted(set(names)))
                   for name, identity in session.execute(select(Identity.name, Identity.id)
                                                         .where(Identity.name.in_(chunk)))}
            new_names = [name for name in dict.fromkeys(names) if name not in ids]
            if new_names:
                created = session.scalars(insert(Identity).returning(Identity.id, sort_by_parameter_order=True),
                                          [{"name": n, "created_at": now, "updated_at": now} for n in new_names])
                ids.update(zip(new_names, created))
            rows = []
            for name, entry, vector in zip(names, entries, vectors):
                crop = entry.get("crop")
                rows.append({"identity_id": ids[name], "model_id": self.model_id, "created_at": now,
                             "embedding": vector.tobytes(),
                             "photo_sha256": entry.get("photo_sha256", ""), "box": entry.get("box") or [],
                             "landmarks": entry.get("landmarks") or [],
                             "crop_jpeg": encode_crop(crop) if crop is not None and self.settings.store_crops
                             else None})
            face_ids = list(session.scalars(insert(Face).returning(Face.id, sort_by_parameter_order=True), rows)) \
                if rows else []
            if face_ids:
                session.execute(insert(JournalEntry), [{"op": "add", "face_id": f} for f in face_ids])
        self._after_write()
        return face_ids

    # ----- search ---------------------------------------------------------------------------------------
    def identify(self, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
                 fpir: float | None = None) -> list[FaceMatch]:
        """Every face in the photo -> best identity (or unknown below the threshold) and top-k candidates.

        The threshold is the one in force for this gallery (`threshold_in_force`); `fpir` (an accepted
        stranger-match rate) or `threshold` (a pinned cosine) overrides the settings for this call."""
        if top_k < 1:
            raise InvalidArgument("top_k must be at least 1")
        photo, faces = self.detect(photo)
        if not faces:
            raise NoFace(no_face_message(photo.pixels.shape, self.settings.min_face_size))
        _crops, embeddings = self.pipeline.embed(photo, faces)
        ranked = self.search(embeddings, top_k)
        rule = self.threshold_in_force(fpir=fpir, threshold=threshold)
        return [self._match(face, candidates, rule) for face, candidates in zip(faces, ranked)]

    def search(self, embeddings: np.ndarray, top_k: int = 5) -> list[list[Candidate]]:
        """Top-k identities (best face per identity) for each query embedding [Q, 512]."""
        self._refuse_other_model()
        self.index.catch_up(self.store)
        similarities, face_ids = self.index.search(embeddings, top_k * 4)
        labels = self.store.face_labels(sorted({int(f) for f in face_ids.ravel() if f >= 0}))
        results = []
        for sims, ids in zip(similarities, face_ids):
            best: dict[int, Candidate] = {}
            for sim, face_id in zip(sims, ids):
                if face_id < 0 or int(face_id) not in labels:
                    continue
                identity_id, name = labels[int(face_id)]
                if identity_id not in best or sim > best[identity_id].similarity:
                    best[identity_id] = Candidate(name, identity_id, float(sim))
            results.append(sorted(best.values(), key=lambda c: -c.similarity)[:top_k])
        return results

    def verify(self, photo_a: ImageInput | Photo, photo_b: ImageInput | Photo,
               threshold: float | None = None, fpir: float | None = None,
               face_a: int | None = None, face_b: int | None = None) -> VerifyResult:
        """Same person or not: compares one face of each photo, at the threshold the policy gives one comparison
        (`verification_threshold`; `fpir` or a pinned `threshold` override it for this call).

        A photo with several faces needs `face_a` / `face_b` (its face's index, left to right from 0, as `detect`
        lists them); MultipleFaces otherwise, never a silent guess. NoFace when a photo has none."""
        rule = self.verification_threshold(fpir=fpir, threshold=threshold)
        embeddings, faces = [], []
        for label, source, index in (("the first photo", photo_a, face_a), ("the second photo", photo_b, face_b)):
            photo, detected = self.detect(source)
            face = _chosen_face(photo, detected, index, label, self.settings.min_face_size)
            embeddings.append(self.pipeline.embed(photo, [face])[1][0])
            faces.append(face)
        similarity = float(np.dot(embeddings[0], embeddings[1]))
        return VerifyResult(similarity >= rule.threshold, similarity, rule.threshold, faces[0], faces[1], rule)

    # ----- management -----------------------------------------------------------------------------------
    def list(self, query: str | None = None) -> list[IdentityInfo]:
        """Enrolled identities by name; `query` filters by case-insensitive substring."""
        with self.store.session() as session:
            return [_info(person) for person in session.scalars(_people(query).order_by(Identity.name))]

    def list_page(self, query: str | None = None, offset: int = 0, limit: int = 50) -> tuple[list[IdentityInfo], int]:
        """One page of `list` (same filter and order: `limit` people from position `offset`) and how many match in
        all, without reading the others (the REST API pages through large galleries)."""
        if offset < 0 or limit < 1:
            raise InvalidArgument("offset must be at least 0 and limit at least 1")
        with self.store.session() as session:
            total = int(session.scalar(select(func.count()).select_from(_people(query).subquery())))
            page = session.scalars(_people(query).order_by(Identity.name).offset(offset).limit(limit))
            return [_info(person) for person in page], total

    def get(self, identity: str | int) -> IdentityInfo:
        with self.store.session() as session:
            return _info(self._identity(session, identity))

    def face_crop(self, face_id: int) -> bytes | None:
        """The stored JPEG crop of a face (None in privacy mode)."""
        with self.store.session() as session:
            face = session.get(Face, face_id)
            return face.crop_jpeg if face else None

    def rename(self, identity: str | int, new_name: str) -> IdentityInfo:
        new_name = clean_name(new_name)
        try:
            with self.store.writing() as session, session.begin():
                person = self._identity(session, identity)
                self._refuse_taken_name(session, new_name, person.id)
                person.name, person.updated_at = new_name, utcnow()
                session.flush()
                info = _info(person)
        except IntegrityError:
            raise NameTaken(f"'{new_name}' is already enrolled", new_name) from None
        return info

    def delete(self, identity: str | int) -> IdentityInfo:
        """Remove a person and all their faces from the database and the index."""
        with self.store.writing() as session, session.begin():
            person = self._identity(session, identity)
            info = _info(person)
            for face in person.faces:
                session.add(JournalEntry(op="remove", face_id=face.id))
            session.delete(person)
        self._after_write()
        return info

    def stats(self) -> dict:
        identities, faces = self.store.counts()
        with self.store.session() as session:
            models = sorted(session.scalars(select(Face.model_id).distinct()))
        rule = self.threshold_in_force(with_people=True)
        return {"identities": identities, "faces": faces, "model_id": self.model_id, "gallery_models": models,
                "threshold": rule.threshold, "threshold_policy": rule.to_dict(),
                "index": self.settings.index_kind, "index_size": len(self.index),
                "home": str(self.settings.home), "database": self.settings.resolved_database_url,
                "store_crops": self.settings.store_crops, "model_warning": self.model_warning()}

    def model_warning(self) -> str | None:
        with self.store.session() as session:
            # Two index lookups first: `model_id != ...` scans the whole index, and this runs on every identify.
            if all(session.scalar(select(Face.model_id).where(other).limit(1)) is None
                   for other in (Face.model_id < self.model_id, Face.model_id > self.model_id)):
                return None
            others = sorted(session.scalars(select(Face.model_id).where(Face.model_id != self.model_id)
                                            .distinct().limit(5)))
        return (f"this gallery holds embeddings from another model ({', '.join(others)}); the loaded model is "
                f"{self.model_id}. Run `facerec reindex` to re-embed from the stored crops.")

    def health(self, top_pairs: int = 10) -> HealthReport:
        """The embedding metrics over every enrolled face, plus confusable pairs and suspected duplicates."""
        face_ids, embeddings = self.store.embeddings()
        labels = self.store.face_labels()
        identity_ids = np.array([labels[int(f)][0] for f in face_ids], dtype=np.int64)
        names = {identity: name for identity, name in labels.values()}
        rule = self.threshold_in_force(with_people=True)
        report = gallery_health(embeddings, identity_ids, names, rule.threshold, top_pairs)
        report.threshold_policy = rule.to_dict()
        report.policy_growth = [{"faces": r.comparisons, "threshold": round(r.threshold, 4),
                                 "expected_fpir": r.expected_fpir, "true_match_rate": r.true_match_rate}
                                for r in self.policy.growth()]
        return report

    def reindex(self) -> int:
        """Re-embed every face from its stored crop with the loaded model; returns how many were re-embedded."""
        with self.store.writing() as session, session.begin():
            faces = list(session.scalars(select(Face)))
            missing = [f.id for f in faces if f.crop_jpeg is None]
            if missing:
                raise FaceRecError(f"{len(missing)} faces have no stored crop (privacy mode); enroll them again")
            for start in range(0, len(faces), 64):
                chunk = faces[start : start + 64]
                crops = np.stack([np.asarray(Image.open(io.BytesIO(f.crop_jpeg)).convert("RGB")) for f in chunk])
                for face, embedding in zip(chunk, self.pipeline.embedder.embed(crops)):
                    face.embedding, face.model_id = embedding.astype(np.float32).tobytes(), self.model_id
                    session.add(JournalEntry(op="remove", face_id=face.id))
                    session.add(JournalEntry(op="add", face_id=face.id))
        self.index.rebuild(self.store)
        self.index.save(self.settings.home, self.model_id, self.store)
        return len(faces)

    # ----- export / import ------------------------------------------------------------------------------
    def export(self, path: str | Path, include_crops: bool = True) -> int:
        """Write a portable zip (gallery.json + embeddings.npy + optional crops/); returns the face count."""
        with self.store.session() as session:
            people = list(session.scalars(select(Identity).order_by(Identity.name)))
            records, vectors = [], []
            with open_private(path) as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
                for person in people:
                    for face in person.faces:
                        crop_name = None
                        if include_crops and face.crop_jpeg:
                            crop_name = f"crops/{face.id}.jpg"
                            archive.writestr(crop_name, face.crop_jpeg)
                        records.append({"name": person.name, "note": person.note, "model_id": face.model_id,
                                        "photo_sha256": face.photo_sha256, "box": face.box,
                                        "landmarks": face.landmarks, "crop": crop_name})
                        vectors.append(face.vector)
                buffer = io.BytesIO()
                np.save(buffer, np.stack(vectors) if vectors else np.zeros((0, 512), np.float32))
                archive.writestr("embeddings.npy", buffer.getvalue())
                archive.writestr("gallery.json", json.dumps({"format": EXPORT_FORMAT, "faces": records}))
        return len(records)

    def import_(self, path: str | Path, limits: ImportLimits = ImportLimits()) -> dict:
        """Add the people of an exported zip, all or nothing. The whole file is checked first (names, vectors,
        crops, within `limits`; `facerec.archive`), then one transaction adds every face. Faces already present
        (same photo and face) are skipped; faces from another model are re-embedded from their crops."""
        faces = read_export(path, self.model_id, self.index.dimension, limits)
        others = [face for face in faces if face.vector is None]
        if others:
            crops = np.stack([np.asarray(Image.open(io.BytesIO(f.crop_jpeg)).convert("RGB")) for f in others])
            for face, vector in zip(others, self.pipeline.embedder.embed(crops)):
                face.vector = vector
        now, added, skipped = utcnow(), [], 0
        with self.store.writing() as session, session.begin():
            names = sorted({face.name for face in faces})
            ids = {name: identity for chunk in chunked(names)
                   for name, identity in session.execute(select(Identity.name, Identity.id)
                                                         .where(Identity.name.in_(chunk)))}
            self._refuse_case_clashes(session, [name for name in names if name not in ids])
            present: dict[str, list[tuple[str, list]]] = {}
            by_id = {identity: name for name, identity in ids.items()}
            for chunk in chunked(list(by_id)):
                for identity, sha, box in session.execute(select(Face.identity_id, Face.photo_sha256, Face.box)
                                                          .where(Face.identity_id.in_(chunk))):
                    present.setdefault(by_id[identity], []).append((sha, box))
            for face in faces:
                if any(_same_face(face.photo_sha256, face.box, sha, box) for sha, box in present.get(face.name, [])):
                    skipped += 1
                    continue
                present.setdefault(face.name, []).append((face.photo_sha256, face.box))
                added.append(face)
            new_names = [name for name in dict.fromkeys(face.name for face in added) if name not in ids]
            notes = {face.name: face.note for face in reversed(added)}  # the first record's note for a new person
            if new_names:
                created = session.scalars(insert(Identity).returning(Identity.id, sort_by_parameter_order=True),
                                          [{"name": n, "note": notes[n], "created_at": now, "updated_at": now}
                                           for n in new_names])
                ids.update(zip(new_names, created))
            rows = [{"identity_id": ids[face.name], "model_id": self.model_id, "created_at": now,
                     "embedding": np.asarray(face.vector, np.float32).tobytes(), "photo_sha256": face.photo_sha256,
                     "box": face.box, "landmarks": face.landmarks,
                     "crop_jpeg": face.crop_jpeg if self.settings.store_crops else None} for face in added]
            face_ids = list(session.scalars(insert(Face).returning(Face.id, sort_by_parameter_order=True), rows)) \
                if rows else []
            if face_ids:
                session.execute(insert(JournalEntry), [{"op": "add", "face_id": f} for f in face_ids])
        self._after_write()
        return {"added": len(added), "skipped": skipped}

    # ----- internals ------------------------------------------------------------------------------------
    def _one_face(self, photo, face_index):
        photo, faces = self.detect(photo)
        face = _chosen_face(photo, faces, face_index, "the photo", self.settings.min_face_size)
        crops, embeddings = self.pipeline.embed(photo, [face])
        return photo, face, crops[0], embeddings[0]

    def _face_record(self, photo: Photo, face: DetectedFace, crop: np.ndarray, embedding: np.ndarray) -> Face:
        crop_jpeg = encode_crop(crop) if self.settings.store_crops else None
        data = face.to_dict()
        return Face(embedding=embedding.astype(np.float32).tobytes(), model_id=self.model_id,
                    photo_sha256=photo.sha256, box=data["box"], landmarks=data["landmarks"], crop_jpeg=crop_jpeg)

    def _refuse_duplicate_photo(self, photo: Photo, face: DetectedFace, session=None) -> None:
        if session is None:
            with self.store.session() as session:
                return self._refuse_duplicate_photo(photo, face, session)
        rows = session.execute(select(Face.photo_sha256, Face.box, Identity.name).join(Identity)
                               .where(Face.photo_sha256 == photo.sha256)).all()
        for sha, box, name in rows:
            if _same_face(photo.sha256, list(face.box), sha, box):
                raise DuplicatePhoto(f"this photo (this face) is already enrolled, as '{name}'", name)

    def _refuse_taken_name(self, session, name: str, allowed_id: int | None = None) -> None:
        """A name is taken when another person has it, or has it in another letter case (`facerec.names`)."""
        for identity, taken in session.execute(select(Identity.id, Identity.name)
                                               .where(func.lower(Identity.name) == name_key(name))):
            if identity == allowed_id:
                continue
            if taken == name:
                raise NameTaken(f"'{name}' is already enrolled; add this photo to that person instead", taken)
            raise NameTaken(f"'{name}' differs only in letter case from enrolled '{taken}'; use that name "
                            "(to add a photo to that person) or another one", taken)

    def _refuse_case_clashes(self, session, names: list[str]) -> None:
        keys = {name_key(name): name for name in names}
        for chunk in chunked(list(keys)):
            for taken, in session.execute(select(Identity.name).where(func.lower(Identity.name).in_(chunk))):
                raise InvalidArgument(f"cannot import this file: it names '{keys[name_key(taken)]}', which differs "
                                      f"only in letter case from enrolled '{taken}'. Nothing was imported.")

    def _lookalikes(self, embedding: np.ndarray, rule: ThresholdInForce,
                    among: list[Candidate] | None = None) -> list[tuple[str, float]]:
        """Enrolled people this face matches at or above the threshold in force (`rule`), best first (searched
        for, or `among`): the same rule as identify, so a new person is refused as a look-alike exactly when
        identify would have given them someone else's name, and a photo added to a person is refused exactly when
        identify would not name them."""
        candidates = self.search(embedding[None], top_k=5)[0] if among is None else among
        return [(c.name, c.similarity) for c in candidates if c.similarity >= rule.threshold]

    def _committed_since(self, session, seq: int, embedding: np.ndarray) -> list[Candidate]:
        """The people whose faces were committed after journal position `seq` (by any thread or process), as
        candidates for `embedding`: what a search made at `seq` could not see. Usually none."""
        face_ids = list(session.scalars(select(JournalEntry.face_id).where(JournalEntry.seq > seq,
                                                                           JournalEntry.op == "add")))
        best: dict[int, Candidate] = {}
        for chunk in chunked(face_ids):
            for identity, name, vector in session.execute(select(Identity.id, Identity.name, Face.embedding)
                                                          .join(Identity).where(Face.id.in_(chunk))):
                similarity = float(np.dot(np.frombuffer(vector, np.float32), embedding))
                if identity not in best or similarity > best[identity].similarity:
                    best[identity] = Candidate(name, identity, similarity)
        return sorted(best.values(), key=lambda c: -c.similarity)

    def _possible_duplicate(self, lookalikes: list[tuple[str, float]], rule: ThresholdInForce) -> PossibleDuplicate:
        # Facts only: each shell adds what to do there (a tick box, --force, allow_lookalike=True).
        listed = ", ".join(f"{n} ({similarity_text(s)})" for n, s in lookalikes[:3])
        return PossibleDuplicate(
            f"this face matches already-enrolled {listed}, at or above the threshold "
            f"{similarity_text(rule.threshold)} ({_how_set(rule)}), so it may be the same person", lookalikes)

    def _mismatch(self, name: str, own_faces: list[int], embedding: np.ndarray,
                  lookalikes: list[tuple[str, float]], rule: ThresholdInForce) -> IdentityMismatch:
        _ids, vectors = self.store.embeddings(own_faces)
        own = float(np.max(vectors @ embedding)) if len(vectors) else float("nan")
        others = [(n, s) for n, s in lookalikes if n != name]
        if others:
            listed = ", ".join(f"{n} ({similarity_text(s)})" for n, s in others[:3])
            problem = f"this face matches {listed} better than '{name}' ({similarity_text(own)})"
        else:
            problem = (f"this face does not match '{name}' (similarity {similarity_text(own)}, threshold "
                       f"{similarity_text(rule.threshold)}, {_how_set(rule)})")
        return IdentityMismatch(f"{problem}; nothing was added", others)  # what to do: each shell says

    def _match(self, face: DetectedFace, candidates: list[Candidate], rule: ThresholdInForce) -> FaceMatch:
        if candidates and candidates[0].similarity >= rule.threshold:
            return FaceMatch(face, candidates[0].name, candidates[0].similarity, candidates, rule.threshold, rule)
        best = candidates[0].similarity if candidates else None
        return FaceMatch(face, None, best, candidates, rule.threshold, rule)

    def _refuse_other_model(self) -> None:
        warning = self.model_warning()
        if warning:
            raise ModelMismatch(warning)

    def _identity(self, session, identity: str | int) -> Identity:
        if isinstance(identity, (int, np.integer)) and not isinstance(identity, bool):
            person = session.get(Identity, int(identity))
            if person is None:
                raise UnknownIdentity(f"no enrolled person has the id {int(identity)}")
        else:
            # As typed first (a name stored before names were cleaned), then in its cleaned form.
            person = session.scalar(select(Identity).where(Identity.name == str(identity)))
            if person is None:
                person = session.scalar(select(Identity).where(Identity.name == _cleaned_or_none(identity)))
        if person is None:
            raise UnknownIdentity(f"no enrolled person called '{identity}'")
        return person

    def _after_write(self) -> None:
        self.index.catch_up(self.store)
        self._writes_since_save += 1
        if self._writes_since_save >= SAVE_INDEX_EVERY:
            self.index.save(self.settings.home, self.model_id, self.store)
            self._writes_since_save = 0


def _people(query: str | None):
    """The identities whose name contains `query` (any letter case; all when it is empty), unordered."""
    statement = select(Identity)
    return statement.where(func.lower(Identity.name).contains(query.lower())) if query else statement


def _cleaned_or_none(name: object) -> str | None:
    try:
        return clean_name(str(name))
    except InvalidArgument:
        return None


def _merged(*lists: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """(name, similarity) lists as one, best similarity per name, best first."""
    best: dict[str, float] = {}
    for name, similarity in (pair for pairs in lists for pair in pairs):
        best[name] = max(similarity, best.get(name, similarity))
    return sorted(best.items(), key=lambda pair: -pair[1])


def _how_set(rule: ThresholdInForce) -> str:
    """How the threshold in a refusal was set, in a few words."""
    faces = f"{rule.comparisons:,} enrolled face{'' if rule.comparisons == 1 else 's'}"
    return "pinned" if rule.pinned else f"set by the accepted stranger-match rate for {faces}"


def _chosen_face(photo: Photo, faces: list[DetectedFace], index: int | None, label: str,
                 min_face_size: float) -> DetectedFace:
    """The one face of `photo` a caller means: its only face, or the one `index` picks (left to right, from 0).
    NoFace, MultipleFaces (listing the faces, so a caller can offer the choice) or InvalidArgument otherwise."""
    if not faces:
        raise NoFace(no_face_message(photo.pixels.shape, min_face_size, label))
    if index is None:
        if len(faces) > 1:
            listed = "; ".join(f"#{i}: box {tuple(round(v) for v in f.box)}" for i, f in enumerate(faces))
            raise MultipleFaces(f"{label} has {len(faces)} faces ({listed})", faces, label)
        index = 0
    if not 0 <= index < len(faces):
        raise InvalidArgument(f"face index {index} is out of range: {label} has {len(faces)} face(s)")
    return faces[index]


def _same_face(sha_a: str, box_a: list, sha_b: str, box_b: list) -> bool:
    """Same photo (bytes) and the same face in it; faces stored without a box match on the photo alone."""
    if not sha_a or sha_a != sha_b:
        return False
    return not box_a or not box_b or _iou(box_a, box_b) > 0.5


def _info(person: Identity) -> IdentityInfo:
    return IdentityInfo(person.id, person.name, len(person.faces), person.note, person.created_at,
                        person.updated_at, [f.id for f in person.faces])


def _iou(a, b) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0
