"""`facerec suggestions [list | faces ID DIR | name ID NAME | dismiss ID | clear]`: people seen again and again
but not enrolled (kept only with FACEREC_SUGGESTIONS=on).

A command has no request to keep answering, so `list`, `faces` and `name` first group the faces kept since the last
grouping on its own thread (the app does it on a background thread), outside any write transaction."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from facerec.cli.output import emit, open_gallery
from facerec.cli.registry import CommandAdder
from facerec.errors import InvalidArgument


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the `facerec` parser."""
    p = command("suggestions", cmd_suggestions, "people seen again and again but not enrolled (with "
                "FACEREC_SUGGESTIONS=on): list them, save their faces to look at, name one (enrolls them) or "
                "dismiss one (forgets their faces); `clear` forgets every kept unknown face")
    p.add_argument("action", nargs="?", default="list", choices=["list", "faces", "name", "dismiss", "clear"])
    p.add_argument("id", type=int, nargs="?", help="the suggestion's id (faces, name, dismiss)")
    p.add_argument("target", nargs="?", help="the folder to save the faces in (faces), or the person's name (name)")
    p.add_argument("--note", help="a note on the person enrolled (name)")
    p.add_argument("--offset", type=int, default=0, help="list from this position (0: the most often seen)")
    p.add_argument("--limit", type=int, help="list at most this many (a page of the gallery's size when unset)")


def cmd_suggestions(args) -> int:
    if args.action in ("faces", "name", "dismiss") and args.id is None:
        raise InvalidArgument(f"`facerec suggestions {args.action}` needs the suggestion's id (`facerec suggestions` "
                              "lists them)")
    if args.action in ("faces", "name") and not args.target:
        what = "a folder to save the faces in" if args.action == "faces" else "the person's name"
        raise InvalidArgument(f"`facerec suggestions {args.action} ID` needs {what}")
    with open_gallery(args) as gallery:
        if args.action in ("faces", "name"):
            gallery.services().suggestions.list(group_first=True)  # the suggestion asked for is in the next grouping
        if args.action == "list":
            size = {} if args.limit is None else {"limit": args.limit}
            page = gallery.services().suggestions.list(args.offset, **size, group_first=True)
            found = page.suggestions
            strangers = gallery.services().strangers
            note = "" if strangers.enabled or found else f"; {strangers.why_disabled()}"
            shown = (f", {page.offset + 1}-{page.offset + len(found)} shown (--offset, --limit for others)"
                     if len(found) < page.total else "")
            rows = [[s.id, s.faces, s.photos, s.first_seen.strftime("%Y-%m-%d %H:%M"),
                     s.last_seen.strftime("%Y-%m-%d %H:%M")] for s in found]
            emit(args, page.to_dict(), rows, ["id", "faces", "photos", "first seen", "last seen"],
                 text=f"{page.total} suggested people{shown}{note}")
        elif args.action == "faces":
            suggestion = gallery.services().suggestions.get(args.id)
            written = _save_faces(gallery.services().suggestions.crops(suggestion.face_ids), suggestion.face_ids,
                                  Path(args.target))
            emit(args, {"id": suggestion.id, "files": [str(p) for p in written]},
                 text=f"saved {len(written)} face(s) of suggestion {suggestion.id} in {args.target}")
        elif args.action == "name":
            named = gallery.services().suggestions.name(args.id, args.target, note=args.note)
            emit(args, named.to_dict(), text=f"enrolled '{named.name}' (identity {named.identity_id}) from "
                                             f"{len(named.face_ids)} photo(s) of suggestion {args.id}")
        elif args.action == "dismiss":
            count = gallery.services().suggestions.dismiss(args.id)
            emit(args, {"id": args.id, "forgotten": count},
                 text=f"suggestion {args.id} dismissed: its {count} face(s) forgotten")
        else:
            count = gallery.services().strangers.clear()
            emit(args, {"forgotten": count}, text=f"forgot {count} face(s) of people not enrolled")
    return 0


def _save_faces(crops: dict[int, bytes], order: list[int], folder: Path) -> list[Path]:
    """Each face as `face-<id>.jpg`, readable by its owner only (they are biometric data)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    written = []
    for face_id in order:
        if face_id not in crops:
            continue
        path = folder / f"face-{face_id}.jpg"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(crops[face_id])
        written.append(path)
    return written
