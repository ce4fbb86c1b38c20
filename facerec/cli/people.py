"""`facerec enroll | quality | add-photo | enroll-dir | identify (a photo or a folder: `library`) | verify | list |
rename | delete | sightings | templates`:
the everyday commands on people and photos."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from facerec.cli.output import emit, error_line, open_gallery, pick_face_hint, progress_bar
from facerec.cli.registry import CommandAdder
from facerec.errors import FaceRecError, IdentityMismatch, InvalidArgument, LowQuality, MultipleFaces, PossibleDuplicate
from facerec.words.phrasing import faces_left_out_message, plural, score_text
from facerec.words.people import faces_text
from facerec.words.templates import learning_sentence, undo_sentence
from facerec.words.threshold import (compared, score_name, shown_score, strangers_scoring, threshold_sentence,
                                     worded)


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the `facerec` parser."""
    p = command("enroll", cmd_enroll, "enroll a new person from one photo")
    p.add_argument("photo")
    p.add_argument("--name", required=True)
    p.add_argument("--face", type=int, help="face index when the photo has several faces (left to right, from 0)")
    p.add_argument("--force", action="store_true", help="enroll even if the face matches another person")
    p.add_argument("--allow-low-quality", action="store_true",
                   help="enroll even if the face is a poor enrollment photo (small, blurred, turned away)")
    p.add_argument("--note")
    p.set_defaults(hints={MultipleFaces: pick_face_hint("--face N"),
                          PossibleDuplicate: "If this is a different person, run the command again with --force.",
                          LowQuality: "To enroll it anyway, run the command again with --allow-low-quality."})
    p = command("quality", cmd_quality, "how likely a photo's face is to be recognised later if enrolled")
    p.add_argument("photo")
    p.add_argument("--face", type=int, help="face index when the photo has several faces (left to right, from 0)")
    p.set_defaults(hints={MultipleFaces: pick_face_hint("--face N")})
    p = command("add-photo", cmd_add_photo, "add another photo of an enrolled person")
    p.add_argument("name")
    p.add_argument("photo")
    p.add_argument("--face", type=int, help="face index when the photo has several faces (left to right, from 0)")
    p.add_argument("--force", action="store_true",
                   help="add it even if the face does not match this person (or matches someone else better)")
    p.add_argument("--allow-low-quality", action="store_true",
                   help="add it even if the face is unlikely to be recognised later (small, blurred, turned away)")
    p.set_defaults(hints={MultipleFaces: pick_face_hint("--face N"),
                          IdentityMismatch: "If you are sure it is them, run the command again with --force.",
                          LowQuality: "To add it anyway, run the command again with --allow-low-quality."})
    p = command("enroll-dir", cmd_enroll_dir, "enroll a folder of <identity>/<photo> files")
    p.add_argument("directory")
    p.add_argument("--all", action="store_true", help="enroll every photo, not only the first of each person")
    p = command("identify", cmd_identify, "identify every face in a photo or a video (one answer per face followed "
                "across its frames), or in every photo and video under a folder")
    p.add_argument("photo", help="a photo, a video (MP4, MOV, WebM, MKV, AVI), or a folder of them (subfolders "
                   "included)")
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--out", help="for a folder (default facerec-identified) or a video: write OUT.csv and OUT.json "
                   "(for a folder also OUT.progress.jsonl, to resume)")
    p.add_argument("--annotate", metavar="OUT.webm", help="for a video: write a copy with each face's box and name "
                   "drawn on it (VP9 WebM, which browsers play)")
    p.add_argument("--workers", type=int, help="for a folder: photos identified at once (default: every core)")
    p.add_argument("--group", action="store_true",
                   help="for a folder: group the faces nobody enrolled matches into people (OUT.groups.json; a "
                        "second run keeps the groups' numbers); keeps those faces' embeddings in the run's own "
                        "files for at most 30 days")
    p = command("verify", cmd_verify, "are two photos the same person?")
    p.add_argument("photo_a")
    p.add_argument("photo_b")
    p.add_argument("--face-a", type=int, help="face of the first photo when it has several (left to right, from 0)")
    p.add_argument("--face-b", type=int, help="face of the second photo when it has several")
    p.set_defaults(hints={MultipleFaces: pick_face_hint("--face-a N (first photo) or --face-b N (second photo)")})
    p = command("list", cmd_list, "list enrolled people")
    p.add_argument("--search", help="substring of the name")
    p = command("rename", cmd_rename, "rename a person")
    p.add_argument("name")
    p.add_argument("new_name")
    p = command("merge", cmd_merge, "one person enrolled twice: every face and record of SOURCE becomes TARGET's "
                "(export first to be able to undo)")
    p.add_argument("source")
    p.add_argument("target")
    p.add_argument("--force", action="store_true", help="merge even when no face of one matches the other's")
    p = command("move-face", cmd_move_face, "move one face (its id: `facerec templates NAME`) to another person "
                "or to a new one")
    p.add_argument("face_id", type=int)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--to", help="the enrolled person it goes to")
    where.add_argument("--new-name", help="a new person, made from this face")
    p.add_argument("--force", action="store_true", help="move even when it does not match the person's photos")
    p = command("delete", cmd_delete, "delete a person and their faces")
    p.add_argument("name")
    p = command("sightings", cmd_sightings, "the memory of recent identifications: confirm, correct or reject one "
                "(its id is in `facerec identify`'s output), or clear them all")
    p.add_argument("action", choices=["confirm", "correct", "reject", "not-this-person", "clear"])
    p.add_argument("id", type=int, nargs="?", help="the sighting's id (confirm, correct, reject, not-this-person: "
                                                   "the face is not who it was named as, and faces more like it "
                                                   "than like them will not be named them)")
    p.add_argument("name", nargs="?", help="who it really is (correct)")
    p.add_argument("--no-learn", action="store_true",
                   help="confirm or correct without learning the face as a template of the person")
    p = command("negatives", cmd_negatives, "the faces an admin said are not a person (\"not this person\"), or "
                "remove one (undo)")
    p.add_argument("name")
    p.add_argument("--remove", type=int, metavar="ID", help="undo this negative example")
    p = command("templates", cmd_templates, "the faces a person is searched by, and where each came from "
                "(enrolled, added, learned from a confirmed sighting)")
    p.add_argument("name")
    p.add_argument("--remove", type=int, metavar="FACE_ID", help="remove this face (never the person's last)")


