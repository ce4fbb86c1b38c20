"""The faces table: each enrolled face's embedding (float32 vectors in and out), its photo and crop.

Reads open their own session; writes take the caller's write transaction and journal every face they add,
remove or re-embed (`facerec.storage.journal`), so the vector index can follow.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, ContextManager, Iterator

import numpy as np
from sqlalchemy import BigInteger, cast, func, insert, select, update
from sqlalchemy.orm import Session

from facerec.storage.journal import JournalTable
from facerec.storage.rows import chunked, decoded, encoded
from facerec.storage.schema import Face, Identity

EMPTY = np.zeros((0, 512), np.float32)
# A face's cohort statistics from its embedding: (means [N], spreads [N]) of embeddings [N, D]
# (`facerec.openset.cohort.Cohort.statistics`), given to the store by whoever knows the model's cohort.
CohortStatisticsOf = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
FILL_BATCH = 2048
# `people_in_drawn_order`'s hash of an identity id: every product stays below 2 ** 63 for ids below 2 ** 31.
DRAW_PRIME, DRAW_MULTIPLIER, DRAW_SEED_STEP, DRAW_MIX = 2_147_483_647, 2_654_435_761, 1_000_003, 1_500_450_271


def drawn_order_key(identity_id, seed: int):
    """The key people are drawn in (ascending, ties by id): of an int, or of a SQL integer expression (the same
    arithmetic, so `people_in_drawn_order` runs it in the database). A multiplicative hash alone orders consecutive
    ids on a lattice, so the value is squared modulo the prime."""
    x = (identity_id * DRAW_MULTIPLIER + int(seed) * DRAW_SEED_STEP) % DRAW_PRIME
    return (x * x % DRAW_PRIME) * DRAW_MIX % DRAW_PRIME


class FacesTable:
    def __init__(self, session: Callable[[], Session], kept_as: type = np.float32) -> None:
        self.session = session  # opens a read session (`Store.session`)
        self.kept_as = kept_as  # the precision the database keeps embeddings at (`Backend.embedding_dtype`)
        self.statistics_of: CohortStatisticsOf | None = None  # set by the gallery: every face written gets them

    def embeddings(self, face_ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(face ids [N] int64, embeddings [N, D] float32) of all faces, or of the given ids."""
        with self.session() as session:
            query = select(Face.id, Face.embedding).order_by(Face.id)
            if face_ids is None:
                rows = session.execute(query).all()
            else:
                rows = [row for chunk in chunked(face_ids) for row in session.execute(query.where(Face.id.in_(chunk)))]
        if not rows:
            return np.zeros(0, np.int64), EMPTY
        return np.array([r[0] for r in rows], dtype=np.int64), np.stack([decoded(r[1]) for r in rows])

    def labels(self, face_ids: list[int] | None = None) -> dict[int, tuple[int, str]]:
        """{face id: (identity id, name)} for every face, or only for the given face ids."""
        return {face: (identity, name) for face, (identity, name, *_rest) in self.scored_labels(face_ids).items()}

    def scored_labels(self, face_ids: list[int] | None = None) -> dict[int, tuple[int, str, float | None,
                                                                                   float | None, bool]]:
        """{face id: (identity id, name, cohort mean, cohort spread, learned)}: what a search needs of its
        candidates, in one query (`_completed`: a face written without statistics gets them computed here);
        `learned`: a template learned from a confirmed face, which names someone only when corroborated."""
        query = select(Face.id, Identity.id, Identity.name, Face.cohort_mean, Face.cohort_sd,
                       Face.origin).join(Identity)
        with self.session() as session:
            if face_ids is None:
                rows = list(session.execute(query))
            else:
                rows = [r for chunk in chunked(face_ids) for r in session.execute(query.where(Face.id.in_(chunk)))]
        statistics = self._completed({int(f): (m, d) for f, _i, _n, m, d, _o in rows})
        return {int(f): (int(i), str(n), *statistics[int(f)], o == "learned") for f, i, n, _m, _d, o in rows}

    def cohort_statistics(self, face_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(means, spreads) [N] of the given faces, in their order (`_completed`)."""
        with self.session() as session:
            found = {int(f): (m, d) for chunk in chunked(face_ids) for f, m, d in session.execute(
                select(Face.id, Face.cohort_mean, Face.cohort_sd).where(Face.id.in_(chunk)))}
        found = self._completed(found)
        return (np.array([found[int(f)][0] for f in face_ids], np.float64),
                np.array([found[int(f)][1] for f in face_ids], np.float64))

    def _completed(self, found: dict[int, tuple]) -> dict[int, tuple]:
        """{face id: (mean, spread)} with the statistics a face lacks computed from its embedding: a face written
        by a replica of a facerec from before them (a gallery is brought up to date when opened, and every face
        this one writes gets them). Without a scorer (`statistics_of`) they stay None."""
        missing = [face for face, (mean, sd) in found.items() if mean is None or sd is None]
        if missing and self.statistics_of is not None:
            ids, vectors = self.embeddings(missing)
            means, sds = self.statistics_of(vectors)
            found.update({int(f): (float(m), float(d)) for f, m, d in zip(ids, means, sds)})
        return found

    def median_statistics(self, sample: int = 4000) -> tuple[float | None, float | None]:
        """Median cohort mean and spread over up to `sample` faces (the first by id); (None, None) when none."""
        with self.session() as session:
            rows = session.execute(select(Face.cohort_mean, Face.cohort_sd).where(Face.cohort_sd.is_not(None))
                                   .order_by(Face.id).limit(sample)).all()
        if not rows:
            return None, None
        return float(np.median([r[0] for r in rows])), float(np.median([r[1] for r in rows]))

    def people_in_drawn_order(self, limit: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(identity ids [<= limit], their face counts) of the first `limit` people with a face in a seeded
        pseudo-random order the database computes (`drawn_order_key` in 64-bit integers, so the same on SQLite
        and PostgreSQL). Samples of whole people are drawn from it: only the people a sample can take come back,
        never a row per person (a million of those held the interpreter for most of a second, stalling every
        request of the process)."""
        order = drawn_order_key(cast(Face.identity_id, BigInteger), seed)
        with self.session() as session:
            rows = session.execute(select(Face.identity_id, func.count(Face.id)).group_by(Face.identity_id)
                                   .order_by(order, Face.identity_id).limit(int(limit))).all()
        return np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64)

    def photo_count_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """(photo counts [H] ascending, how many people have each [H]): every person's photo count in a few rows,
        counted by the database (a million people's counts are a million rows to bring into Python otherwise)."""
        per_person = select(func.count(Face.id).label("photos")).group_by(Face.identity_id).subquery()
        with self.session() as session:
            rows = session.execute(select(per_person.c.photos, func.count()).group_by(per_person.c.photos)
                                   .order_by(per_person.c.photos)).all()
        return np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64)

    def of_people(self, identity_ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(face ids [N], their identity ids [N], embeddings [N, D]) of these people's faces, by face id."""
        with self.session() as session:
            rows = sorted(row for chunk in chunked(identity_ids)
                          for row in session.execute(select(Face.id, Face.identity_id, Face.embedding)
                                                     .where(Face.identity_id.in_(chunk))))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), EMPTY
        return (np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
                np.stack([decoded(r[2]) for r in rows]))

    def of_origin(self, identity_id: int, origins: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(face ids [N], embeddings [N, D]) of a person's faces of these origins (`schema.ORIGINS`)."""
        with self.session() as session:
            rows = session.execute(select(Face.id, Face.embedding).where(Face.identity_id == int(identity_id),
                                                                         Face.origin.in_(origins))
                                   .order_by(Face.id)).all()
        if not rows:
            return np.zeros(0, np.int64), EMPTY
        return np.array([r[0] for r in rows], np.int64), np.stack([decoded(r[1]) for r in rows])

    def of_photo(self, session: Session, photo_sha256: str) -> list[tuple[str, list, str]]:
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

    def ids(self) -> list[int]:
        """Every face id, ascending."""
        with self.session() as session:
            return list(session.scalars(select(Face.id).order_by(Face.id)))

    def crops(self, face_ids: list[int]) -> dict[int, bytes | None]:
        """{face id: stored JPEG crop, or None in privacy mode} for those of `face_ids` that still exist."""
        with self.session() as session:
            return {face_id: crop for chunk in chunked(face_ids)
                    for face_id, crop in session.execute(select(Face.id, Face.crop_jpeg).where(Face.id.in_(chunk)))}

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

    # ----- writes (inside the caller's `transaction()`) -----------------------------------------------
    def add_many(self, session: Session, rows: list[dict], now: datetime) -> list[int]:
        """Faces in one statement, journalled; each row: identity_id, embedding (float32 vector), model_id,
        photo_sha256, box, landmarks, crop_jpeg (or None), optional created_at (else `now`). Returns the new
        face ids in row order."""
        if not rows:
            return []
        rows = self._with_statistics([{**row, "embedding": self.as_kept(row["embedding"])} for row in rows])
        face_ids = list(session.scalars(insert(Face).returning(Face.id, sort_by_parameter_order=True),
                                        [{"created_at": now, **row, "embedding": encoded(row["embedding"])}
                                         for row in rows]))
        JournalTable.record(session, "add", face_ids)
        return face_ids

    def for_update(self, session: Session) -> list[Face]:
        return list(session.scalars(select(Face)))

    def learned_from(self, session: Session, sighting_id: int) -> list[Face]:
        """The templates learned from sighting `sighting_id` (inside the caller's transaction)."""
        return list(session.scalars(select(Face).where(Face.learned_from == int(sighting_id))))

    def replace_embedding(self, session: Session, face: Face, embedding: np.ndarray, model_id: str) -> None:
        """A face re-embedded by another model: journalled as a remove and an add of the same face."""
        embedding = self.as_kept(embedding)
        face.embedding, face.model_id = encoded(embedding), model_id
        face.cohort_mean, face.cohort_sd = self._statistics_of([embedding])[0]
        JournalTable.record(session, "remove", [face.id])
        JournalTable.record(session, "add", [face.id])

    def set_statistics(self, session: Session, face_ids: list[int], means: np.ndarray, sds: np.ndarray) -> None:
        """Store faces' cohort statistics (no journal row: the embeddings, which the index follows, are unchanged)."""
        if face_ids:
            session.execute(update(Face), [{"id": int(f), "cohort_mean": float(m), "cohort_sd": float(d)}
                                           for f, m, d in zip(face_ids, means, sds)])

    def batches(self, size: int = FILL_BATCH) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(face ids [n] int64, embeddings [n, D] float32) of every face, `size` at a time in id order, each batch
        its own short read: one pass over a gallery of any size in bounded memory."""
        after = 0
        while True:
            with self.session() as session:
                rows = session.execute(select(Face.id, Face.embedding).where(Face.id > after).order_by(Face.id)
                                       .limit(size)).all()
            if not rows:
                return
            yield (np.array([r[0] for r in rows], np.int64),
                   np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1))
            after = int(rows[-1][0])

    def fill_statistics(self, transaction: Callable[[], ContextManager[Session]]) -> int:
        """Compute the cohort statistics of every face (the cohort changed, or the gallery is from before them), in
        batches of FILL_BATCH faces, each its own short write transaction (`Store.transaction`); returns how many
        were filled."""
        if self.statistics_of is None:
            return 0
        filled = 0
        for face_ids, embeddings in self.batches(FILL_BATCH):
            means, sds = self.statistics_of(embeddings)
            with transaction() as session:
                self.set_statistics(session, face_ids.tolist(), means, sds)
            filled += len(face_ids)
        return filled

    def as_kept(self, embedding: np.ndarray) -> np.ndarray:
        """The float32 vector the database will give back for `embedding` (rounded to `kept_as`), so that a face's
        cohort statistics are computed from the same numbers whenever they are computed (now, or when a gallery
        is opened and fills them)."""
        return np.asarray(embedding, np.float32).astype(self.kept_as).astype(np.float32)

    def _statistics_of(self, embeddings) -> list[tuple[float | None, float | None]]:
        if self.statistics_of is None:
            return [(None, None)] * len(embeddings)
        means, sds = self.statistics_of(np.stack([np.asarray(e, np.float32) for e in embeddings]))
        return [(float(m), float(d)) for m, d in zip(means, sds)]

    def _with_statistics(self, rows: list[dict]) -> list[dict]:
        """Rows with their cohort statistics, computed here once for all of them, so no path that adds a face can
        forget them (enroll, add photo, a learned template, import, a suggestion named)."""
        missing = [i for i, row in enumerate(rows) if row.get("cohort_sd") is None]
        if not missing:
            return rows
        computed = self._statistics_of([rows[i]["embedding"] for i in missing])
        rows = list(rows)
        for i, (mean, sd) in zip(missing, computed):
            rows[i] = {**rows[i], "cohort_mean": mean, "cohort_sd": sd}
        return rows

    def new_row(self, values: dict) -> Face:
        """A new Face from the `add_many` row keys (but identity_id), with its cohort statistics."""
        values = self._with_statistics([{**values, "embedding": self.as_kept(values["embedding"])}])[0]
        return Face(**{**values, "embedding": encoded(values["embedding"])})
