"""Kept faces of strangers planted straight into a gallery's strangers table, for the tests and the benchmark of a
large strangers memory (`benchmarks/strangers_memory.py`): keeping 20,000 faces through identify would take hours.

The embeddings are synthetic: `people` people seen `per_person` times each (their faces near one direction, from
as many photos, so each becomes a suggestion) among `singles` people seen once (random directions); all ungrouped,
as identify leaves them. Every face carries the same aligned crop (`crop_jpeg`)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from facerec.storage import utcnow
from facerec.storage.schema import Stranger

DIMENSION = 512


def clustered(people: int, per_person: int, singles: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """(unit embeddings [N, 512] float32, the photo each came from [N]): people's faces first, then singles,
    shuffled into one arrival order. A person's faces are at cosine ~0.9 to each other; strangers ~0."""
    generator = np.random.default_rng(seed)
    centres = generator.standard_normal((people, DIMENSION))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = generator.standard_normal((people, per_person, DIMENSION)) * (0.3 / np.sqrt(DIMENSION))
    faces = np.concatenate([(centres[:, None, :] + noise).reshape(-1, DIMENSION),
                            generator.standard_normal((singles, DIMENSION))])
    faces /= np.linalg.norm(faces, axis=1, keepdims=True)
    order = generator.permutation(len(faces))
    photos = [f"{index:064x}" for index in range(len(faces))]  # every face from its own photo
    return faces[order].astype(np.float32), [photos[i] for i in order]


def some_crop() -> bytes:
    """A 112x112 JPEG of the size aligned faces are kept at."""
    pixels = np.random.default_rng(1).integers(0, 256, (112, 112, 3), np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


def plant(store, model_id: str, embeddings: np.ndarray, photos: list[str], crop_jpeg: bytes,
          batch: int = 2_000) -> None:
    """Write the faces as kept, ungrouped, seen now (in transactions of `batch` rows)."""
    landmarks = [[40.0, 50.0], [72.0, 50.0], [56.0, 66.0], [44.0, 84.0], [68.0, 84.0]]
    for start in range(0, len(embeddings), batch):
        with store.sightings_transaction() as session:
            session.add_all([Stranger(embedding=np.asarray(vector, np.float32).tobytes(), model_id=model_id,
                                      photo_sha256=photo, crop_jpeg=crop_jpeg, box=[10.0, 10.0, 110.0, 130.0],
                                      landmarks=landmarks, seen_at=utcnow())
                             for vector, photo in zip(embeddings[start:start + batch],
                                                      photos[start:start + batch])])
