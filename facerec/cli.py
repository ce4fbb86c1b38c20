"""`facerec ...`: a thin command-line shell over the Gallery API and the evaluation modules.

Every command takes `--home DIR` (default FACEREC_HOME, else ./facerec_home) and `--json`. Exit codes: 0 ok,
1 a user error (bad photo, no face, unknown name, ...) reported as one line on stderr, 2 a usage error.
Text for the terminal is printed with invisible and control characters shown as escapes (`\x1b`, `\u202e`), so
a name can never move the cursor, recolour or reorder what is printed; `--json` output is ASCII-escaped JSON.
Files the CLI writes (gallery, exports) are readable by their owner only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import unicodedata
from pathlib import Path

from . import __version__
from .errors import FaceRecError, IdentityMismatch, InvalidArgument, LowQuality, MultipleFaces, PossibleDuplicate
from .messages import rate_text, similarity_text


def main(argv: list[str] | None = None) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    os.umask(0o077)  # galleries and exports hold faces: owner only
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return args.handler(args) or 0
    except FaceRecError as error:
        print(f"error: {terminal_text(error_line(error, getattr(args, 'hints', {})))}", file=sys.stderr)
        return 1
    except (FileNotFoundError, NotADirectoryError, ValueError) as error:
        print(f"error: {terminal_text(error)}", file=sys.stderr)
        return 1
    except SQLAlchemyError as error:
        print(f"error: the gallery database failed ({terminal_text(getattr(error, 'orig', None) or error)})",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="facerec", description="Enroll faces from one photo and identify them.")
    parser.add_argument("--version", action="version", version=f"facerec {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", help="gallery folder (default: $FACEREC_HOME, else ./facerec_home)")
    common.add_argument("--db", metavar="URL",
                        help="gallery database (default: $FACEREC_DATABASE_URL, else gallery.db in the gallery "
                             "folder), e.g. postgresql+psycopg://user@host/facerec")
    common.add_argument("--fpir", type=float,
                        help="accepted stranger-match rate (false-positive identification rate, 0.01 = 1%%, the "
                             "default): the threshold in force is derived from it for the gallery's size")
    common.add_argument("--threshold", type=float,
                        help="pin the cosine similarity threshold instead (overrides --fpir)")
    common.add_argument("--model", help="ONNX model file (default: the shipped model)")
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler, help_text: str, json_file: bool = False) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        if json_file:
            p.add_argument("--json", nargs="?", const="-", metavar="OUT",
                           help="print JSON instead of a table; with OUT, write the JSON there and print the table")
        else:
            p.add_argument("--json", action="store_const", const="-", help="print JSON instead of a table")
        return p

    p = command("enroll", cmd_enroll, "enroll a new person from one photo")
    p.add_argument("photo")
    p.add_argument("--name", required=True)
    p.add_argument("--face", type=int, help="face index when the photo has several faces (left to right, from 0)")
    p.add_argument("--force", action="store_true", help="enroll even if the face matches another person")
    p.add_argument("--allow-low-quality", action="store_true",
                   help="enroll even if the face is a poor enrollment photo (small, blurred, turned away)")
    p.add_argument("--note")
    p.set_defaults(hints={MultipleFaces: _pick_face("--face N"),
                          PossibleDuplicate: "If this is a different person, run the command again with --force.",
                          LowQuality: "To enroll it anyway, run the command again with --allow-low-quality."})
    p = command("quality", cmd_quality, "how likely a photo's face is to be recognised later if enrolled")
    p.add_argument("photo")
    p.add_argument("--face", type=int, help="face index when the photo has several faces (left to right, from 0)")
    p.set_defaults(hints={MultipleFaces: _pick_face("--face N")})
    p = command("add-photo", cmd_add_photo, "add another photo of an enrolled person")
    p.add_argument("name")
    p.add_argument("photo")
    p.add_argument("--face", type=int, help="face index when the photo has several faces (left to right, from 0)")
    p.add_argument("--force", action="store_true",
                   help="add it even if the face does not match this person (or matches someone else better)")
    p.add_argument("--allow-low-quality", action="store_true",
                   help="add it even if the face is unlikely to be recognised later (small, blurred, turned away)")
    p.set_defaults(hints={MultipleFaces: _pick_face("--face N"),
                          IdentityMismatch: "If you are sure it is them, run the command again with --force.",
                          LowQuality: "To add it anyway, run the command again with --allow-low-quality."})
    p = command("enroll-dir", cmd_enroll_dir, "enroll a folder of <identity>/<photo> files")
    p.add_argument("directory")
    p.add_argument("--all", action="store_true", help="enroll every photo, not only the first of each person")
    p = command("identify", cmd_identify, "identify every face in a photo")
    p.add_argument("photo")
    p.add_argument("--top-k", type=int, default=3)
    p = command("verify", cmd_verify, "are two photos the same person?")
    p.add_argument("photo_a")
    p.add_argument("photo_b")
    p.add_argument("--face-a", type=int, help="face of the first photo when it has several (left to right, from 0)")
    p.add_argument("--face-b", type=int, help="face of the second photo when it has several")
    p.set_defaults(hints={MultipleFaces: _pick_face("--face-a N (first photo) or --face-b N (second photo)")})
    p = command("list", cmd_list, "list enrolled people")
    p.add_argument("--search", help="substring of the name")
    p = command("rename", cmd_rename, "rename a person")
    p.add_argument("name")
    p.add_argument("new_name")
    p = command("delete", cmd_delete, "delete a person and their faces")
    p.add_argument("name")
    p = command("export", cmd_export, "export the gallery to a portable zip file")
    p.add_argument("path")
    p.add_argument("--no-crops", action="store_true", help="embeddings and names only")
    p = command("import", cmd_import, "import a gallery zip file")
    p.add_argument("path")
    p = command("db", cmd_db, "the gallery database's schema: `facerec db upgrade` creates or upgrades it (run "
                "once before the first start on PostgreSQL, and after upgrading facerec)")
    p.add_argument("action", choices=["upgrade"])
    command("health", cmd_health, "embedding metrics, sightings, weak enrollments and confusable pairs of the gallery")
    p = command("sightings", cmd_sightings, "the memory of recent identifications: confirm, correct or reject one "
                "(its id is in `facerec identify`'s output), or clear them all")
    p.add_argument("action", choices=["confirm", "correct", "reject", "clear"])
    p.add_argument("id", type=int, nargs="?", help="the sighting's id (confirm, correct, reject)")
    p.add_argument("name", nargs="?", help="who it really is (correct)")
    keys = sub.add_parser("api-key", help="create, list and revoke the REST API's keys",
                          description="Keys for the app's REST API (/api/v1), stored hashed in the gallery database; "
                                      "with none created the REST API is off. See the README's REST API section.")
    key_commands = keys.add_subparsers(metavar="ACTION")
    keys.set_defaults(handler=lambda _args: keys.print_help() or 2)

    def key_command(name: str, handler, help_text: str) -> argparse.ArgumentParser:
        p = key_commands.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        p.add_argument("--json", action="store_const", const="-", help="print JSON instead of a table")
        return p

    p = key_command("create", cmd_api_key_create, "create a key; it is printed once, only its hash is stored")
    p.add_argument("--role", required=True, choices=["read", "admin"],
                   help="read: identify, verify, list and get people; admin: everything, writes included")
    p.add_argument("--name", help="a label saying who or what the key is for (default: '<role> key')")
    key_command("list", cmd_api_key_list, "list the keys (never the keys themselves: their first characters)")
    p = key_command("revoke", cmd_api_key_revoke, "revoke a key: refused from the next request on")
    p.add_argument("id", type=int, help="the key's id, from `facerec api-key list`")
    command("stats", cmd_stats, "counts, model and index of the gallery")
    command("reindex", cmd_reindex, "re-embed every face from its stored crop with the current model")
    p = command("calibrate", cmd_calibrate, "calibrate a model's false-accept rates on held-out identities and "
                "store them in its model card (run after any model change)", json_file=True)
    p.add_argument("--data", default="../shared/data", help="the data folder holding celeba112/")
    p.add_argument("--card", help="model card to update (default: the model's .json beside it)")
    p.add_argument("--resamples", type=int, default=200, help="bootstrap resamples over identities")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--identities", type=int, help="use only the first N held-out identities (a quick check)")
    p.add_argument("--embeddings", help="an .npz cache of the held-out embeddings, reused for the same model file")

    p = command("eval", cmd_eval, "one-shot identification accuracy on a folder-per-identity dataset",
                json_file=True)
    p.add_argument("data_dir")
    p.add_argument("--max-per-identity", type=int, help="only identities with at most N photos (2 = LFW protocol)")
    p.add_argument("--distractors", action="store_true", help="also enroll identities with a single photo")
    p.add_argument("--open-set", action="store_true",
                   help="also measure FPIR and DIR at the threshold policy, at several gallery sizes")
    p.add_argument("--gallery-sizes", default="100,1000,all",
                   help="open set: gallery sizes in people, comma-separated ('all' = every enrolled person)")
    p.add_argument("--existing", action="store_true", help="query the gallery in --home with labelled probes")
    p.add_argument("--seed", type=int, default=51)
    p.add_argument("--report", help="write plots, JSON and a markdown summary to this folder")
    p = command("eval-pairs", cmd_eval_pairs, "LFW-style 10-fold pair verification accuracy", json_file=True)
    p.add_argument("pairs")
    p.add_argument("data_dir")
    p.add_argument("--report")

    p = command("prepare", cmd_prepare, "detect and align a folder-per-identity dataset into a cache")
    p.add_argument("data_dir")
    p.add_argument("out")
    p = command("train", cmd_train, "train the embedder (needs the 'train' extra)")
    p.add_argument("--celeba", default="../shared/data/celeba112")
    p.add_argument("--lfw-cache", required=True, help="output of `facerec prepare ../shared/data/lfw DIR`")
    p.add_argument("--teacher", nargs="*", default=[],
                   help="teacher files (celeba112_dlib.npz, `facerec teacher-targets` output) for distillation")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--head", default="arcface", choices=["softmax", "contrastive", "triplet", "arcface"])
    p.add_argument("--stem", default="standard", choices=["standard", "high_res"])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--warmup-epochs", type=float, default=1.0, help="linear learning-rate warm-up (epochs)")
    p.add_argument("--arcface-weight", type=float, default=1.0)
    p.add_argument("--distill-weight", type=float, default=0.0)
    p.add_argument("--structure-weight", type=float, default=0.0,
                   help="weight of matching the batch's cosine similarities to the teacher's")
    p.add_argument("--warm-start", help="an ONNX embedder whose weights start the run")
    p.add_argument("--max-seconds", type=float, help="stop after the epoch during which this much time passed")
    p.add_argument("--stop-after-epoch", type=int,
                   help="end after this epoch, keeping the learning-rate schedule of --epochs (resumable)")
    p.add_argument("--train-fraction", type=float, default=1.0,
                   help="train on this seeded fraction of the training identities (the data-slope measurement)")
    p.add_argument("--device", default="auto", help="auto (cuda if present, else cpu), cpu or cuda")
    precision = p.add_mutually_exclusive_group()
    precision.add_argument("--fp32", action="store_const", const=False, dest="bf16",
                           help="force float32 (default: bf16 autocast only where the hardware has native bf16)")
    precision.add_argument("--bf16", action="store_const", const=True, dest="bf16", help="force bf16 autocast")
    p = command("teacher-targets", cmd_teacher_targets,
                "dlib teacher descriptors of an aligned-face cache (needs the 'train' extra), resumable")
    p.add_argument("cache", help="output of `facerec prepare`")
    p.add_argument("out", help="the .npz to write (paths, descriptor, descriptor_mirror)")
    p.add_argument("--training-only", action="store_true",
                   help="only the LFW protocol's training people (>= 3 photos): never the evaluation people")
    p.add_argument("--no-mirror", action="store_true", help="skip the descriptors of the mirrored crops")
    p.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
    p = command("quantize", cmd_quantize, "int8 copy of an fp32 ONNX embedder (static, per channel; needs "
                                          "the 'train' extra)")
    p.add_argument("model", help="the fp32 ONNX export")
    p.add_argument("out")
    p.add_argument("--celeba", default="../shared/data/celeba112", help="training crops for the activation ranges")
    p = command("center", cmd_center, "copy of an ONNX embedder that subtracts a share of its mean training "
                                      "embedding (the 'train' extra; the share is chosen on held-out identities)")
    p.add_argument("model", help="the ONNX embedder (int8 or fp32)")
    p.add_argument("out")
    p.add_argument("--strength", type=float, required=True, help="share of the mean subtracted, e.g. 0.5")
    p.add_argument("--celeba", default="../shared/data/celeba112", help="training crops for the mean")
    p = command("similarity-map", cmd_similarity_map, "copy of an ONNX embedder with a linear map that blends "
                "its cosine similarities with the teacher's (the 'train' extra; the blend is chosen on held-out "
                "identities)")
    p.add_argument("model", help="the uncentered ONNX embedder (int8 or fp32)")
    p.add_argument("out")
    p.add_argument("--keep", type=float, required=True,
                   help="share of the embedding's own similarities kept, in [0, 1] (the rest: the teacher's)")
    p.add_argument("--celeba", default="../shared/data/celeba112", help="training crops the map is fitted on")
    p.add_argument("--teacher", default="../shared/data/teacher/celeba112_dlib.npz",
                   help="the teacher's descriptors of those crops and their mirrors")
    p = command("average", cmd_average, "one fp32 ONNX embedder whose weights are the mean of several stages' "
                                        "(the 'train' extra; which stages is chosen on held-out identities)")
    p.add_argument("out")
    p.add_argument("models", nargs="+", help="fp32 ONNX exports of one architecture (at least two)")
    p.add_argument("--weights", type=float, nargs="+", help="one weight per model (default: equal)")
    p = command("export-onnx", cmd_export_onnx, "export trained weights to ONNX and check it against torch")
    p.add_argument("weights")
    p.add_argument("out")
    p.add_argument("--check-cache", help="an aligned-face cache whose first faces are used for the check")
    return parser


# ----- helpers ---------------------------------------------------------------------------------------------
def error_line(error: FaceRecError, hints: dict | None = None) -> str:
    """The one line the CLI prints for a user error: the error's message, then what to do on the command line
    (`hints`: {error class: sentence, or a function of the error giving one}) where the command knows."""
    text = str(error).strip()
    text = text if not text or text[-1] in ".?!" else text + "."
    for kind, hint in (hints or {}).items():
        if isinstance(error, kind):
            hint = hint(error) if callable(hint) else hint
            return f"{text} {hint}" if hint else text
    return text


def _pick_face(option: str):
    """The hint for a photo with several faces: which option picks one, and the numbers it takes."""

    def hint(error: MultipleFaces) -> str:
        count = len(error.faces)
        return f"Pick one with {option} (0 to {count - 1}, left to right)." if count else f"Pick one with {option}."

    return hint


def _gallery(args):
    from .gallery import Gallery

    overrides = {"home": args.home, "similarity_threshold": args.threshold, "model_path": args.model,
                 "fpir": args.fpir, "database_url": args.db}
    gallery = Gallery.open(**{k: v for k, v in overrides.items() if v is not None and k != "home"}, home=args.home)
    for warning in [*gallery.notices, gallery.model_warning(), gallery.policy.calibration.warning]:
        if warning:
            print(f"warning: {terminal_text(warning)}", file=sys.stderr)
    return gallery


def _settings(args):
    from .settings import Settings

    return Settings.from_env(home=args.home, similarity_threshold=args.threshold, model_path=args.model,
                             fpir=args.fpir, database_url=args.db)


def _emit(args, data, table: list[list] | None = None, headers: list[str] | None = None, text: str = "") -> None:
    """JSON on stdout with `--json`; with `--json FILE` (eval commands) JSON goes to FILE and the table to stdout."""
    if args.json == "-":
        print(json.dumps(_plain(data), indent=1, default=str))
        return
    if args.json:
        Path(args.json).write_text(json.dumps(_plain(data), indent=1, default=str))
    if text:
        print("\n".join(terminal_text(line) for line in text.split("\n")))
    if table is not None and headers:
        table = [[terminal_text(c) for c in row] for row in table]
        widths = [max(len(str(h)), *(len(str(r[i])) for r in table)) if table else len(str(h))
                  for i, h in enumerate(headers)]
        print("  ".join(str(h).ljust(w) for h, w in zip(headers, widths)))
        for row in table:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def terminal_text(value: object) -> str:
    """`value` as one line for a terminal: control, format and separator characters (escape sequences, zero-width
    and right-to-left override characters, newlines) written as Python escapes instead of acting on the display."""
    return "".join(repr(char)[1:-1] if unicodedata.category(char) in _UNPRINTABLE else char for char in str(value))


_UNPRINTABLE = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


def _plain(value):
    """NaN -> null, so the JSON is valid for any parser."""
    import math

    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _progress(total: int, label: str):
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="photo", file=sys.stderr, disable=total < 2, mininterval=0.5)
    return bar


# ----- gallery commands ------------------------------------------------------------------------------------
def cmd_enroll(args) -> int:
    with _gallery(args) as gallery:
        result = gallery.enroll(args.photo, args.name, face_index=args.face, allow_lookalike=args.force,
                                note=args.note, allow_low_quality=args.allow_low_quality)
    text = f"enrolled '{result.name}' (identity {result.identity_id}, {result.photos} photo)"
    if result.lookalikes:
        text += "; looks like " + ", ".join(f"{n} ({similarity_text(s)})" for n, s in result.lookalikes)
    if result.quality is not None:
        text += "\n" + result.quality.sentence()
    _emit(args, result.to_dict(), text=text)
    return 0


def cmd_quality(args) -> int:
    with _gallery(args) as gallery:
        quality = gallery.enrollment_quality(args.photo, face_index=args.face)
    if quality is None:
        raise FaceRecError("no enrollment-quality calibration ships next to this model; run "
                           "scripts/calibrate_quality.py")
    _emit(args, quality.to_dict(), text=quality.sentence())
    return 0


def cmd_sightings(args) -> int:
    if args.action != "clear" and args.id is None:
        raise InvalidArgument(f"`facerec sightings {args.action}` needs the sighting's id")
    if args.action == "correct" and not args.name:
        raise InvalidArgument("`facerec sightings correct ID NAME` needs the name of who it really is")
    with _gallery(args) as gallery:
        if args.action == "clear":
            count = gallery.clear_sightings()
            _emit(args, {"cleared": count}, text=f"cleared {count} sighting(s)")
            return 0
        info = {"confirm": lambda: gallery.confirm_sighting(args.id),
                "correct": lambda: gallery.correct_sighting(args.id, args.name),
                "reject": lambda: gallery.reject_sighting(args.id)}[args.action]()
    _emit(args, info.to_dict(), text=f"sighting {info.id}: {info.source} as '{info.name}'"
          if info.source != "rejected" else f"sighting {info.id} forgotten (it was not '{info.name}')")
    return 0


def cmd_add_photo(args) -> int:
    with _gallery(args) as gallery:
        result = gallery.add_photo(args.name, args.photo, face_index=args.face, allow_mismatch=args.force,
                                   allow_low_quality=args.allow_low_quality)
    _emit(args, result.to_dict(), text=f"added a photo to '{result.name}' ({result.photos} photos)")
    return 0


def cmd_enroll_dir(args) -> int:
    from .dataset import list_identities

    identities = list_identities(args.directory)
    photos = [(n, p) for n, ps in identities.items() for p in (ps if args.all else ps[:1])]
    done, problems = [], []
    with _gallery(args) as gallery, _progress(len(photos), "enrolling") as bar:
        known = {i.name for i in gallery.list()}
        for name, path in photos:
            try:
                if name in known:  # the folder says who it is, as it does for enroll's look-alike check
                    gallery.add_photo(name, path, allow_mismatch=True, allow_low_quality=True)
                else:
                    gallery.enroll(path, name, allow_lookalike=True, allow_low_quality=True)
                    known.add(name)
                done.append({"name": name, "photo": str(path)})
            except FaceRecError as error:
                problems.append({"name": name, "photo": str(path), "error": str(error)})
            bar.update(1)
    _emit(args, {"enrolled": len(done), "problems": problems},
          [[p["name"], Path(p["photo"]).name, p["error"]] for p in problems], ["name", "photo", "problem"],
          text=f"enrolled {len(done)} photo(s) of {len({d['name'] for d in done})} people; {len(problems)} problem(s)")
    return 0


def cmd_identify(args) -> int:
    with _gallery(args) as gallery:
        matches = gallery.identify(args.photo, top_k=args.top_k)
    rows = [[i, m.label, "" if m.similarity is None else f"{m.similarity:.3f}",
             ", ".join(f"{c.name} {c.similarity:.2f}" for c in m.candidates),
             " ".join(str(round(v)) for v in m.face.box), "" if m.sighting_id is None else m.sighting_id]
            for i, m in enumerate(matches)]
    kept = [m.sighting_id for m in matches if m.sighting_id is not None]
    text = f"{len(matches)} face(s). {matches[0].rule.sentence()}"
    if kept:
        text += (f"\nKept as sighting(s) {', '.join(map(str, kept))}: if one is wrong, `facerec sightings correct ID "
                 "NAME` or `facerec sightings reject ID`.")
    _emit(args, [m.to_dict() for m in matches], rows, ["face", "name", "similarity", "candidates", "box", "sighting"],
          text=text)
    return 0


def cmd_verify(args) -> int:
    with _gallery(args) as gallery:
        result = gallery.verify(args.photo_a, args.photo_b, face_a=args.face_a, face_b=args.face_b)
    verdict = "same person" if result.same_person else "different people"
    _emit(args, result.to_dict(),
          text=f"{verdict}: similarity {result.similarity:.3f} (threshold {result.threshold:.3f}). "
               f"{result.rule.sentence()}")
    return 0


def cmd_list(args) -> int:
    with _gallery(args) as gallery:
        people = gallery.list(args.search)
    _emit(args, [p.to_dict() for p in people], [[p.id, p.name, p.photos, p.created_at.strftime("%Y-%m-%d %H:%M")]
                                                 for p in people], ["id", "name", "photos", "enrolled"],
          text=f"{len(people)} people")
    return 0


def cmd_rename(args) -> int:
    with _gallery(args) as gallery:
        info = gallery.rename(args.name, args.new_name)
    _emit(args, info.to_dict(), text=f"renamed '{args.name}' to '{info.name}'")
    return 0


def cmd_delete(args) -> int:
    with _gallery(args) as gallery:
        info = gallery.delete(args.name)
    _emit(args, info.to_dict(), text=f"deleted '{info.name}' and {info.photos} photo(s)")
    return 0


def cmd_export(args) -> int:
    with _gallery(args) as gallery:
        count = gallery.export(args.path, include_crops=not args.no_crops)
    _emit(args, {"path": args.path, "faces": count}, text=f"exported {count} face(s) to {args.path}")
    return 0


def cmd_import(args) -> int:
    with _gallery(args) as gallery:
        counts = gallery.import_(args.path)
    _emit(args, counts, text=f"imported {counts['added']} face(s), skipped {counts['skipped']} already present")
    return 0


def cmd_stats(args) -> int:
    with _gallery(args) as gallery:
        stats = gallery.stats()
    rows = [[k, v] for k, v in stats.items() if k not in ("threshold_policy", "embedder")]
    embedder = stats["embedder"]
    rows.append(["embedder", f"{embedder['path']}: {embedder['reason']}"])
    _emit(args, stats, rows, ["key", "value"], text=stats["threshold_policy"]["sentence"])
    return 0


def cmd_health(args) -> int:
    with _gallery(args) as gallery:
        report = gallery.health().to_dict()
    rows = [["ClosestIsPositiveAccuracy", report["closest_is_positive_accuracy"],
             report["readings"]["closest_is_positive_accuracy"]]]
    rows += [[k, v, report["readings"][k]] for k, v in report["median_distances"].items()]
    text = (f"{report['identities']} people, {report['faces']} faces, threshold {report['threshold']}\n"
            f"{report['threshold_policy']['sentence']}\n"
            "as the gallery grows: " + ", ".join(f"{g['faces']:,} faces -> {g['threshold']:.3f}"
                                                  for g in report["policy_growth"][::6]))
    text += "".join(f"\n{note}" for note in report["notes"])
    text += _sightings_text(report["sightings"])
    if report["suspected_duplicates"]:
        text += "\nsuspected duplicates: " + "; ".join(
            f"{p['a']} ~ {p['b']} ({p['similarity']:.2f})" for p in report["suspected_duplicates"][:10])
    _emit(args, report, [[r[0], "undefined" if r[1] is None else r[1], r[2]] for r in rows],
          ["metric", "value", "reading"], text=text)
    return 0


_TREND_UNITS = {"day": "per day", "sightings": "per block of sightings"}


def _sightings_text(sightings: dict) -> str:
    """The health report's sightings part, for the terminal: what the figures rest on, the trend, weak enrollments."""
    if not sightings.get("enabled"):
        return f"\nsightings: none kept ({sightings.get('reason', 'off')})"
    if not sightings.get("sightings"):
        return f"\nsightings: none yet (memory of {sightings['capacity']:,})"
    sources = ", ".join(f"{count} {source}" for source, count in sorted(sightings["sources"].items()))
    text = (f"\nsightings: the figures above rest on {sightings['enrolled_faces']:,} enrolled faces and "
            f"{sightings['sightings']:,} sightings of {sightings['people_seen']:,} people ({sources}; memory of "
            f"{sightings['capacity']:,})\ntrend ({_TREND_UNITS.get(sightings['trend_unit'], '')}, "
            "MedianClosestPositiveDistance): " + ", ".join(
                f"{t['window']}: {t['MedianClosestPositiveDistance']}" for t in sightings["trend"])
            + f"\n{sightings['trend_reading']}")
    weak = sightings["weak_enrollments"]
    text += (f"\nweak enrollments ({len(weak)}): " + "; ".join(
        f"{w['name']} (median {w['median_similarity']:.3f} over {w['sightings']})" for w in weak[:20])
        if weak else "\nno weak enrollments: every person seen matches their enrollment well")
    return text