def cmd_enroll(args) -> int:
    with open_gallery(args) as gallery:
        result = gallery.enroll(args.photo, args.name, face_index=args.face, allow_lookalike=args.force,
                                note=args.note, allow_low_quality=args.allow_low_quality)
    text = f"enrolled '{result.name}' (identity {result.identity_id}, {result.photos} photo)"
    if result.lookalikes:
        text += "; looks like " + ", ".join(f"{n} ({score_text(s)})" for n, s in result.lookalikes)
    if result.quality is not None:
        text += "\n" + result.quality.sentence()
    emit(args, worded(result.to_dict(), result.lookalike_threshold), text=text)
    return 0


def cmd_quality(args) -> int:
    with open_gallery(args) as gallery:
        quality = gallery.services().photos.enrollment_quality(args.photo, face_index=args.face)
    if quality is None:
        raise FaceRecError("no enrollment-quality calibration ships next to this model; run "
                           "scripts/calibrate_quality.py")
    emit(args, quality.to_dict(), text=quality.sentence())
    return 0


def cmd_add_photo(args) -> int:
    with open_gallery(args) as gallery:
        result = gallery.add_photo(args.name, args.photo, face_index=args.face, allow_mismatch=args.force,
                                   allow_low_quality=args.allow_low_quality)
    emit(args, result.to_dict(), text=f"added a photo to '{result.name}' ({faces_text(result.photos, result.learned)})")
    return 0


