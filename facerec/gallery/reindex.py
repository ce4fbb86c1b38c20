"""Another model: notice that the gallery holds another model's embeddings, and re-embed every face from its
stored crop with the loaded one."""

from __future__ import annotations

import io
import numpy as np
from PIL import Image

from facerec.errors import FaceRecError
from facerec.faces.embed import FaceEmbedder
from facerec.storage import Store
from facerec.vectors.base import VectorIndex


def model_warning(store: Store, model_id: str) -> str | None:
    """One line when the gallery holds embeddings of a model other than `model_id` (searches then refuse)."""
    others = store.faces.other_model_ids(model_id)
    if not others:
        return None
    return (f"this gallery holds embeddings from another model ({', '.join(others)}); the loaded model is "
            f"{model_id}. Run `facerec reindex` to re-embed from the stored crops.")


def reindex(store: Store, index: VectorIndex, embedder: FaceEmbedder, model_id: str) -> int:
    """`Gallery.reindex`: every face re-embedded by `embedder` (whose model is `model_id`) in one transaction (the
    sightings memory emptied in it), then the index rebuilt."""
    with store.writing() as session, session.begin():
        faces = store.faces.for_update(session)
        missing = [f.id for f in faces if f.crop_jpeg is None]
        if missing:
            raise FaceRecError(f"{len(missing)} faces have no stored crop (privacy mode); enroll them again")
        for start in range(0, len(faces), 64):
            chunk = faces[start : start + 64]
            crops = np.stack([np.asarray(Image.open(io.BytesIO(f.crop_jpeg)).convert("RGB")) for f in chunk])
            for face, embedding in zip(chunk, embedder.embed(crops)):
                store.faces.replace_embedding(session, face, embedding, model_id)
        # Sightings keep no photo to re-embed, and another model's embeddings do not compare with these.
        store.sightings.clear(session)
    index.rebuild(store)
    index.flush(store)
    return len(faces)