def _api_keys(gallery):
    from .api_keys import ApiKeys

    return ApiKeys(gallery.store)


def cmd_api_key_create(args) -> int:
    with _gallery(args) as gallery:
        record, key = _api_keys(gallery).create(args.role, args.name)
    _emit(args, {**record.to_dict(), "key": key},
          text=f"created API key {record.id} ({record.role}, '{record.name}'). It is shown only now; send it as "
               f"the X-API-Key header:\n{key}")
    return 0


def cmd_api_key_list(args) -> int:
    with _gallery(args) as gallery:
        records = _api_keys(gallery).list()
    rows = [[r.id, r.name, r.role, f"{r.shown}...", r.created_at.strftime("%Y-%m-%d %H:%M"),
             r.revoked_at.strftime("%Y-%m-%d %H:%M") if r.revoked_at else ""] for r in records]
    active = sum(r.active for r in records)
    _emit(args, [r.to_dict() for r in records], rows, ["id", "name", "role", "key", "created (UTC)", "revoked (UTC)"],
          text=f"{active} active key(s)" + ("" if active else "; the REST API is off until one is created"))
    return 0


def cmd_api_key_revoke(args) -> int:
    with _gallery(args) as gallery:
        record = _api_keys(gallery).revoke(args.id)
    _emit(args, record.to_dict(), text=f"API key {record.id} ('{record.name}') is revoked")
    return 0


