"""The Gallery: the one object the UI and the CLI call to enrol, identify, verify and manage people.

The database (`facerec.store`) is the source of truth; the FAISS index (`facerec.index`) is a cache of it,
changed only after a transaction commits and brought up to date from the journal before every search, so
several threads and processes can share one gallery folder.
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

from .detect import DetectedFace
from .errors import (
    DuplicatePhoto, FaceRecError, InvalidArgument, ModelMismatch, MultipleFaces, NoFace, PossibleDuplicate,
    UnknownIdentity,
)
from .health import HealthReport, gallery_health
from .image import ImageInput
from .index import FaceIndex
from .pipeline import FacePipeline, Photo
from .results import Candidate, EnrollResult, FaceMatch, IdentityInfo, VerifyResult
from .settings import Settings
from .store import Face, Identity, JournalEntry, Store, chunked, utcnow
from .threshold_policy import ThresholdInForce, ThresholdPolicy

SAVE_INDEX_EVERY = 50
EXPORT_FORMAT = "facerec-gallery-v1"


class Gallery:
    def __init__(self, settings: Settings | None = None, pipeline: FacePipeline | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.settings.home.mkdir(parents=True, exist_ok=True)
        self.pipeline = pipeline or FacePipeline(self.settings)
        self.store = Store(self.settings.resolved_database_url)
        self.model_id = self.pipeline.embedder.model_id
        self.policy = ThresholdPolicy.from_card(self.settings.model_card(), self.settings.fpir,
                                                self.settings.similarity_threshold, self.pipeline.embedder.sha256)
        self.index = FaceIndex.open(self.settings.home, self.store, self.model_id, self.settings.index_kind,
                                    hnsw_m=self.settings.hnsw_m, ef_search=self.settings.hnsw_ef_search)
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
            self.index.save(self.settings.home, self.model_id)
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
    def read(self, photo: ImageInput) -> Photo:
        return self.pipeline.read(photo)

    def detect(self, photo: ImageInput | Photo) -> tuple[Photo, list[DetectedFace]]:
        """Decode and detect: what the UI draws before the user picks a face."""
        photo = photo if isinstance(photo, Photo) else self.read(photo)
        return photo, self.pipeline.detect(photo)

    # ----- enrolment ------------------------------------------------------------------------------------
    def enroll(self, photo: ImageInput | Photo, name: str, face_index: int | None = None,
               allow_lookalike: bool = False, note: str | None = None) -> EnrollResult:
        """Enrol a new person from one photo.

        Raises MultipleFaces (unless `face_index` picks one), NoFace, DuplicatePhoto, InvalidArgument (name taken
        or empty) and PossibleDuplicate when the face matches another identity at or above the threshold (a
        duplicate or look-alike), unless `allow_lookalike`.
        """
        name = _clean_name(name)
        photo, face, crop, embedding = self._one_face(photo, face_index)
        with self.store.session() as session:
            if session.scalar(select(Identity.id).where(Identity.name == name)) is not None:
                raise InvalidArgument(f"'{name}' is already enrolled; add this photo to that person instead")
        self._refuse_duplicate_photo(photo, face)
        lookalikes = self._lookalikes(embedding)
        rule = self.threshold_in_force()
        if lookalikes and not allow_lookalike:
            listed = ", ".join(f"{n} ({s:.2f})" for n, s in lookalikes[:3])
            raise PossibleDuplicate(
                f"this face matches already-enrolled {listed} at or above the threshold {rule.threshold:.2f} ("
                + ("pinned" if rule.pinned else f"set by the accepted stranger-match rate for a gallery of "
                                                f"{rule.comparisons:,} face(s)")
                + "); enrol anyway only if this is a different person", lookalikes)
        try:
            with self.store.writing() as session, session.begin():
                identity = Identity(name=name, note=note)
                session.add(identity)
                record = self._face_record(photo, face, crop, embedding)
                identity.faces.append(record)
                session.flush()
                session.add(JournalEntry(op="add", face_id=record.id))
                identity_id, face_id = identity.id, record.id
        except IntegrityError:
            raise InvalidArgument(f"'{name}' is already enrolled; add this photo to that person instead") from None
        self._after_write()
        return EnrollResult(identity_id, name, face_id, 1, face, crop, lookalikes, rule)

    def add_photo(self, identity: str | int, photo: ImageInput | Photo, face_index: int | None = None) -> EnrollResult:
        """Add another photo of an enrolled person; `lookalikes` in the result lists other people it resembles."""
        photo, face, crop, embedding = self._one_face(photo, face_index)
        self._refuse_duplicate_photo(photo, face)
        with self.store.writing() as session, session.begin():
            person = self._identity(session, identity)
            record = self._face_record(photo, face, crop, embedding)
            person.faces.append(record)
            person.updated_at = utcnow()
            session.flush()
            session.add(JournalEntry(op="add", face_id=record.id))
            result = (person.id, person.name, record.id, len(person.faces))
        self._after_write()
        lookalikes = [(n, s) for n, s in self._lookalikes(embedding) if n != result[1]]
        return EnrollResult(*result, face, crop, lookalikes, self.threshold_in_force())

    def add_embeddings(self, entries: list[dict]) -> list[int]:
        """Bulk enrolment of precomputed embeddings in one transaction (evaluation, imports, benchmarks).

        Each entry: {"name", "embedding" [512] unit float32, "photo_sha256", "box", "landmarks", optional
        "crop" (uint8 112x112x3)}. Identities are created as needed. Returns the new face ids.
        """
        now = utcnow()
        names = [_clean_name(entry["name"]) for entry in entries]
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
            for name, entry in zip(names, entries):
                crop = entry.get("crop")
                rows.append({"identity_id": ids[name], "model_id": self.model_id, "created_at": now,
                             "embedding": np.asarray(entry["embedding"], np.float32).tobytes(),
                             "photo_sha256": entry.get("photo_sha256", ""), "box": entry.get("box") or [],
                             "landmarks": entry.get("landmarks") or [],
                             "crop_jpeg": _jpeg(crop) if crop is not None and self.settings.store_crops else None})
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
            raise NoFace("no face found in the photo")
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
               threshold: float | None = None, fpir: float | None = None) -> VerifyResult:
        """Same person or not: compares the largest face of each photo, at the threshold the policy gives one
        comparison (`verification_threshold`; `fpir` or a pinned `threshold` override it for this call)."""
        rule = self.verification_threshold(fpir=fpir, threshold=threshold)
        embeddings, faces = [], []
        for label, source in (("first", photo_a), ("second", photo_b)):
            photo, detected = self.detect(source)
            if not detected:
                raise NoFace(f"no face found in the {label} photo")
            face = max(detected, key=lambda f: f.area)
            embeddings.append(self.pipeline.embed(photo, [face])[1][0])
            faces.append(face)
        similarity = float(np.dot(embeddings[0], embeddings[1]))
        return VerifyResult(similarity >= rule.threshold, similarity, rule.threshold, faces[0], faces[1], rule)

    # ----- management -----------------------------------------------------------------------------------
    def list(self, query: str | None = None) -> list[IdentityInfo]:
        """Enrolled identities by name; `query` filters by case-insensitive substring."""
        with self.store.session() as session:
            statement = select(Identity).order_by(Identity.name)
            if query:
                statement = statement.where(func.lower(Identity.name).contains(query.lower()))
            return [_info(person) for person in session.scalars(statement)]

    def get(self, identity: str | int) -> IdentityInfo:
        with self.store.session() as session:
            return _info(self._identity(session, identity))

    def face_crop(self, face_id: int) -> bytes | None:
        """The stored JPEG crop of a face (None in privacy mode)."""
        with self.store.session() as session:
            face = session.get(Face, face_id)
            return face.crop_jpeg if face else None

    def rename(self, identity: str | int, new_name: str) -> IdentityInfo:
        new_name = _clean_name(new_name)
        try:
            with self.store.writing() as session, session.begin():
                person = self._identity(session, identity)
                clash = session.scalar(select(Identity.id).where(Identity.name == new_name))
                if clash is not None and clash != person.id:
                    raise InvalidArgument(f"'{new_name}' is already enrolled")
                person.name, person.updated_at = new_name, utcnow()
                session.flush()
                info = _info(person)
        except IntegrityError:
            raise InvalidArgument(f"'{new_name}' is already enrolled") from None
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
        report = gallery_health(embeddings, identity_ids, names, self.threshold, top_pairs)
        report.threshold_policy = self.threshold_in_force(with_people=True).to_dict()
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
                raise FaceRecError(f"{len(missing)} faces have no stored crop (privacy mode); enrol them again")
            for start in range(0, len(faces), 64):
                chunk = faces[start : start + 64]
                crops = np.stack([np.asarray(Image.open(io.BytesIO(f.crop_jpeg)).convert("RGB")) for f in chunk])
                for face, embedding in zip(chunk, self.pipeline.embedder.embed(crops)):
                    face.embedding, face.model_id = embedding.astype(np.float32).tobytes(), self.model_id
                    session.add(JournalEntry(op="remove", face_id=face.id))
                    session.add(JournalEntry(op="add", face_id=face.id))
        self.index.rebuild(self.store)
        self.index.save(self.settings.home, self.model_id)
        return len(faces)

    # ----- export / import ------------------------------------------------------------------------------
    def export(self, path: str | Path, include_crops: bool = True) -> int:
        """Write a portable zip (gallery.json + embeddings.npy + optional crops/); returns the face count."""
        with self.store.session() as session:
            people = list(session.scalars(select(Identity).order_by(Identity.name)))
            records, vectors = [], []
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
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

    def import_(self, path: str | Path) -> dict:
        """Add the people of an exported zip. Faces already present (same photo and face) are skipped; faces from
        another model are re-embedded from their crops, or refused when there are none."""
        try:
            with zipfile.ZipFile(path) as archive:
                manifest = json.loads(archive.read("gallery.json"))
                vectors = np.load(io.BytesIO(archive.read("embeddings.npy")))
                crops = {r["crop"]: archive.read(r["crop"]) for r in manifest.get("faces", []) if r.get("crop")}
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
            raise InvalidArgument(f"not a facerec export file ({error})") from None
        if manifest.get("format") != EXPORT_FORMAT:
            raise InvalidArgument("not a facerec export file (unknown format)")
        added = skipped = 0
        with self.store.writing() as session, session.begin():
            for record, vector in zip(manifest["faces"], vectors):
                vector = self._imported_vector(record, vector, crops)
                person = session.scalar(select(Identity).where(Identity.name == record["name"]))
                if person is None:
                    person = Identity(name=record["name"], note=record.get("note"))
                    session.add(person)
                elif any(f.photo_sha256 == record["photo_sha256"] and _iou(f.box, record["box"]) > 0.5
                         for f in person.faces):
                    skipped += 1
                    continue
                face = Face(embedding=vector.astype(np.float32).tobytes(), model_id=self.model_id,
                            photo_sha256=record["photo_sha256"], box=record["box"], landmarks=record["landmarks"],
                            crop_jpeg=crops.get(record.get("crop")) if self.settings.store_crops else None)
                person.faces.append(face)
                session.flush()
                session.add(JournalEntry(op="add", face_id=face.id))
                added += 1
        self._after_write()
        return {"added": added, "skipped": skipped}

    def _imported_vector(self, record: dict, vector: np.ndarray, crops: dict) -> np.ndarray:
        if record.get("model_id") == self.model_id:
            return vector
        if not record.get("crop"):
            raise ModelMismatch(f"the export was made with model {record.get('model_id')} and has no crops to "
                                "re-embed; export it again with crops")
        crop = np.asarray(Image.open(io.BytesIO(crops[record["crop"]])).convert("RGB"))
        return self.pipeline.embedder.embed(crop[None])[0]

    # ----- internals ------------------------------------------------------------------------------------
    def _one_face(self, photo, face_index):
        photo, faces = self.detect(photo)
        if not faces:
            raise NoFace("no face found in the photo; use a clear, front-facing photo")
        if face_index is None:
            if len(faces) > 1:
                listed = "; ".join(f"#{i}: box {tuple(round(v) for v in f.box)}" for i, f in enumerate(faces))
                raise MultipleFaces(f"{len(faces)} faces found ({listed}); choose one with a face index", faces)
            face_index = 0
        if not 0 <= face_index < len(faces):
            raise InvalidArgument(f"face index {face_index} is out of range: the photo has {len(faces)} face(s)")
        face = faces[face_index]
        crops, embeddings = self.pipeline.embed(photo, [face])
        return photo, face, crops[0], embeddings[0]

    def _face_record(self, photo: Photo, face: DetectedFace, crop: np.ndarray, embedding: np.ndarray) -> Face:
        crop_jpeg = _jpeg(crop) if self.settings.store_crops else None
        data = face.to_dict()
        return Face(embedding=embedding.astype(np.float32).tobytes(), model_id=self.model_id,
                    photo_sha256=photo.sha256, box=data["box"], landmarks=data["landmarks"], crop_jpeg=crop_jpeg)

    def _refuse_duplicate_photo(self, photo: Photo, face: DetectedFace) -> None:
        with self.store.session() as session:
            rows = session.execute(select(Face.box, Identity.name).join(Identity)
                                   .where(Face.photo_sha256 == photo.sha256)).all()
        for box, name in rows:
            if _iou(box, list(face.box)) > 0.5:
                raise DuplicatePhoto(f"this photo (this face) is already enrolled, as '{name}'")

    def _lookalikes(self, embedding: np.ndarray) -> list[tuple[str, float]]:
        """Enrolled people this face matches at the threshold in force: the same rule as identify, so a new
        person is refused as a look-alike exactly when identify would have given them someone else's name."""
        candidates = self.search(embedding[None], top_k=5)[0]
        threshold = self.threshold_in_force().threshold
        return [(c.name, c.similarity) for c in candidates if c.similarity >= threshold]

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
        else:
            person = session.scalar(select(Identity).where(Identity.name == str(identity).strip()))
        if person is None:
            raise UnknownIdentity(f"no enrolled person called '{identity}'")
        return person

    def _after_write(self) -> None:
        self.index.catch_up(self.store)
        self._writes_since_save += 1
        if self._writes_since_save >= SAVE_INDEX_EVERY:
            self.index.save(self.settings.home, self.model_id)
            self._writes_since_save = 0


def _clean_name(name: str) -> str:
    name = " ".join(str(name or "").split())
    if not name:
        raise InvalidArgument("a name is required")
    if len(name) > 200:
        raise InvalidArgument("names are limited to 200 characters")
    return name


def _jpeg(crop: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(crop).save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


def _info(person: Identity) -> IdentityInfo:
    return IdentityInfo(person.id, person.name, len(person.faces), person.note, person.created_at,
                        person.updated_at, [f.id for f in person.faces])


def _iou(a, b) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0
