"""Feedback that teaches safely (#62): corrections of missed faces learned, strangers' corrections refused, and
chains of confirmed morphs, with and without corroboration of names reached through learned faces.

    python benchmarks/claims.py --data ../shared/data --out benchmarks/results/claims.json

Held-out people (the 150 celeba112 identities facerec's network never trained on, `held_out(..., "single")`),
split by a seeded shuffle: half enrolled, each from their first photo, through `Gallery.enroll`; the other half
are strangers. Their aligned crops are the photos (RetinaFace finds the face in them as in any photo).

1. Corrections: every other photo of an enrolled person is identified at the default (1%); of those not named as
   them (missed), the first of each person is corrected to them as an admin would (`feedback.label`, learned after
   the checks of `facerec.gallery.templates`): the share learned. Then the person's remaining photos are identified
   again: DIR before and after one correction each, on the same photos, and the strangers' photos (FPIR).
2. A stranger's photo corrected to an enrolled person: the first photo of each stranger, corrected to the enrolled
   person it scores highest against (the hardest claim: a look-alike) and to a seeded random one: the share refused.
3. Morph chains on LFW (people with 23+ photos, so twenty of the stranger's photos are left to search): the person
   enrolled from photo 1, with the held-out gallery around them; blends of that enrolled photo with the stranger's
   photo 2, 0.1 further towards the stranger each step, confirmed (learned) whenever the gallery names them as the
   person, up to 10; then the stranger's photos 3-22 identified: how many are named as the person.
4. "Not this person": on the gallery at the default rate (1%) and at 5% (more strangers named), each stranger
   named as someone is said not to be them once (`feedback.not_this_person`, on the first such photo); then all
   their other photos are identified again: the repeat false names before and after, and the enrolled people's
   own photos (DIR) before and after.
Parts 1-3 run twice, with names through learned faces corroborated by the person's own photos (the rule) and
without (the control), on fresh galleries. Measurement only: nothing is chosen here.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facerec.datasets.folders import held_out, list_identities  # noqa: E402
from facerec.errors import FaceRecError  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings, pack_file  # noqa: E402

SEED = 62
CHAINS = (("Tony_Blair", "Colin_Powell"), ("Gerhard_Schroeder", "Donald_Rumsfeld"), ("Ariel_Sharon", "Hugo_Chavez"))
BY = "benchmark"


def largest(matches):
    return max(matches, key=lambda match: match.face.width)


def named(gallery: Gallery, photo) -> str | None:
    try:
        return largest(gallery.identify(photo, remember=False)).name
    except FaceRecError:
        return None


MODEL: Path | None = None  # --pack: the pack every gallery of the run uses (default: facerec's own)


def opened(folder: Path, corroborate: bool, enrolled: dict[str, list[Path]], fpir: float = 0.01) -> Gallery:
    gallery = Gallery(Settings(home=folder / ("on" if corroborate else "off") / str(time.monotonic_ns()), fpir=fpir,
                               **({"model_path": MODEL} if MODEL else {})))
    parts_of(gallery).searching.corroborate_learned = corroborate
    for name, photos in enrolled.items():
        try:
            gallery.enroll(photos[0], name, allow_low_quality=True, allow_lookalike=True)
        except FaceRecError:
            continue
    return gallery


def label(gallery: Gallery, photo, name: str, confirmed: bool = False) -> dict | None:
    """Say `photo`'s largest face is `name`, as an admin, through the feedback service: its learning record."""
    pipeline = parts_of(gallery).pipeline
    decoded = pipeline.read(photo)
    try:
        match = largest(gallery.identify(decoded, remember=False))
    except FaceRecError:
        return None
    return gallery.services().feedback.label(match.embedding, name, confirmed=confirmed, photo=decoded,
                                             face=match.face, learn_by=BY).learning