def cmd_enroll_dir(args) -> int:
    from facerec.datasets.folders import list_identities

    identities = list_identities(args.directory)
    photos = [(n, p) for n, ps in identities.items() for p in (ps if args.all else ps[:1])]
    done, problems = [], []
    with open_gallery(args) as gallery, progress_bar(len(photos), "enrolling") as bar:
        known = {i.name for i in gallery.people()}
        for name, path in photos:
            adding = name in known  # the folder says who it is, as it does for enroll's look-alike check
            try:
                if adding:
                    gallery.add_photo(name, path, allow_mismatch=True, allow_low_quality=True)
                else:
                    gallery.enroll(path, name, allow_lookalike=True, allow_low_quality=True)
                    known.add(name)
                done.append({"name": name, "photo": str(path)})
            except FaceRecError as error:
                hints = {MultipleFaces: _one_face_of(name, path, adding)}
                problems.append({"name": name, "photo": str(path), "error": error_line(error, hints)})
            bar.update(1)
    people = len({d["name"] for d in done})
    emit(args, {"enrolled": len(done), "problems": problems},
          [[p["name"], Path(p["photo"]).name, p["error"]] for p in problems], ["name", "photo", "problem"],
          text=f"enrolled {plural(len(done), 'photo')} of {plural(people, 'person', 'people')}; "
               f"{plural(len(problems), 'problem')}")
    return 0


def _one_face_of(name: str, path: Path, adding: bool):
    """The hint for a folder's photo with several faces: the command that takes that one photo, with `--face N` (a
    folder has no way to say which face is the person)."""

    def hint(error: MultipleFaces) -> str:
        command = (f"facerec add-photo {shlex.quote(name)} {shlex.quote(str(path))}" if adding
                   else f"facerec enroll {shlex.quote(str(path))} --name {shlex.quote(name)}")
        return f"Enroll the face you mean with `{command} --face N` (0 to {len(error.faces) - 1}, left to right)."

    return hint


def cmd_identify(args) -> int:
    if Path(args.photo).is_dir():
        from facerec.cli.library import identify_folder

        return identify_folder(args)
    from facerec.cli.library import write_outputs
    from facerec.cli.video import identify_video
    from facerec.library.files import is_video

    if is_video(args.photo):
        return identify_video(args, write_outputs)
    with open_gallery(args) as gallery:
        matches = gallery.identify(args.photo, top_k=args.top_k)
    rows = [[i, m.label, shown_score(m.score, m.similarity), strangers_scoring(m.stranger_far) if m.name else "",
             ", ".join(f"{c.name} {shown_score(c.score, c.similarity)}" for c in m.candidates),
             " ".join(str(round(v)) for v in m.face.box), "" if m.sighting_id is None else m.sighting_id]
            for i, m in enumerate(matches)]
    kept = [m.sighting_id for m in matches if m.sighting_id is not None]
    text = f"{len(matches)} face(s). {threshold_sentence(matches[0].rule)}"
    left_out = faces_left_out_message(matches.found, len(matches))
    if left_out:
        text += f"\n{left_out}"
    if kept:
        text += (f"\nKept as sighting(s) {', '.join(map(str, kept))}: if one is wrong, `facerec sightings correct ID "
                 "NAME` or `facerec sightings reject ID`.")
    headers = ["face", "name", score_name(matches[0].rule), "strangers who score this high", "candidates", "box",
               "sighting"]
    emit(args, [worded(m.to_dict(), m.rule) for m in matches], rows, headers,
          text=text)
    return 0


def cmd_verify(args) -> int:
    with open_gallery(args) as gallery:
        result = gallery.verify(args.photo_a, args.photo_b, face_a=args.face_a, face_b=args.face_b)
    verdict = "same person" if result.same_person else "different people"
    numbers = compared(result.score, result.similarity, result.score_threshold, result.rule, result.stranger_far)
    emit(args, worded(result.to_dict(), result.rule),
          text=f"{verdict}: {numbers}. {threshold_sentence(result.rule)}")
    return 0


def cmd_list(args) -> int:
    with open_gallery(args) as gallery:
        people = gallery.people(args.search)
    rows = [[p.id, p.name, p.photos - p.learned, p.learned, p.created_at.strftime("%Y-%m-%d %H:%M")] for p in people]
    emit(args, [p.to_dict() for p in people], rows, ["id", "name", "photos", "learned", "enrolled"],
         text=plural(len(people), "person", "people"))
    return 0


def cmd_rename(args) -> int:
    with open_gallery(args) as gallery:
        info = gallery.rename(args.name, args.new_name)
    emit(args, info.to_dict(), text=f"renamed '{args.name}' to '{info.name}'")
    return 0


