"""The training and validation face sets, with the protocol's rules on who may be trained on.

Sources (both already aligned with `facerec.align`):
- `celeba112/` (folder per CelebA identity): training, except a seeded hold-out of identities used for
  validation metrics and threshold calibration.
- the `facerec prepare` cache of LFW: people with >= 3 photos are training identities; people with exactly
  2 photos are the one-shot evaluation set (`lfw_eval`), never trained on; one-photo people are left out.

A `FaceSet` can be written as a compact pack (WebP-encoded crops in parts of bounded size) so it can travel
to another machine and be decoded there in seconds.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from PIL import Image

from ..cache import load_cache
from ..dataset import choose_enrolled, held_out_identities, list_identities

SPLITS = ("train", "val", "lfw_eval")


@dataclass
class FaceSet:
    """images uint8 [N, 112, 112, 3]; identities, splits and paths: one string per row."""

    images: np.ndarray
    identities: list[str]
    splits: list[str]
    paths: list[str]

    def rows(self, split: str) -> np.ndarray:
        return np.flatnonzero(np.array(self.splits) == split)

    def labels(self, rows: np.ndarray) -> np.ndarray:
        """Dense integer labels (0..C-1, in identity order) for the given rows."""
        names = [self.identities[i] for i in rows]
        index = {name: k for k, name in enumerate(sorted(set(names)))}
        return np.array([index[n] for n in names], dtype=np.int64)

    def lfw_protocol(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows of (enrolled, query) photos of the LFW one-shot protocol, person by person in name order."""
        rows = self.rows("lfw_eval")
        by_person: dict[str, list[Path]] = {}
        for row in rows:
            by_person.setdefault(self.identities[row], []).append(Path(self.paths[row]))
        by_person = {name: sorted(photos) for name, photos in sorted(by_person.items())}
        row_of = {self.paths[r]: r for r in rows}
        enrolled = choose_enrolled(by_person)
        gallery = [row_of[str(enrolled[name])] for name in by_person]
        queries = [row_of[str(p)] for name in by_person for p in by_person[name] if p != enrolled[name]]
        return np.array(gallery), np.array(queries)


def load_sources(celeba_dir: str | Path, lfw_cache_dir: str | Path, workers: int = 2) -> FaceSet:
    """Read celeba112 JPEGs and the LFW aligned-face cache into one FaceSet with splits assigned."""
    celeba = list_identities(celeba_dir)
    held_out = held_out_identities(celeba)
    paths = [p for photos in celeba.values() for p in photos]
    with Pool(workers) as pool:
        celeba_images = pool.map(_decode_file, [str(p) for p in paths], chunksize=256)
    identities = [f"celeba/{p.parent.name}" for p in paths]
    splits = ["val" if p.parent.name in held_out else "train" for p in paths]
    rel_paths = [f"celeba/{p.parent.name}/{p.name}" for p in paths]

    faces, lfw_names, lfw_paths = load_cache(lfw_cache_dir)
    counts: dict[str, int] = {}
    for name in lfw_names:
        counts[name] = counts.get(name, 0) + 1
    keep = [i for i, name in enumerate(lfw_names) if counts[name] >= 2]
    images = np.concatenate([np.stack(celeba_images), np.asarray(faces[keep])])
    identities += [f"lfw/{lfw_names[i]}" for i in keep]
    splits += ["train" if counts[lfw_names[i]] >= 3 else "lfw_eval" for i in keep]
    rel_paths += [lfw_paths[i] for i in keep]
    return FaceSet(images, identities, splits, rel_paths)


def _decode_file(path: str) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def _decode_bytes(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


def _encode(image: np.ndarray, quality: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, "WEBP", quality=quality, method=4)
    return buffer.getvalue()


def save_pack(faces: FaceSet, out_dir: str | Path, parts: int = 2, quality: int = 90) -> list[Path]:
    """Write `faces` as `parts` folders under out_dir, each `pack.npz` (WebP bytes + offsets) + `rows.json`."""
    out_dir = Path(out_dir)
    written = []
    for part, rows in enumerate(np.array_split(np.arange(len(faces.identities)), parts)):
        blobs = [_encode(faces.images[r], quality) for r in rows]
        offsets = np.cumsum([0] + [len(b) for b in blobs]).astype(np.int64)
        folder = out_dir / f"part{part + 1}"
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "pack.npz", blob=np.frombuffer(b"".join(blobs), np.uint8), offsets=offsets)
        meta = {k: [getattr(faces, k)[r] for r in rows] for k in ("identities", "splits", "paths")}
        (folder / "rows.json").write_text(json.dumps(meta))
        written.append(folder)
    return written


def load_pack(folders: list[str | Path], workers: int = 8) -> FaceSet:
    """Decode pack parts (in the order given) back into one FaceSet."""
    images, identities, splits, paths = [], [], [], []
    for folder in folders:
        folder = Path(folder)
        arrays = np.load(folder / "pack.npz")
        blob, offsets = arrays["blob"].tobytes(), arrays["offsets"]
        chunks = [blob[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
        with Pool(workers) as pool:
            images.extend(pool.map(_decode_bytes, chunks, chunksize=512))
        meta = json.loads((folder / "rows.json").read_text())
        identities += meta["identities"]
        splits += meta["splits"]
        paths += meta["paths"]
    return FaceSet(np.stack(images), identities, splits, paths)