def corrections(gallery: Gallery, enrolled: dict[str, list[Path]], strangers: dict[str, list[Path]]) -> dict:
    people = {person.name for person in gallery.people()}
    probes = {name: photos[1:] for name, photos in enrolled.items() if name in people}
    before = {name: [named(gallery, photo) for photo in photos] for name, photos in probes.items()}
    corrected, learned, reasons = {}, 0, {}
    for name, answers in before.items():
        missed = [i for i, answer in enumerate(answers) if answer != name]
        if not missed:
            continue
        corrected[name] = missed[0]
        learning = label(gallery, probes[name][missed[0]], name)
        if learning and learning["learned_face_id"] is not None:
            learned += 1
        elif learning:
            reason = learning["not_learned_because"].split(" (")[0]
            reasons[reason] = reasons.get(reason, 0) + 1
    kept = {name: [i for i in range(len(probes[name])) if i != corrected.get(name)] for name in probes}
    after = {name: [named(gallery, probes[name][i]) for i in kept[name]] for name in probes}
    right_before = sum(before[name][i] == name for name in probes for i in kept[name])
    right_after = sum(answer == name for name, answers in after.items() for answer in answers)
    mated = sum(len(indices) for indices in kept.values())
    stranger_photos = [photo for photos in strangers.values() for photo in photos]
    false_after = sum(named(gallery, photo) is not None for photo in stranger_photos)
    return {"enrolled": len(probes), "missed_people": len(corrected), "learned": learned,
            "learned_share": round(learned / max(1, len(corrected)), 4), "not_learned_because": reasons,
            "mated_searches": mated, "dir_before": round(right_before / mated, 4),
            "dir_after_one_correction_each": round(right_after / mated, 4),
            "non_mated_searches": len(stranger_photos), "fpir_after": round(false_after / len(stranger_photos), 4)}


def stranger_targets(gallery: Gallery, strangers: dict[str, list[Path]], rng: random.Random) -> list[tuple]:
    """Each stranger's first photo with the two people it is claimed to be: (photo, the enrolled person it scores
    highest against, a random enrolled person drawn from `rng`)."""
    people = sorted(person.name for person in gallery.people())
    targets = []
    for photos in strangers.values():
        try:
            best = largest(gallery.identify(photos[0], remember=False)).candidates[0].name
        except (FaceRecError, IndexError):
            continue
        targets.append((photos[0], best, rng.choice(people)))
    return targets


def stranger_claims(gallery: Gallery, strangers: dict[str, list[Path]], rng: random.Random) -> dict:
    refused = {"look_alike": 0, "random": 0}
    targets = stranger_targets(gallery, strangers, rng)
    tries = len(targets)
    for photo, best, anyone in targets:
        for kind, target in (("look_alike", best), ("random", anyone)):
            learning = label(gallery, photo, target)
            if learning is None or learning["learned_face_id"] is None:
                refused[kind] += 1
            else:  # undo, so the next claim meets the gallery as it was
                gallery.services().templates.remove(learning["learned_face_id"])
    return {"tries": tries, **{f"refused_share_{kind}": round(count / max(1, tries), 4)
                               for kind, count in refused.items()}}


def not_this_person(gallery: Gallery, enrolled: dict[str, list[Path]], strangers: dict[str, list[Path]]) -> dict:
    """Strangers named as someone: "not X" on the first such photo of each, then every photo of those strangers
    identified again (repeat false names of X), and the enrolled people's own photos (their DIR) before and after."""
    people = {person.name for person in gallery.people()}
    own = [(name, photo) for name, photos in enrolled.items() if name in people for photo in photos[1:]]
    own_before = [named(gallery, photo) == name for name, photo in own]
    before, said = {}, {}
    for stranger, photos in strangers.items():
        answers = [named(gallery, photo) for photo in photos]
        before[stranger] = answers
        first = next((i for i, answer in enumerate(answers) if answer is not None), None)
        if first is None:
            continue
        match = largest(gallery.identify(photos[first]))
        if match.sighting_id is not None and match.name is not None:
            gallery.services().feedback.not_this_person(match.sighting_id, by=BY)
            said[stranger] = (first, match.name)
    repeat_before = repeat_after = photos_checked = 0
    for stranger, (first, name) in said.items():
        rest = [i for i in range(len(strangers[stranger])) if i != first]
        repeat_before += sum(before[stranger][i] == name for i in rest)
        repeat_after += sum(named(gallery, strangers[stranger][i]) == name for i in rest)
        photos_checked += len(rest)
    own_after = [named(gallery, photo) == name for name, photo in own]
    return {"strangers_named": len(said), "their_other_photos": photos_checked,
            "repeat_false_names_before": repeat_before, "repeat_false_names_after": repeat_after,
            "enrolled_dir_before": round(float(np.mean(own_before)), 4),
            "enrolled_dir_after": round(float(np.mean(own_after)), 4), "enrolled_searches": len(own)}


