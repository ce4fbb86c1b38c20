"""Suggested people, replayed on LFW: are suggested groups one person, are people seen often suggested, and does a
suggestion ever show an enrolled person's face?

    nice -n 5 python benchmarks/suggestions.py --data ../shared/data --out benchmarks/results/suggestions.json

A gallery with suggestions on (`FACEREC_SUGGESTIONS=on`) enrolls every LFW person with >= 6 photos from one photo
(seeded choice). Then a usage stream, in a seeded order, goes through `Gallery.identify` (which keeps the unknown
faces): up to 6 other photos of each enrolled person (their misses become unknown faces), every photo of the people
with 3 to 5 photos (the strangers seen >= 3 times, never enrolled) and the 4,069 one-photo people (strangers seen
once). The 779 evaluation people (2 photos) are left out. Then `Gallery.suggestions` is read, and scored:

- purity: the share of suggested groups whose faces are all one person;
- recall: the share of the 3-5-photo people who are the majority of some suggested group;
- enrolled faces shown: faces of enrolled people inside a suggestion (the promise: none).

A kept face is labelled with its photo's person when it is the photo's central face (LFW centres its person),
else as a bystander of its own (so a bystander grouped with anyone counts against purity). The same faces are
then grouped again at other pairwise rates (`--compare-far`) to show the choice of `GROUPING_FAR`; the people
with >= 3 photos were in the model's training data (the LFW protocol allows it), which flatters every figure
here, as in `replay_learning.py`. The grouping's cohort rule (`grouping.MIN_Z`) was chosen on these same faces
(training people and distractors, never the evaluation people), so its figures are in-sample.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.errors import FaceRecError  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.algorithms import grouping  # noqa: E402
from facerec.gallery import suggestions as suggesting  # noqa: E402
from facerec.openset.model_card import cosine_calibration_for  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.storage.schema import Stranger  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402

ENROLLED_MIN, ENROLLED_STREAM, SEED = 6, 6, 43
CENTRE_TOLERANCE = 40  # pixels between a face's centre and the photo's: LFW's person of the photo


def labelled_faces(gallery: Gallery, label_of_photo: dict[str, str]) -> dict[int, str]:
    """{kept face id: its person} (see the module)."""
    with parts_of(gallery).store.session() as session:
        rows = session.query(Stranger.id, Stranger.photo_sha256, Stranger.box).all()
    labels = {}
    for face_id, sha, box in rows:
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        central = abs(centre[0] - 125) <= CENTRE_TOLERANCE and abs(centre[1] - 125) <= CENTRE_TOLERANCE
        labels[int(face_id)] = label_of_photo[sha] if central else f"bystander {face_id}"
    return labels


def scored(found, labels: dict[int, str], enrolled: set[str], repeated: set[str]) -> dict:
    shown = [s for s in found if s.resembles is None]
    pure, suggested_people, enrolled_faces, sizes = 0, set(), 0, []
    for suggestion in shown:
        people = Counter(labels[f] for f in suggestion.face_ids)
        person, count = people.most_common(1)[0]
        pure += len(people) == 1
        sizes.append(suggestion.faces)
        if 2 * count > suggestion.faces and person in repeated:
            suggested_people.add(person)
        enrolled_faces += sum(n for p, n in people.items() if p in enrolled)
    hidden = [s for s in found if s.resembles is not None]
    hidden_enrolled = sum(Counter(labels[f] for f in s.face_ids).most_common(1)[0][0] in enrolled for s in hidden)
    return {"suggestions": len(shown), "one_person": pure, "purity": round(pure / max(len(shown), 1), 4),
            "repeated_strangers": len(repeated), "suggested": len(suggested_people),
            "recall": round(len(suggested_people) / max(len(repeated), 1), 4),
            "enrolled_faces_in_suggestions": enrolled_faces,
            "median_faces_per_suggestion": float(np.median(sizes)) if sizes else 0.0,
            "hidden_as_resembling_enrolled": len(hidden), "hidden_that_were_enrolled_people": hidden_enrolled}


def regrouped(gallery: Gallery, far: float, near_far: float, pair_test: str = "cosine"):
    """Every kept face grouped again from scratch at pairwise rate `far`, hiding at `near_far` (cosines, as the
    service's thresholds are). `pair_test`: "cosine" (the shipped rule: the cosine at `far` and the memory's
    z-score), "score and memory" (the model cohort's normalised score at `far` in place of the cosine) or "score"
    (that score alone, no memory z-score): one normalisation for identify and grouping, measured beside two."""
    with parts_of(gallery).store.transaction() as session:
        session.query(Stranger).update({Stranger.group_id: None})
    service = parts_of(gallery).suggesting
    kept = service.grouping_threshold, service.near_threshold
    raw = cosine_calibration_for(gallery.services().settings, parts_of(gallery).policy)
    service.grouping_threshold = raw.threshold_at_far(far)
    service.near_threshold = raw.threshold_at_far(near_far)
    if pair_test != "cosine":
        scorer, score_threshold = parts_of(gallery).scorer, parts_of(gallery).policy.calibration.threshold_at_far(far)
        min_z = grouping.MIN_Z if pair_test == "score and memory" else -np.inf

        def assign(ids, embeddings, groups, _threshold, stop=None):
            statistics = scorer.statistics(embeddings)
            return grouping.assign_groups(ids, embeddings, groups, score_threshold, min_z=min_z,
                                          statistics=(statistics.mean, statistics.sd), stop=stop)

        suggesting.assign_groups = assign
    try:
        found = service.refresh()
        threshold = service.grouping_threshold if pair_test == "cosine" else score_threshold
        return found, threshold, service.near_threshold
    finally:
        service.grouping_threshold, service.near_threshold = kept
        suggesting.assign_groups = grouping.assign_groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out")
    parser.add_argument("--compare-far", type=float, nargs="*", default=[1e-5])
    parser.add_argument("--compare-near", type=float, nargs="*", default=[1e-2, 1e-3])
    parser.add_argument("--dump", help="also save the kept faces (ids, embeddings, labels) to this .npz, to study")
    parser.add_argument("--limit", type=int, default=0, help="at most this many photos of each kind (a quick try)")
    args = parser.parse_args()
    started = time.time()
    identities = list_identities(Path(args.data) / "lfw")
    rng = np.random.default_rng(SEED)
    enroll_photo, stream = {}, []
    repeated, singles = [], []
    for name, photos in sorted(identities.items()):
        order = [photos[i] for i in rng.permutation(len(photos))]
        if len(photos) >= ENROLLED_MIN:
            enroll_photo[name] = order[0]
            stream += [(name, p) for p in order[1:1 + ENROLLED_STREAM]]
        elif len(photos) >= 3:
            repeated.append(name)
            stream += [(name, p) for p in order]
        elif len(photos) == 1:
            singles.append(name)
            stream.append((name, order[0]))
    if args.limit:
        repeated = repeated[:args.limit]
        keep = set(repeated) | set(singles[:args.limit]) | set(list(enroll_photo)[:args.limit])
        enroll_photo = {n: p for n, p in enroll_photo.items() if n in keep}
        stream = [(n, p) for n, p in stream if n in keep]
    stream = [stream[i] for i in rng.permutation(len(stream))]
    label_of_photo = {hashlib.sha256(Path(p).read_bytes()).hexdigest(): n for n, p in stream}
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings.from_env(home=Path(folder), suggestions=True, suggestions_memory=20_000)
        with Gallery(settings) as gallery:
            enrolled = set()
            for name, photo in enroll_photo.items():
                try:
                    gallery.enroll(photo, name, allow_lookalike=True, allow_low_quality=True)
                    enrolled.add(name)
                except FaceRecError:
                    pass
            print(f"{len(enrolled)} enrolled; {len(stream)} photos to identify", flush=True)
            unknown = 0
            for done, (name, photo) in enumerate(stream, 1):
                try:
                    unknown += sum(m.name is None for m in gallery.identify(photo, top_k=1))
                except FaceRecError:
                    pass
                if done % 1000 == 0:
                    print(f"{done} photos, {time.time() - started:.0f} s", flush=True)
            seconds_stream = time.time() - started
            labels = labelled_faces(gallery, label_of_photo)
            if args.dump:
                rows = parts_of(gallery).store.strangers.rows(parts_of(gallery).store.session().__enter__(), gallery.services().maintenance.model_id)
                np.savez(args.dump, ids=rows.ids, embeddings=rows.embeddings, photos=np.array(rows.photos),
                         labels=np.array([labels[int(i)] for i in rows.ids]), enrolled=np.array(sorted(enrolled)),
                         repeated=np.array(repeated))
            timer = time.time()
            found = parts_of(gallery).suggesting.refresh()
            grouping_seconds = time.time() - timer
            result = {"command": "python " + " ".join(sys.argv), "cpus": os.cpu_count(),
                      "protocol": {"enrolled_min_photos": ENROLLED_MIN, "enrolled_stream_photos": ENROLLED_STREAM,
                                   "seed": SEED, "enrolled": len(enrolled), "photos": len(stream),
                                   "repeated_strangers": len(repeated), "one_photo_strangers": len(singles),
                                   "min_faces": suggesting.MIN_FACES, "min_photos": suggesting.MIN_PHOTOS,
                                   "grouping_far": suggesting.GROUPING_FAR, "near_far": suggesting.NEAR_FAR,
                                   "min_z": grouping.MIN_Z, "cohort": [grouping.COHORT_SKIP, grouping.COHORT_SIZE]},
                      "unknown_faces": unknown, "kept_faces": parts_of(gallery).strangers.count(),
                      "grouping_threshold": round(parts_of(gallery).suggesting._grouping_threshold, 4),
                      "near_threshold": round(parts_of(gallery).suggesting._near_threshold, 4),
                      "shipped": scored(found, labels, enrolled, set(repeated)),
                      "grouping_seconds_all_kept_faces": round(grouping_seconds, 2),
                      "stream_seconds": round(seconds_stream, 1)}
            print(json.dumps(result["shipped"]), flush=True)
            result["other_rates"] = {}
            for far in [suggesting.GROUPING_FAR] + args.compare_far:
                for near in [suggesting.NEAR_FAR] + args.compare_near:
                    if (far, near) == (suggesting.GROUPING_FAR, suggesting.NEAR_FAR):
                        continue
                    again, threshold, near_threshold = regrouped(gallery, far, near)
                    key = f"grouping {far:g}, near {near:g}"
                    result["other_rates"][key] = {"grouping_threshold": round(threshold, 4),
                                                  "near_threshold": round(near_threshold, 4),
                                                  **scored(again, labels, enrolled, set(repeated))}
                    print(key, json.dumps(result["other_rates"][key]), flush=True)
            result["pair_tests"] = {}
            for pair_test in ("score and memory", "score"):
                again, threshold, near_threshold = regrouped(gallery, suggesting.GROUPING_FAR, suggesting.NEAR_FAR,
                                                             pair_test)
                result["pair_tests"][pair_test] = {"grouping_threshold": round(threshold, 4),
                                                   "near_threshold": round(near_threshold, 4),
                                                   **scored(again, labels, enrolled, set(repeated))}
                print(pair_test, json.dumps(result["pair_tests"][pair_test]), flush=True)
    result["seconds"] = round(time.time() - started, 1)
    print(json.dumps(result, indent=1))
    if args.out:
        write_result(args.out, result, Settings.from_env().model_path, threads=0)


if __name__ == "__main__":
    main()
