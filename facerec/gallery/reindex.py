"""Another model: notice that the gallery holds another model's embeddings, and re-embed every face from its
stored crop with the loaded one."""

from __future__ import annotations

import numpy as np

from facerec.errors import FaceRecError
from facerec.faces.pack_parts import Embedder
from facerec.formats.archive import decode_crop
from facerec.storage import Store
from facerec.vectors.base import VectorIndex

BATCH = 64  # faces embedded at a time, outside any transaction
PASSES = 3  # passes over faces enrolled meanwhile before the write embeds the rest inside it


def model_warning(store: Store, model_id: str) -> str | None:
    """One line when the gallery holds embeddings of a model other than `model_id` (searches then refuse)."""
    others = store.faces.other_model_ids(model_id)
    if not others:
        return None
    return (f"this gallery holds embeddings from another model ({', '.join(others)}); the loaded model is "
            f"{model_id}. Run `facerec reindex` to re-embed from the stored crops.")


def reindex(store: Store, index: VectorIndex, embedder: Embedder, model_id: str) -> int:
    """Re-embed every face from its stored crop with `embedder` (whose model is `model_id`), then rebuild the
    index; returns how many were re-embedded.

    The embedding, the long part (~15 ms a face), runs outside any transaction, BATCH faces at a time, so identify
    (here and on every replica) and enroll go on meanwhile; then one short write transaction replaces every
    embedding at once (the sightings memory, the kept strangers and the templates set aside for an undo emptied
    in it), embedding there only the faces enrolled during the last pass. The gallery is never left half of one
    model and half of another. Holds 2 KB per face in memory. Nothing is written when a face has no stored crop
    (privacy mode)."""
    embedded: dict[int, np.ndarray] = {}
    for _pass in range(PASSES):  # faces enrolled while a pass ran are embedded by the next one
        pending = [face_id for face_id in store.faces.ids() if face_id not in embedded]
        if not pending:
            break
        for start in range(0, len(pending), BATCH):
            embedded.update(_embedded(store.faces.crops(pending[start : start + BATCH]), embedder))
    with store.transaction() as tx:
        faces = tx.faces.for_update()
        late = {face.id: face.crop_jpeg for face in faces if face.id not in embedded}
        embedded.update(_embedded(late, embedder))
        for face in faces:
            tx.faces.replace_embedding(face, embedded[face.id], model_id)
        # Sightings and strangers keep no photo to re-embed, and another model's embeddings do not compare;
        # templates set aside for an undo go too (an undo after a reindex restores nothing).
        tx.sightings.clear()
        tx.strangers.clear()
        tx.replaced.clear()
    index.rebuild(store)
    index.flush(store)
    return len(faces)


def _embedded(crops: dict[int, bytes | None], embedder: Embedder) -> dict[int, np.ndarray]:
    """{face id: embedding} of these stored crops; FaceRecError (nothing written yet) when one has none."""
    missing = [face_id for face_id, crop in crops.items() if crop is None]
    if missing:
        raise FaceRecError(f"{len(missing)} or more faces have no stored crop (privacy mode); enroll them again")
    if not crops:
        return {}
    pixels = np.stack([decode_crop(crop) for crop in crops.values()])
    return dict(zip(crops, embedder.embed(pixels)))
