"""A gallery that learns from confirmed faces, replayed on LFW: DIR and FPIR after 0, 1, 2 and 4 confirmations.

    nice -n 5 python benchmarks/replay_learning.py --data ../shared/data --out benchmarks/results/replay_learning.json

Every LFW person with >= 6 photos is enrolled from one photo (seeded choice) through `Gallery.enroll`. Four of
their other photos are the usage stream, identified in a seeded order through `Gallery.identify` (which keeps each
named face as a sighting with its aligned face); a simulated user confirms a right answer and corrects a wrong or
"unknown" one (`confirm_sighting` / `correct_sighting` / `label_face` with `learn_by`: the face is learned as a
template after add-photo's checks). The rest of each person's photos are the probes (mated searches), and the 4,069
one-photo people the strangers (non-mated searches), both scored at the threshold in force for the gallery at each
step (the default 1% rate), from embeddings made once by the same pipeline.

A second replay has the user err 5% of the time (a seeded choice of answers labelled as a random other enrolled
person): its DIR after 4 confirmations, and again once the templates learned from the wrong labels are removed.
The gallery people have 3+ photos, so the model was trained on them (the LFW protocol allows it): their scores
flatter the DIR, as in `open_set_photos.py`. Measurement only, never tuning.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.errors import FaceRecError  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

MIN_PHOTOS, STREAM, SEED, ERROR_RATE = 6, 4, 41, 0.05
CHECKPOINTS = (0, 1, 2, 4)


def largest_embedding(gallery: Gallery, photo: Path) -> np.ndarray | None:
    """The largest face's embedding, made by identify's own pipeline (nothing kept)."""
    try:
        matches = gallery.identify(photo, top_k=1, remember=False)
    except FaceRecError:
        return None
    widest = max(matches, key=lambda m: m.face.box[2] - m.face.box[0])
    return widest.embedding


def scored(gallery: Gallery, probes: list[tuple[str, np.ndarray]], strangers: np.ndarray) -> dict:
    """DIR over the probes and FPIR over the strangers at the threshold in force now."""
    rule = gallery.services().thresholds.in_force()
    names, vectors = [n for n, _ in probes], np.stack([v for _, v in probes])
    named = 0
    for start in range(0, len(vectors), 256):
        for name, candidates in zip(names[start:start + 256], parts_of(gallery).searching.search(vectors[start:start + 256], 1)):
            named += bool(candidates) and candidates[0].name == name and candidates[0].similarity >= rule.threshold
    matched = 0
    for start in range(0, len(strangers), 256):
        matched += sum(bool(c) and c[0].similarity >= rule.threshold
                       for c in parts_of(gallery).searching.search(strangers[start:start + 256], 1))
    return {"threshold": round(rule.threshold, 4), "faces": rule.comparisons,
            "dir": round(named / len(probes), 4), "named": named, "mated_searches": len(probes),
            "fpir": round(matched / len(strangers), 4), "false_matches": int(matched),
            "non_mated_searches": len(strangers)}


def replay(args, people: dict, stream: dict, probes_of: dict, strangers: np.ndarray, error_rate: float,
           home: Path) -> dict:
    rng = np.random.default_rng(SEED + 1)
    with Gallery(Settings.from_env(home=home)) as gallery:
        enrolled = []
        for name, photo in people.items():
            try:
                gallery.enroll(photo, name, allow_lookalike=True, allow_low_quality=True)
                enrolled.append(name)
            except FaceRecError:
                pass
        probes = [(name, vector) for name in enrolled for vector in probes_of[name]]
        steps, wrong_templates, outcomes = {0: scored(gallery, probes, strangers)}, [], []
        for round_number in range(1, STREAM + 1):
            for name in enrolled:
                photo = stream[name][round_number - 1]
                try:
                    matches = gallery.identify(photo, top_k=1)
                except FaceRecError:
                    continue
                match = max(matches, key=lambda m: m.face.box[2] - m.face.box[0])
                said = name
                if rng.random() < error_rate:  # the user errs: labels the face as someone else
                    other = int(rng.integers(len(enrolled) - 1))
                    said = enrolled[(enrolled.index(name) + 1 + other) % len(enrolled)]
                if match.sighting_id is not None and match.name == said:
                    info = gallery.services().feedback.confirm(match.sighting_id, learn_by="replay")
                elif match.sighting_id is not None:
                    info = gallery.services().feedback.correct(match.sighting_id, said, learn_by="replay")
                else:
                    info = gallery.services().feedback.label(match.embedding, said, photo=gallery.services().photos.read(photo), face=match.face,
                                              learn_by="replay")
                learned = (info.learning or {}).get("learned_face_id")
                outcomes.append({"round": round_number, "right_answer": match.name == name,
                                 "user_right": said == name, "learned": learned is not None})
                if learned is not None and said != name:
                    wrong_templates.append(learned)
            if round_number in CHECKPOINTS:
                steps[round_number] = scored(gallery, probes, strangers)
                print(json.dumps({"error_rate": error_rate, "confirmations": round_number, **steps[round_number]}),
                      flush=True)
        result = {"people": len(enrolled), "steps": steps,
                  "learned": sum(o["learned"] for o in outcomes), "answers_labelled": len(outcomes),
                  "wrong_labels": sum(not o["user_right"] for o in outcomes),
                  "wrong_labels_learned": len(wrong_templates)}
        if wrong_templates:
            for face_id in wrong_templates:
                gallery.services().templates.remove(face_id)
            result["after_removing_wrong_templates"] = scored(gallery, probes, strangers)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out")
    args = parser.parse_args()
    started = time.time()
    lfw = Path(args.data) / "lfw"
    identities = list_identities(lfw)
    rng = np.random.default_rng(SEED)
    people, stream, probe_photos = {}, {}, {}
    for name, photos in sorted(identities.items()):
        if len(photos) >= MIN_PHOTOS:
            order = [photos[i] for i in rng.permutation(len(photos))]
            people[name], stream[name], probe_photos[name] = order[0], order[1:1 + STREAM], order[1 + STREAM:]
    stranger_photos = [photos[0] for _name, photos in sorted(identities.items()) if len(photos) == 1]
    with tempfile.TemporaryDirectory() as folder:
        with Gallery(Settings.from_env(home=Path(folder) / "embedder")) as embedder:  # empty: embeddings only
            probes_of = {name: [v for v in (largest_embedding(embedder, p) for p in photos) if v is not None]
                         for name, photos in probe_photos.items()}
            strangers = np.stack([v for v in (largest_embedding(embedder, p) for p in stranger_photos)
                                  if v is not None])
        print(f"{sum(map(len, probes_of.values()))} probes, {len(strangers)} strangers embedded", flush=True)
        results = {"command": "python " + " ".join(sys.argv), "cpus": os.cpu_count(),
                   "protocol": {"min_photos": MIN_PHOTOS, "stream_photos": STREAM, "seed": SEED,
                                "strangers": len(stranger_photos), "user_error_rate": ERROR_RATE},
                   "honest_user": replay(args, people, stream, probes_of, strangers, 0.0, Path(folder) / "a"),
                   "user_errs": replay(args, people, stream, probes_of, strangers, ERROR_RATE, Path(folder) / "b")}
    results["seconds"] = round(time.time() - started, 1)
    print(json.dumps(results, indent=1))
    if args.out:
        write_result(args.out, results, Settings.from_env().model_path, threads=0)


if __name__ == "__main__":
    main()