def cmd_db(args) -> int:
    from .storage import upgrade
    from .storage.store import display_url

    url = _settings(args).resolved_database_url
    done = upgrade(url)
    _emit(args, {"database": display_url(url), "done": done},
          text=f"{display_url(url)}: " + ("; ".join(done) if done else "the schema is up to date"))
    return 0


def cmd_reindex(args) -> int:
    with _gallery(args) as gallery:
        count = gallery.reindex()
    _emit(args, {"reindexed": count}, text=f"re-embedded {count} face(s)")
    return 0


# ----- evaluation ------------------------------------------------------------------------------------------
def cmd_eval(args) -> int:
    from .evaluation.report import write_one_shot_report

    if args.existing:
        return _eval_existing(args)
    from .evaluation.oneshot import evaluate_one_shot, plan_protocol

    enrolled, queries, extra = plan_protocol(Path(args.data_dir), args.max_per_identity, args.distractors,
                                             args.seed)
    with _progress(len(enrolled) + len(extra) + len(queries), "embedding") as bar:
        result = evaluate_one_shot(args.data_dir, _settings(args), args.max_per_identity, args.distractors,
                                   args.open_set, args.seed, progress=bar.update, gallery_sizes=args.gallery_sizes)
    figures = result.figures
    if args.report:
        write_one_shot_report(result, args.report, "facerec " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    _warn(eval_warnings(figures))
    rows = [["identities", figures["n_identities"]], ["distractors", figures["n_distractors"]],
            ["queries", figures["n_queries"]], ["rank-1", f"{figures['rank1']:.4f}"],
            ["rank-5", f"{figures['rank5']:.4f}"],
            ["TAR@FAR=1e-3", f"{figures['tar_at_far']['1e-3']['tar']:.4f}"],
            ["TAR@FAR=1e-2", f"{figures['tar_at_far']['1e-2']['tar']:.4f}"],
            ["ClosestIsPositiveAccuracy", f"{figures['closest_is_positive_accuracy']:.4f}"],
            *[[k, f"{v:.4f}"] for k, v in figures["median_distances"].items()],
            ["detection failures", figures["detection_failures"]],
            ["photos/s", figures["photos_per_second"]]]
    text = ""
    if "open_set" in figures:
        for key in ("dir_at_fpir_0.01", "dir_at_fpir_0.1"):
            rows.append([key.replace("_", " ") + " (threshold chosen on the results)",
                         f"{figures['open_set'][key]['dir']:.4f}"])
        text = open_set_table(figures["open_set"])
    _emit(args, figures, rows, ["figure", "value"])
    if text and args.json != "-":
        print("\n" + text)
    return 0


def eval_warnings(figures: dict) -> list[str]:
    """What an evaluation's reader must know before trusting it: training people among the evaluated ones, open-set
    figures from too few searches (the same warnings the report's summary opens with)."""
    from .evaluation.report import report_warnings

    return report_warnings(figures)


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)