def cmd_merge(args) -> int:
    with open_gallery(args) as gallery:
        done = gallery.merge(args.source, args.target, force=args.force)
    emit(args, done.to_dict(), text=f"merged '{done.removed_person}' into '{done.name}': {len(done.moved)} face(s) "
                                    f"moved, {len(done.duplicates)} duplicate(s) of the same photo dropped")
    return 0


def cmd_move_face(args) -> int:
    with open_gallery(args) as gallery:
        done = gallery.move_face(args.face_id, to=args.to, new_name=args.new_name, force=args.force)
    emit(args, done.to_dict(), text=f"face {args.face_id} is now '{done.name}''s")
    return 0


def cmd_delete(args) -> int:
    with open_gallery(args) as gallery:
        info = gallery.delete(args.name)
    emit(args, info.to_dict(), text=f"deleted '{info.name}' ({faces_text(info.photos, info.learned)})")
    return 0


def cmd_sightings(args) -> int:
    if args.action != "clear" and args.id is None:
        raise InvalidArgument(f"`facerec sightings {args.action}` needs the sighting's id")
    if args.action == "correct" and not args.name:
        raise InvalidArgument("`facerec sightings correct ID NAME` needs the name of who it really is")
    with open_gallery(args) as gallery:
        if args.action == "clear":
            count = gallery.services().feedback.clear()
            emit(args, {"cleared": count}, text=f"cleared {count} sighting(s)")
            return 0
        by = None if args.no_learn else "command line"
        info = {"confirm": lambda: gallery.services().feedback.confirm(args.id, learn_by=by),
                "correct": lambda: gallery.services().feedback.correct(args.id, args.name, learn_by=by),
                "reject": lambda: gallery.services().feedback.reject(args.id),
                "not-this-person": lambda: gallery.services().feedback.not_this_person(args.id, "command line"),
                }[args.action]()
    text = (f"sighting {info.id}: {info.source} as '{info.name}'." if info.source not in ("rejected", "not this person")
            else f"sighting {info.id} forgotten (it was not '{info.name}').")
    if info.negative_id is not None:
        text += (f" Kept as negative example {info.negative_id} of '{info.name}': faces more like it than like them "
                 "are no longer named them.")
    text += undo_sentence(info.undone) + learning_sentence(info.learning)
    emit(args, info.to_dict(), text=text)
    return 0


def cmd_negatives(args) -> int:
    with open_gallery(args) as gallery:
        negatives = gallery.services().negatives
        if args.remove is not None:
            if args.remove not in [n.id for n in negatives.of(args.name)]:
                raise InvalidArgument(f"'{args.name}' has no negative example {args.remove}: `facerec negatives "
                                      "NAME` lists them")
            negatives.remove(args.remove)
            emit(args, {"removed": args.remove}, text=f"negative example {args.remove} of '{args.name}' removed")
            return 0
        listed = negatives.of(args.name)
    emit(args, [n.to_dict() for n in listed], [[n.id, n.said_by, n.sighting_id or "", n.created_at] for n in listed],
         ["id", "said by", "sighting", "when"], text=f"{len(listed)} negative example(s) of '{args.name}'")
    return 0


def cmd_templates(args) -> int:
    with open_gallery(args) as gallery:
        if args.remove is not None:
            if args.remove not in [t.face_id for t in gallery.services().templates.of(args.name)]:
                raise InvalidArgument(f"'{args.name}' has no face {args.remove}: `facerec templates NAME` lists them")
            removed = gallery.services().templates.remove(args.remove)
            emit(args, removed.to_dict(), text=f"removed face {removed.face_id} ({removed.origin})")
            return 0
        kept = gallery.services().templates.of(args.name)
    rows = [[t.face_id, t.origin, "" if t.learned_from is None else t.learned_from, t.learned_by or "",
             t.added_at.strftime("%Y-%m-%d %H:%M")] for t in kept]
    emit(args, [t.to_dict() for t in kept], rows, ["face", "origin", "from sighting", "confirmed by", "added"],
         text=faces_text(len(kept), sum(t.origin == "learned" for t in kept)))
    return 0