def blend(first: Path, second: Path, towards_second: float) -> bytes:
    a = np.asarray(Image.open(first).convert("RGB"), np.float32)
    b = np.asarray(Image.open(second).convert("RGB"), np.float32)
    buffer = io.BytesIO()
    Image.fromarray((a * (1 - towards_second) + b * towards_second).astype(np.uint8)).save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


def morph_chain(gallery: Gallery, lfw: dict[str, list[Path]], person: str, stranger: str) -> dict:
    name = person.replace("_", " ")
    gallery.enroll(lfw[person][0], name, allow_low_quality=True, allow_lookalike=True)
    confirmed = 0
    for step in np.arange(1, 11) / 10:
        match = largest(gallery.identify(blend(lfw[person][0], lfw[stranger][1], float(step))))
        if match.name == name and match.sighting_id is not None:
            learning = gallery.services().feedback.confirm(match.sighting_id, learn_by=BY).learning
            confirmed += learning["learned_face_id"] is not None
    answers = [named(gallery, photo) for photo in lfw[stranger][2:22]]
    gallery.delete(name)
    return {"person": person, "stranger": stranger, "learned_blends": confirmed,
            "stranger_photos_named_as_person": answers.count(name), "stranger_photos": len(answers)}


def held_out_people(data: Path) -> tuple[dict[str, list[Path]], dict[str, list[Path]]]:
    """(enrolled, strangers): the held-out celeba112 identities, shuffled by SEED and halved; each with its photos."""
    celeba = list_identities(data / "celeba112")
    held = sorted(held_out(celeba, "single").selection)
    random.Random(SEED).shuffle(held)
    return ({name: celeba[name] for name in sorted(held[: len(held) // 2])},
            {name: celeba[name] for name in sorted(held[len(held) // 2:])})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--pack", help="a model pack by name (default: facerec's own)")
    args = parser.parse_args()
    global MODEL
    MODEL = pack_file(args.pack) if args.pack else None
    started = time.perf_counter()
    enrolled, strangers = held_out_people(Path(args.data))
    lfw = list_identities(Path(args.data) / "lfw")
    arms = {}
    with tempfile.TemporaryDirectory(prefix="facerec-claims-") as folder:
        for corroborate in (True, False):
            arm = {}
            with opened(Path(folder), corroborate, enrolled) as gallery:
                arm["corrections"] = corrections(gallery, enrolled, strangers)
                print(corroborate, arm["corrections"], flush=True)
            with opened(Path(folder), corroborate, enrolled) as gallery:
                arm["stranger_claims"] = stranger_claims(gallery, strangers, random.Random(SEED))
                print(corroborate, arm["stranger_claims"], flush=True)
                arm["morph_chains"] = [morph_chain(gallery, lfw, person, stranger) for person, stranger in CHAINS]
                print(corroborate, arm["morph_chains"], flush=True)
            if corroborate:
                for fpir in (0.01, 0.05):
                    with opened(Path(folder), corroborate, enrolled, fpir) as gallery:
                        arm[f"not_this_person_at_{fpir:g}"] = not_this_person(gallery, enrolled, strangers)
                        print(fpir, arm[f"not_this_person_at_{fpir:g}"], flush=True)
            arms["corroborated" if corroborate else "not_corroborated"] = arm
    write_result(args.out, {"what": "#62: corrections learned, strangers' claims refused, morph chains, with and "
                                    "without corroboration of names reached through learned faces",
                            "protocol": {"held_out": "celeba112, split 'single' (never trained on)",
                                         "enrolled_people": len(enrolled), "strangers": len(strangers), "seed": SEED,
                                         "chains": [list(pair) for pair in CHAINS]},
                            "arms": arms, "seconds": round(time.perf_counter() - started, 1)},
                 MODEL or Settings().model_path, 0)


if __name__ == "__main__":
    main()