def open_set_table(open_set: dict) -> str:
    """The open-set figures at the threshold policy, one markdown row per gallery size (the README's table)."""
    from .evaluation.open_set import markdown_table

    return markdown_table(open_set)


def _eval_existing(args) -> int:
    from .evaluation.existing import evaluate_existing
    from .evaluation.report import write_json

    with _gallery(args) as gallery:
        figures = evaluate_existing(gallery, args.data_dir, progress_factory=_progress)
    _warn(eval_warnings(figures))
    if args.report:
        Path(args.report).mkdir(parents=True, exist_ok=True)
        write_json(figures, Path(args.report) / "eval.json")
    _emit(args, figures, [[k, v] for k, v in figures.items() if not isinstance(v, (dict, list))],
          ["figure", "value"])
    return 0


def cmd_eval_pairs(args) -> int:
    from .evaluation.pairs import evaluate_pairs, read_pairs
    from .evaluation.report import write_pairs_report
    from .pipeline import FacePipeline

    pairs, _ = read_pairs(args.pairs, args.data_dir)
    unique = len({p for a, b, _ in pairs for p in (a, b)})
    with _progress(unique, "embedding") as bar:
        result = evaluate_pairs(args.pairs, args.data_dir, FacePipeline(_settings(args)), progress=bar.update)
    if args.report:
        write_pairs_report(result, args.report, "facerec " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    figures = result.figures
    _warn(eval_warnings(figures))
    _emit(args, figures, [["accuracy", f"{figures['accuracy_mean']:.4f} +- {figures['accuracy_std']:.4f}"],
                          ["pairs", figures["pairs"]], ["detection failures", figures["detection_failures"]],
                          ["photos/s", figures["photos_per_second"]]], ["figure", "value"])
    return 0


def cmd_calibrate(args) -> int:
    from .calibrate_model import calibrate_model, held_out_photos, write_to_card

    settings = _settings(args)
    paths, _ = held_out_photos(args.data, args.identities)
    with _progress(len(paths), "embedding") as bar:
        calibration = calibrate_model(settings.model_path, args.data, flip_tta=settings.flip_tta,
                                      resamples=args.resamples, seed=args.seed, identities=args.identities,
                                      num_threads=settings.num_threads, progress=bar.update,
                                      embeddings_cache=args.embeddings)
    card_path = Path(args.card) if args.card else settings.model_card_path
    write_to_card(card_path, calibration)
    tail = calibration["tail"]
    rows = [[rate_text(r["far"]), f"{r['cosine']:.4f}",
             "–".join(f"{v:.4f}" for v in r.get("cosine_interval", [])),
             "" if r.get("cosine_empirical") is None else f"{r['cosine_empirical']:.4f}",
             r.get("tar", ""), r["from"]]
            for r in calibration["curve"] if _is_decade(r["far"])]
    _emit(args, calibration, rows, ["FAR", "cosine", f"{calibration['bootstrap']['interval']:.0%} interval",
                                    "empirical", "TAR", "from"],
          text=(f"calibrated {Path(settings.model_path).name} on {calibration['identities']} held-out identities "
                f"({calibration['photos']} photos, {calibration['impostor_pairs']:,} impostor pairs); tail above "
                f"{tail['threshold']:.4f} (top {rate_text(tail['rate'])}): generalized Pareto shape {tail['shape']:.3f} "
                f"({' to '.join(str(v) for v in tail.get('shape_interval', []))}), scale {tail['scale']:.4f}; "
                f"written to {card_path}"))
    return 0


def _is_decade(value: float) -> bool:
    exponent = math.log10(value)
    return abs(exponent - round(exponent)) < 1e-6


# ----- data and training -----------------------------------------------------------------------------------
def cmd_prepare(args) -> int:
    from .cache import prepare_cache, read_manifest
    from .detect import FaceDetector

    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = _progress(total, "aligning")
            bar.update(done - 1)
        bar.update(1)

    settings = _settings(args)
    summary = prepare_cache(args.data_dir, args.out, FaceDetector(settings.detector_score_threshold,
                                                                  settings.min_face_size, settings.detector_max_side),
                            progress=progress)
    if bar is not None:
        bar.close()
    data = {"photos": summary.photos, "detected": summary.detected, "fallbacks": summary.fallbacks,
            "unreadable": summary.unreadable, "mean_alignment_error_px": summary.mean_alignment_error,
            "seconds": summary.seconds, "identities": len({i for i, _ in read_manifest(args.out)})}
    _emit(args, data, text=(f"{summary.detected}/{summary.photos} photos with a detected face "
                            f"({summary.detected / max(1, summary.photos):.2%}); {len(summary.fallbacks)} centre-crop "
                            f"fallback(s): {', '.join(summary.fallbacks[:10])}; {len(summary.unreadable)} unreadable; "
                            f"mean landmark residual {summary.mean_alignment_error:.2f} px"))
    return 0


def cmd_train(args) -> int:
    try:
        from .train.data import load_sources
        from .train.loop import TrainConfig, train
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    faces = load_sources(args.celeba, args.lfw_cache, args.teacher)
    if args.train_fraction < 1:
        from .train.data import keep_identity_fraction
        keep_identity_fraction(faces, args.train_fraction)
    config = TrainConfig(head=args.head, stem=args.stem, epochs=args.epochs, batch_size=args.batch_size,
                         lr=args.lr, warmup_epochs=args.warmup_epochs, device=args.device, bf16=args.bf16, arcface_weight=args.arcface_weight,
                         distill_weight=args.distill_weight, structure_weight=args.structure_weight,
                         warm_start=args.warm_start,
                         max_seconds=args.max_seconds, stop_after_epoch=args.stop_after_epoch,
                         notes={"train_fraction": args.train_fraction} if args.train_fraction < 1 else {})
    record = train(config, faces, args.run_dir, log=lambda line: print(line, file=sys.stderr, flush=True))
    _emit(args, record, text=f"trained {record.get('epoch')} epochs; weights in {args.run_dir}")
    return 0


def cmd_teacher_targets(args) -> int:
    from .cache import load_cache
    from .train.data import lfw_training_rows
    from .train.teacher import compute_targets

    faces, names, paths = load_cache(args.cache)
    rows = lfw_training_rows(names) if args.training_only else list(range(len(paths)))
    bar = _progress(len(rows), "teacher")

    def progress(done: int, total: int) -> None:
        bar.update(done - bar.n)

    out = compute_targets(_Rows(faces, rows), [paths[r] for r in rows], args.out, mirror=not args.no_mirror,
                          workers=args.workers, progress=progress)
    bar.close()
    _emit(args, {"out": str(out), "rows": len(rows)}, text=f"teacher descriptors of {len(rows)} crops in {out}")
    return 0


class _Rows:
    """A lazy row selection of a (memmapped) array, sliced chunk by chunk."""

    def __init__(self, array, rows: list[int]) -> None:
        self.array, self.rows = array, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, item: slice):
        return self.array[self.rows[item]]


