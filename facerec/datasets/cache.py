"""Aligned-face cache: detect and align every photo of a folder-per-identity dataset once.

Layout of a cache folder:
- `faces.npy`   uint8 [N, 112, 112, 3] (a NumPy memmap, RGB), row i = photo i of `manifest.tsv`.
- `manifest.tsv` one row per photo: row, identity, relative path.
- `results.tsv`  appended as rows finish: row, status (`face` or `fallback`), detector score, alignment error,
                 number of faces, landmarks. Rows missing from it are not done; `prepare` resumes from there.

A photo with no detected face falls back to its central square (side = half the shorter image side, which
is where LFW's deep-funnelled photos put the face), resized to 112x112, and is counted as a fallback.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

from facerec.faces.align import ALIGNED_SIZE, align_face, landmark_alignment_error
from facerec.faces.choice import central_face
from facerec.datasets.folders import list_identities
from facerec.faces.detect import FaceDetector
from facerec.errors import FaceRecError
from facerec.faces.image import load_image

FACES_FILE, MANIFEST_FILE, RESULTS_FILE = "faces.npy", "manifest.tsv", "results.tsv"


@dataclass
class CacheSummary:
    photos: int
    detected: int
    fallbacks: list[str]
    unreadable: list[str]
    mean_alignment_error: float
    seconds: float


def central_square_crop(image: np.ndarray, size: int = ALIGNED_SIZE) -> np.ndarray:
    """The documented no-face fallback: the central square of side min(H, W) / 2, resized to size x size."""
    height, width = image.shape[:2]
    side = max(1, min(height, width) // 2)
    top, left = (height - side) // 2, (width - side) // 2
    crop = Image.fromarray(image[top : top + side, left : left + side])
    return np.asarray(crop.resize((size, size), Image.BILINEAR))


def prepare_cache(
    data_dir: str | Path,
    out_dir: str | Path,
    detector: FaceDetector | None = None,
    progress: Callable[[int, int], None] | None = None,
    flush_every: int = 200,
) -> CacheSummary:
    """Build or resume the cache of `data_dir` in `out_dir`; returns counts over the whole cache."""
    import time

    start = time.perf_counter()
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = _load_or_write_manifest(data_dir, out_dir)
    faces = _open_faces(out_dir / FACES_FILE, len(manifest))
    done = {int(row["row"]) for row in read_results(out_dir)}
    detector = detector or FaceDetector()
    pending = [i for i in range(len(manifest)) if i not in done]
    with open(out_dir / RESULTS_FILE, "a", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        if not done and handle.tell() == 0:
            writer.writerow(["row", "status", "score", "alignment_error", "faces", "landmarks"])
        for count, row in enumerate(pending, 1):
            identity, relative = manifest[row]
            faces[row], record = _align_one(data_dir / relative, detector)
            writer.writerow([row, *record])
            if count % flush_every == 0:
                faces.flush()
                handle.flush()
            if progress:
                progress(len(done) + count, len(manifest))
        faces.flush()
    return summarize(out_dir, time.perf_counter() - start)


def _align_one(path: Path, detector: FaceDetector) -> tuple[np.ndarray, list]:
    try:
        image = load_image(path)
    except FaceRecError:
        return np.zeros((ALIGNED_SIZE, ALIGNED_SIZE, 3), np.uint8), ["unreadable", "", "", 0, ""]
    detected = detector.detect(image)
    face = central_face(detected, image.shape)
    if face is None:
        return central_square_crop(image), ["fallback", "", "", 0, ""]
    points = " ".join(f"{v:.3f}" for v in face.landmarks.ravel())
    error = landmark_alignment_error(face.landmarks)
    return align_face(image, face.landmarks), ["face", f"{face.score:.4f}", f"{error:.4f}", len(detected), points]


def _load_or_write_manifest(data_dir: Path, out_dir: Path) -> list[tuple[str, str]]:
    path = out_dir / MANIFEST_FILE
    if path.exists():
        return read_manifest(out_dir)
    rows = [
        (name, str(photo.relative_to(data_dir)))
        for name, photos in list_identities(data_dir).items()
        for photo in photos
    ]
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(["row", "identity", "path"])
        writer.writerows((i, name, rel) for i, (name, rel) in enumerate(rows))
    return rows


def _open_faces(path: Path, count: int) -> np.memmap:
    shape = (count, ALIGNED_SIZE, ALIGNED_SIZE, 3)
    if path.exists():
        faces = np.load(path, mmap_mode="r+")
        if faces.shape != shape:
            raise FaceRecError(f"{path} holds {faces.shape}, expected {shape}; delete the cache folder to rebuild")
        return faces
    return np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=shape)


def read_manifest(cache_dir: str | Path) -> list[tuple[str, str]]:
    """[(identity, relative path)] in row order."""
    with open(Path(cache_dir) / MANIFEST_FILE, newline="") as handle:
        return [(row["identity"], row["path"]) for row in csv.DictReader(handle, delimiter="\t")]


def read_results(cache_dir: str | Path) -> list[dict]:
    path = Path(cache_dir) / RESULTS_FILE
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def load_cache(cache_dir: str | Path) -> tuple[np.ndarray, list[str], list[str]]:
    """(faces memmap [N,112,112,3], identity per row, relative path per row)."""
    manifest = read_manifest(cache_dir)
    faces = np.load(Path(cache_dir) / FACES_FILE, mmap_mode="r")
    return faces, [m[0] for m in manifest], [m[1] for m in manifest]


def summarize(cache_dir: str | Path, seconds: float = 0.0) -> CacheSummary:
    manifest = read_manifest(cache_dir)
    results = read_results(cache_dir)
    errors = [float(r["alignment_error"]) for r in results if r["status"] == "face"]
    return CacheSummary(
        photos=len(manifest),
        detected=sum(r["status"] == "face" for r in results),
        fallbacks=[manifest[int(r["row"])][1] for r in results if r["status"] == "fallback"],
        unreadable=[manifest[int(r["row"])][1] for r in results if r["status"] == "unreadable"],
        mean_alignment_error=float(np.mean(errors)) if errors else float("nan"),
        seconds=seconds,
    )


class RowView:
    """A lazy row selection of a (memmapped) array, sliced chunk by chunk: what the teacher reads a cache through."""

    def __init__(self, array, rows: list[int]) -> None:
        self.array, self.rows = array, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, item: slice) -> np.ndarray:
        return np.asarray(self.array[self.rows[item]])


class FolderCrops:
    """Aligned 112x112 crops stored as image files (celeba112), read lazily in slices: a cache-like view."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, item: slice) -> np.ndarray:
        return np.stack([np.asarray(Image.open(path).convert("RGB")) for path in self.paths[item]])
