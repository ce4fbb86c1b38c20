"""How often enrollment refuses a new, different person as a look-alike, in a 4,848-person gallery.

    python benchmarks/lookalike_refusal.py --lfw ../shared/data/lfw --json benchmarks/results/lookalike_refusal.json

The gallery is the one-shot protocol's with distractors (one photo of each of the 4,848 LFW people with one or
two photos: the seeded enrolled photo of the 779 evaluation people and the 4,069 one-photo people), enrolled in
bulk from their embeddings. Then, for a seeded sample of `--people` of them, one at a time: the person is
deleted, so the gallery holds 4,847 people who are all someone else, and enrolled again from their photo
through `Gallery.enroll` (detection, alignment, embedding and the look-alike check, as the app does; the face
nearest the photo's centre, the one the dataset labels). A refusal (PossibleDuplicate) is a new, different
person turned away; the person is then put back either way. The threshold is the policy's for the gallery size
(`facerec.openset.threshold_policy`, default accepted stranger-match rate 1%). LFW is measured here, never tuned on.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.faces.choice import central_face  # noqa: E402
from facerec.errors import FaceRecError, PossibleDuplicate  # noqa: E402
from facerec.evaluation.embedding import embed_photos  # noqa: E402
from facerec.evaluation.oneshot import plan_protocol  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402


def wilson(successes: int, trials: int, z: float = 1.96) -> list[float]:
    """95% Wilson score interval of a binomial proportion (each person is tried once)."""
    if trials == 0:
        return [float("nan"), float("nan")]
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return [float(centre - half), float(centre + half)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lfw", default="../shared/data/lfw")
    parser.add_argument("--people", type=int, default=1000, help="how many people to re-enroll (0 = all)")
    parser.add_argument("--fpir", type=float, help="accepted stranger-match rate (default: the settings')")
    parser.add_argument("--seed", type=int, default=51)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    started = time.perf_counter()
    enrolled, _queries, extra = plan_protocol(Path(args.lfw), 2, True, args.seed)
    people = {**enrolled, **extra}
    names = list(people)
    with tempfile.TemporaryDirectory(prefix="facerec-lookalike-") as home:
        settings = Settings.from_env(home=Path(home), fpir=args.fpir, store_crops=False)
        gallery = Gallery(settings)
        try:
            with tqdm(total=len(names), desc="embedding the gallery", file=sys.stderr) as bar:
                photos = embed_photos(parts_of(gallery).pipeline, [people[n] for n in names], bar.update)
            parts_of(gallery).enrollment.add_embeddings([{"name": n, "embedding": v, "photo_sha256": s, "box": b}
                                    for n, v, s, b in zip(names, photos.embeddings, photos.sha256, photos.boxes)])
            sample = sorted(random.Random(args.seed).sample(sorted(names), args.people or len(names)))
            trials, refusals, skipped, rules = 0, [], [], []
            for name in tqdm(sample, desc="re-enrolling", file=sys.stderr):
                gallery.delete(name)
                photo, faces = gallery.services().photos.detect(people[name])
                face = central_face(faces, photo.pixels.shape)
                if face is None:
                    skipped.append(name)
                else:
                    rules.append(gallery.services().thresholds.in_force())
                    trials += 1
                    try:
                        # What is measured is the look-alike check alone: a poor photo is enrolled anyway.
                        gallery.enroll(photo, name, face_index=faces.index(face), allow_low_quality=True)
                        continue
                    except PossibleDuplicate as refused:
                        refusals.append({"name": name, "matches": [[n, round(s, 4)] for n, s in refused.matches]})
                    except FaceRecError as error:
                        trials -= 1
                        skipped.append(f"{name}: {error}")
                index = names.index(name)  # put them back as they were
                parts_of(gallery).enrollment.add_embeddings([{"name": name, "embedding": photos.embeddings[index],
                                         "photo_sha256": photos.sha256[index], "box": photos.boxes[index]}])
        finally:
            gallery.close()
    rule = rules[0] if rules else None
    result = {
        "gallery_people": len(names), "people_re_enrolled": trials,
        "gallery_people_during_each_check": len(names) - 1,
        "refusals": len(refusals), "refusal_rate": len(refusals) / trials if trials else float("nan"),
        "refusal_rate_interval_95": wilson(len(refusals), trials),
        "threshold": None if rule is None else round(rule.threshold, 4),
        "expected_fpir": None if rule is None else rule.expected_fpir,
        "threshold_policy": None if rule is None else rule.to_dict(),
        "refused": refusals, "skipped": skipped, "seconds": round(time.perf_counter() - started, 1),
        "command": "python benchmarks/lookalike_refusal.py " + " ".join(sys.argv[1:]),
    }
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        write_result(args.json, result, settings.model_path, threads=0, embedder=parts_of(gallery).pipeline.embedder)
    print(f"look-alike refusals of new, different people: {len(refusals)}/{trials} = "
          f"{result['refusal_rate']:.2%} (95% {result['refusal_rate_interval_95'][0]:.2%}-"
          f"{result['refusal_rate_interval_95'][1]:.2%}) at threshold {result['threshold']} "
          f"(gallery of {len(names) - 1:,} people; expected {result['expected_fpir']})")


if __name__ == "__main__":
    main()
