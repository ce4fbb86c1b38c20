"""UTKFace as teacher-labelled training faces: aligned crops and dlib descriptors, decontaminated, never committed.

    python scripts/data/utkface.py MIRROR_GIT_DIR OUT            # e.g. OUT = cache/utkface (git-ignored)

MIRROR_GIT_DIR is a bare git copy of the public repository delonyohan/deeplearn-agepred; its first commit
(b06607bf) holds UTKFace's 23,708 cropped 200x200 photos under dataset/UTKFace (later commits hold Git LFS
pointers only). UTKFace's terms: non-commercial research, like CelebA's, so the model card names it.

Every step resumes where an interrupted run stopped:
1. the photos, read out of the commit into OUT/photos;
2. facerec's own detector and alignment (`facerec.datasets.cache.prepare_cache`, as celeba112 and the runtime align), into
   OUT/cache; photos without a detected face are left out, never trained on a fallback crop;
3. the teacher's descriptors (dlib, the recipe of ../shared/data/teacher: fixed face box of the aligned crop) of
   every aligned crop (and, with --mirror, of its mirror image);
4. decontamination: a crop the teacher places within its same-person distance of any LFW evaluation photo
   (the 779 two-photo people and the 4,069 one-photo distractors) or of any held-out CelebA identity's photo (both
   sets of the disjoint split, `facerec.datasets.folders.held_out`: the people selection and calibration are scored
   on) is dropped. The LFW evaluation photos' descriptors are
   computed once into --lfw-evaluation-teacher (used for this check only, never as training targets).
   Which distance: dlib's own 0.6 is a one-to-one decision. Searched against ~8,000 reference photos it would call
   nearly every crop a match (on celeba112, 0.47% of different-person pairs sit within 0.6: ~37 false "matches"
   per crop). So the distance is the one-to-many equivalent: the largest at which a crop meets, on average, at
   most 0.1 different people among the references (the teacher's different-person distances measured on
   celeba112's training identities). source.json reports what 0.6 and other distances would drop.
Output: OUT/utkface_teacher.npz (paths "UTKFace/<file>", descriptor[, descriptor_mirror]) for the kept crops,
and OUT/source.json with the source, commit and every count.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from facerec.datasets.cache import RowView, load_cache, prepare_cache, read_results  # noqa: E402
from facerec.datasets.folders import held_out_identities, list_identities  # noqa: E402
from facerec.train.data import lfw_training_rows  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.train.teacher import compute_targets  # noqa: E402

REPOSITORY, COMMIT, FOLDER = "delonyohan/deeplearn-agepred", "b06607bf2477c8295b33facb5dea7aada27cac01", \
    "dataset/UTKFace"
DLIB_TOLERANCE = 0.6  # dlib's one-to-one tolerance for "the same person"
FALSE_HITS_PER_CROP = 0.1  # the one-to-many rule: expected different-person references within the distance
NEAR_DISTANCES = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6)  # reported: how many crops sit this close to a reference


def extract_photos(git_dir: Path, out: Path) -> Path:
    """OUT/photos/dataset/UTKFace/*.jpg from the fixed commit (skipped when already complete)."""
    photos = out / "photos"
    folder = photos / FOLDER
    expected = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", COMMIT, FOLDER],
                              check=True, capture_output=True, text=True).stdout.split()
    if not folder.exists() or len(list(folder.glob("*.jpg"))) != len(expected):
        photos.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(["git", "--git-dir", str(git_dir), "archive", COMMIT, FOLDER],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(photos)], stdin=archive.stdout, check=True)
        if archive.wait():
            raise SystemExit(f"git archive of {COMMIT}:{FOLDER} failed")
    return photos / Path(FOLDER).parent  # a folder-per-identity layout whose one "identity" is UTKFace


def lfw_evaluation_descriptors(lfw_cache: Path, out_file: Path) -> np.ndarray:
    """dlib descriptors of the LFW evaluation photos: every person with fewer than 3 photos."""
    faces, names, paths = load_cache(lfw_cache)
    training = set(lfw_training_rows(names))
    rows = [i for i in range(len(paths)) if i not in training]
    if not _holds(out_file, [paths[r] for r in rows]):
        compute_targets(RowView(faces, rows), [paths[r] for r in rows], out_file, mirror=False)
    with np.load(out_file) as data:
        return data["descriptor"].astype(np.float32)


def celeba_descriptors(data: Path) -> tuple[np.ndarray, np.ndarray, set[str]]:
    """(descriptors, identity per row, the held-out identities) of celeba112's teacher file."""
    held_out = held_out_identities(list_identities(data / "celeba112"), "disjoint")  # both sets of model v9
    with np.load(data / "teacher" / "celeba112_dlib.npz") as teacher:
        identities = np.array([str(path).split("/")[0] for path in teacher["paths"].tolist()])
        return teacher["descriptor"].astype(np.float32), identities, held_out


def one_to_many_distance(descriptors: np.ndarray, identities: np.ndarray, references: int,
                         sample: int = 4000, seed: int = 0) -> tuple[float, float]:
    """(distance, different-person rate there): the largest distance at which `references` photos of other
    people hold FALSE_HITS_PER_CROP within it on average, from random different-identity pairs."""
    rng = np.random.default_rng(seed)
    a, b = rng.choice(len(descriptors), sample, replace=False), rng.choice(len(descriptors), sample, replace=False)
    distances = np.sqrt(np.maximum(0, (descriptors[a] ** 2).sum(1)[:, None] + (descriptors[b] ** 2).sum(1)[None]
                                   - 2 * descriptors[a] @ descriptors[b].T))
    different = np.sort(distances[identities[a][:, None] != identities[b][None, :]])
    rate = FALSE_HITS_PER_CROP / references
    distance = float(different[max(0, int(rate * len(different)) - 1)])
    return distance, float((different < distance).mean())


def nearest_distance(queries: np.ndarray, references: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Euclidean distance from each query descriptor to its nearest reference (dlib's metric)."""
    reference_norms = (references ** 2).sum(axis=1)
    nearest = np.empty(len(queries), np.float32)
    for start in range(0, len(queries), chunk):
        block = queries[start : start + chunk]
        squared = (block ** 2).sum(axis=1)[:, None] + reference_norms[None, :] - 2 * block @ references.T
        nearest[start : start + chunk] = np.sqrt(np.maximum(squared.min(axis=1), 0))
    return nearest


def _holds(teacher_file: Path, paths: list[str]) -> bool:
    """Whether a finished teacher file already describes exactly these crops."""
    if not teacher_file.is_file():
        return False
    with np.load(teacher_file) as data:
        return data["paths"].tolist() == list(paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror_git_dir", type=Path, help=f"a bare git copy of {REPOSITORY}")
    parser.add_argument("out", type=Path, help="a git-ignored folder (e.g. cache/utkface)")
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--lfw-cache", default="cache/lfw", type=Path, help="`facerec-train prepare` of LFW")
    parser.add_argument("--lfw-evaluation-teacher", default="cache/lfw_evaluation_teacher.npz", type=Path)
    parser.add_argument("--mirror", action="store_true", help="also the mirrored crops' descriptors (2x time)")
    parser.add_argument("--results", type=Path, help="also write the counts (no image, no descriptor) with their "
                                                   "provenance here, e.g. benchmarks/results/utkface_decontamination.json")
    args = parser.parse_args()

    prepare_cache(extract_photos(args.mirror_git_dir, args.out), args.out / "cache")
    faces, _, paths = load_cache(args.out / "cache")
    results = read_results(args.out / "cache")
    detected = sorted(int(r["row"]) for r in results if r["status"] == "face")
    all_file = args.out / "teacher_all.npz"
    if not _holds(all_file, [paths[r] for r in detected]):  # a finished file is reused: no second teacher pass
        compute_targets(RowView(faces, detected), [paths[r] for r in detected], all_file, mirror=args.mirror)
    with np.load(all_file) as data:
        descriptors = data["descriptor"].astype(np.float32)
        mirrored = data["descriptor_mirror"] if "descriptor_mirror" in data else None
        kept_paths = data["paths"]
    lfw_references = lfw_evaluation_descriptors(args.lfw_cache, args.lfw_evaluation_teacher)
    celeba_all, celeba_identities, held_out = celeba_descriptors(args.data)
    is_held_out = np.isin(celeba_identities, sorted(held_out))
    celeba_references = celeba_all[is_held_out]
    distance, rate = one_to_many_distance(celeba_all[~is_held_out], celeba_identities[~is_held_out],
                                          len(lfw_references) + len(celeba_references))
    lfw = nearest_distance(descriptors, lfw_references)
    celeba = nearest_distance(descriptors, celeba_references)
    keep = (lfw >= distance) & (celeba >= distance)
    out = {"paths": kept_paths[keep], "descriptor": descriptors[keep].astype(np.float16)}
    if mirrored is not None:
        out["descriptor_mirror"] = mirrored[keep]
    np.savez(args.out / "utkface_teacher.npz", **out)
    summary = {
        "source": {"repository": REPOSITORY, "commit": COMMIT, "folder": FOLDER,
                   "terms": "UTKFace: non-commercial research only"},
        "photos": len(paths), "detected": len(detected), "no_face": len(paths) - len(detected),
        "references": {"lfw_evaluation_photos": len(lfw_references),
                       "celeba_held_out_photos": len(celeba_references)},
        "same_person_distance": distance, "different_person_rate_within_it": rate,
        "false_hits_per_crop_allowed": FALSE_HITS_PER_CROP, "dlib_tolerance": DLIB_TOLERANCE,
        "dropped_near_lfw_evaluation": int((lfw < distance).sum()),
        "dropped_near_celeba_held_out": int((celeba < distance).sum()),
        "dropped": int((~keep).sum()), "kept": int(keep.sum()), "mirror": mirrored is not None,
        "within_distance_of_lfw_evaluation": {f"{d}": int((lfw < d).sum()) for d in NEAR_DISTANCES},
        "within_distance_of_celeba_held_out": {f"{d}": int((celeba < d).sum()) for d in NEAR_DISTANCES},
    }
    (args.out / "source.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.results:
        write_result(args.results, summary, model_path=None, threads=None)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