def cmd_quantize(args) -> int:
    try:
        from .train.quantize import calibration_crops, quantize_int8
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    out = quantize_int8(args.model, calibration_crops(args.celeba), args.out)
    _emit(args, {"out": str(out), "bytes": out.stat().st_size}, text=f"int8 model written to {out}")
    return 0


def cmd_center(args) -> int:
    try:
        from .train.centering import centered_copy, centering_crops
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    if not 0 < args.strength <= 1:
        raise FaceRecError(f"--strength must be in (0, 1]; got {args.strength}")
    out = centered_copy(args.model, args.out, centering_crops(args.celeba), args.strength)
    _emit(args, {"out": str(out), "strength": args.strength},
          text=f"centered model (strength {args.strength}) written to {out}")
    return 0


def cmd_similarity_map(args) -> int:
    try:
        from .train.similarity_map import fitting_photos, mapped_copy
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    if not 0 <= args.keep <= 1:
        raise FaceRecError(f"--keep must be in [0, 1]; got {args.keep}")
    for path, what in ((args.model, "model"), (args.teacher, "teacher file")):
        if not Path(path).is_file():
            raise FaceRecError(f"no such {what}: {path}")
    try:
        out = mapped_copy(args.model, args.out, fitting_photos(args.celeba), args.teacher, args.keep)
    except (ValueError, ImportError) as error:
        raise FaceRecError(str(error)) from None
    _emit(args, {"out": str(out), "keep": args.keep},
          text=f"model with a similarity map (keep {args.keep}) written to {out}")
    return 0


