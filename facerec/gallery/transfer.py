"""Export and import: the portable gallery file (`facerec.formats.archive`) written from, and read into, a gallery."""

from __future__ import annotations

import errno
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from facerec.faces.align import ARCFACE_TEMPLATE, ALIGNED_SIZE
from facerec.formats.archive import EXPORT_FORMAT, NEGATIVE, ImportLimits, decode_crop, open_private, read_export
from facerec.errors import InvalidArgument, StorageFull
from facerec.names import name_key
from facerec.storage import Store, as_utc, utcnow
from facerec.storage.unit_of_work import UnitOfWork
from facerec.faces.pack_parts import Embedder
from facerec.gallery.enrollment import same_face
from facerec.vectors.base import VectorIndex


CROP_BOX = [0.0, 0.0, float(ALIGNED_SIZE), float(ALIGNED_SIZE)]  # a negative's face: the whole aligned crop


def export(store: Store, path: str | Path, include_crops: bool = True) -> int:
    """Write a portable zip (gallery.json + embeddings.npy + optional crops/); returns the face count. A full disk
    is StorageFull, with nothing of the archive left behind."""
    try:
        return _write_export(store, path, include_crops)
    except OSError as error:
        Path(path).unlink(missing_ok=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFull("the disk is full: the export was not written; free some space and try again") \
                from None
        raise


def _write_export(store: Store, path: str | Path, include_crops: bool) -> int:
    with store.reading() as tables:
        people = tables.people.listed()
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
                                    "landmarks": face.landmarks, "crop": crop_name,
                                    "enrolled_at": _iso(person.created_at), "updated_at": _iso(person.updated_at),
                                    "added_at": _iso(face.created_at), "origin": face.origin,
                                    "learned_by": face.learned_by})
                    vectors.append(face.vector)
                for negative in store.negatives.listed(person.id):  # "not this person": the face in its crop
                    crop_name = None
                    if include_crops and negative.crop_jpeg:
                        crop_name = f"crops/negative-{negative.id}.jpg"
                        archive.writestr(crop_name, negative.crop_jpeg)
                    records.append({"name": person.name, "note": person.note, "model_id": negative.model_id,
                                    "photo_sha256": f"negative:{negative.id}", "box": CROP_BOX,
                                    "landmarks": ARCFACE_TEMPLATE.tolist(), "crop": crop_name,
                                    "added_at": _iso(negative.created_at), "origin": NEGATIVE,
                                    "learned_by": negative.said_by})
                    vectors.append(np.frombuffer(negative.embedding, np.float32))
            buffer = io.BytesIO()
            np.save(buffer, np.stack(vectors) if vectors else np.zeros((0, 512), np.float32))
            archive.writestr("embeddings.npy", buffer.getvalue())
            archive.writestr("gallery.json", json.dumps({"format": EXPORT_FORMAT, "faces": records}))
    return len(records)


def import_(store: Store, index: VectorIndex, embedder: Embedder, model_id: str, store_crops: bool,
            path: str | Path, limits: ImportLimits = ImportLimits()) -> dict:
    """Add the people of an exported zip, all or nothing. The whole file is checked first (names, vectors, crops,
    within `limits`; `facerec.formats.archive`), then one transaction adds every face. Faces already present
    (same photo and face) are skipped; faces from another model are re-embedded by `embedder` (whose model is
    `model_id`) from their crops; crops are kept only where `store_crops`."""
    faces = read_export(path, model_id, index.dimension, limits)
    others = [face for face in faces if face.vector is None]
    if others:
        crops = np.stack([decode_crop(f.crop_jpeg) for f in others])
        for face, vector in zip(others, embedder.embed(crops)):
            face.vector = vector
    now, added, skipped = utcnow(), [], 0
    with store.transaction() as tx:
        names = sorted({face.name for face in faces})
        ids = tx.people.ids(names)
        _refuse_case_clashes(tx, [name for name in names if name not in ids])
        present: dict[str, list[tuple[str, list]]] = {}
        by_id = {identity: name for name, identity in ids.items()}
        for identity, sha, box in tx.faces.photos_of(list(by_id)):
            present.setdefault(by_id[identity], []).append((sha, box))
        for face in faces:
            if any(same_face(face.photo_sha256, face.box, sha, box) for sha, box in present.get(face.name, [])):
                skipped += 1
                continue
            present.setdefault(face.name, []).append((face.photo_sha256, face.box))
            added.append(face)
        new_names = [name for name in dict.fromkeys(face.name for face in added) if name not in ids]
        first = {face.name: face for face in reversed(added)}  # a new person's note and dates: its first record's
        ids.update(tx.people.create([
            {"name": n, "note": first[n].note, "created_at": first[n].history.get("enrolled_at", now),
             "updated_at": first[n].history.get("updated_at", first[n].history.get("enrolled_at", now))}
            for n in new_names], now))
        negatives = [face for face in added if face.origin == NEGATIVE]
        added = [face for face in added if face.origin != NEGATIVE]
        first_of_new = {face.name: face for face in reversed(added) if face.name in new_names}
        _add_negatives(tx, negatives, ids, model_id, store_crops)
        tx.faces.add_many([{"identity_id": ids[face.name], "model_id": model_id,
                            "embedding": face.vector, "photo_sha256": face.photo_sha256,
                            "box": face.box, "landmarks": face.landmarks,
                            "crop_jpeg": face.crop_jpeg if store_crops else None,
                            "created_at": face.history.get("added_at", now),
                            "origin": face.origin or ("enrolled" if first_of_new.get(face.name) is face
                                                      else "added"),
                            "learned_by": face.learned_by}
                           for face in added], now)
    index.after_write(store)
    return {"added": len(added), "skipped": skipped, **({"negatives": len(negatives)} if negatives else {})}


def _add_negatives(tx: UnitOfWork, negatives: list, ids: dict[str, int], model_id: str,
                   store_crops: bool) -> None:
    """The export's "not this person" faces, as negatives of their people (bounded as any)."""
    from facerec.gallery.negatives import MAX_NEGATIVES

    if not negatives:
        return
    means, sds = tx.faces.statistics_of(np.stack([face.vector for face in negatives]))
    for face, mean, sd in zip(negatives, means, sds):
        tx.negatives.add({"identity_id": ids[face.name], "embedding": face.vector, "model_id": model_id,
                          "cohort_mean": float(mean), "cohort_sd": float(sd),
                          "crop_jpeg": face.crop_jpeg if store_crops else None, "sighting_id": None,
                          "said_by": face.learned_by or "import"}, MAX_NEGATIVES)


def _refuse_case_clashes(tx: UnitOfWork, names: list[str]) -> None:
    keys = {name_key(name): name for name in names}
    for taken in tx.people.names_with_keys(list(keys)):
        raise InvalidArgument(f"cannot import this file: it names '{keys[name_key(taken)]}', which differs "
                              f"only in letter case from enrolled '{taken}'. Nothing was imported.")


def _iso(moment) -> str | None:
    """A stored date as ISO 8601 in UTC."""
    return None if moment is None else as_utc(moment).isoformat()