def cmd_average(args) -> int:
    try:
        from .train.averaging import average_onnx
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    missing = [model for model in args.models if not Path(model).is_file()]
    if missing:
        raise FaceRecError(f"no such model: {missing[0]}")
    try:
        out = average_onnx(args.models, args.out, args.weights)
    except (ValueError, ImportError) as error:  # ImportError: onnx, of the 'train' extra
        raise FaceRecError(str(error)) from None
    _emit(args, {"out": str(out), "models": args.models, "weights": args.weights},
          text=f"average of {len(args.models)} models written to {out}")
    return 0


def cmd_export_onnx(args) -> int:
    try:
        from .train.export import export_onnx, load_embedder, max_difference
    except ImportError as error:
        raise FaceRecError(str(error)) from None
    model = load_embedder(args.weights)
    digest = export_onnx(model, args.out)
    data = {"onnx": args.out, "sha256": digest}
    if args.check_cache:
        from .cache import load_cache

        faces, _, _ = load_cache(args.check_cache)
        data["max_abs_difference"] = max_difference(model, args.out, faces[:64])
        if data["max_abs_difference"] >= 1e-3:
            raise FaceRecError(f"ONNX and torch disagree by {data['max_abs_difference']:.2e} (limit 1e-3)")
    _emit(args, data, text=json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
