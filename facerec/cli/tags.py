"""`facerec tags read | enroll | write PATH`: face tags (MWG regions in XMP) in and out of a photo library.

- `read`: the named regions of a photo, or of every photo under a folder (its sidecar's, else its own).
- `enroll`: every named face region becomes an enrollment, as if its face had been enrolled by hand: the face
  facerec detects inside the region (`facerec.formats.face_tags.face_in_region`), checked as any enrollment is
  (quality, duplicate photo, look-alike); a name seen again adds the photo to that person. One line per region:
  enrolled, added, or why not (no face inside the region, two regions on one face, the check that refused it).
- `write`: every photo identified (nothing remembered); the enrolled people found are written as face regions into
  the photo's sidecar (`photo.jpg.xmp`), or into the photo itself with `--into-photos`, beside the regions already
  there (`facerec.formats.face_tags.write_regions`: nothing there is lost or renamed). Never a stranger: a face
  nobody enrolled matches gets no region.

The folder is walked as `facerec identify DIR/` walks it (photos by name, links only inside the folder, each file
read within its bound before it is decoded), in path order; a file that cannot be used is one line and the walk
goes on.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from facerec.library.files import PHOTO_SUFFIXES, library_files, photo_bytes
from facerec.cli.output import emit, open_gallery, progress_bar
from facerec.cli.registry import CommandAdder
from facerec.errors import FaceRecError, InvalidArgument, NameTaken
from facerec.formats.face_tags import (
    FACE,
    Region,
    face_in_region,
    named_faces,
    read_regions,
    require_library,
    write_regions,
)
from facerec.words.phrasing import one_line


def register(command: CommandAdder, sub, common: argparse.ArgumentParser) -> None:
    """Add this group's commands to the `facerec` parser."""
    p = command("tags", cmd_tags, "face tags as photo managers keep them (MWG regions in XMP): read them, enroll "
                "the people they name, or write the enrolled people facerec finds into XMP sidecars")
    p.add_argument("action", choices=["read", "enroll", "write"])
    p.add_argument("path", help="a photo, or a folder of photos (subfolders included)")
    p.add_argument("--into-photos", action="store_true",
                   help="write: into the photos themselves instead of their sidecars (photo.jpg.xmp)")
    p.add_argument("--allow-lookalike", action="store_true",
                   help="enroll: even when a face resembles someone already enrolled")
    p.add_argument("--allow-low-quality", action="store_true", help="enroll: even from a poor photo of the face")


def cmd_tags(args) -> int:
    require_library()
    photos = _photos(Path(args.path))
    if args.action == "read":
        return _read(args, photos)
    with open_gallery(args) as gallery:
        return _enroll(args, gallery, photos) if args.action == "enroll" else _write(args, gallery, photos)


def _photos(path: Path) -> list[tuple[Path, str]]:
    """(file, its name as said) for the photo or every photo under the folder."""
    if path.is_file():
        return [(path, path.name)]
    if not path.is_dir():
        raise InvalidArgument(f"{path} is neither a photo nor a folder")
    found = [file for file in library_files(path, set()) if file.suffix.lower() in PHOTO_SUFFIXES]
    if not found:
        raise InvalidArgument(f"no photos (JPEG, PNG, WebP or BMP files) under {path}")
    return [(file, str(file.relative_to(path))) for file in sorted(found)]


def _read(args, photos: list[tuple[Path, str]]) -> int:
    rows, data = [], []
    for path, shown in photos:
        try:
            regions = read_regions(path)
        except (FaceRecError, OSError) as error:
            rows.append([shown, "", "", "", one_line(error)])
            data.append({"photo": shown, "regions": [], "problem": one_line(error)})
            continue
        for region in regions:
            rows.append([shown, region.name, region.kind, " ".join(f"{v:.3f}" for v in region.box), ""])
        data.append({"photo": shown, "regions": [{"name": r.name, "type": r.kind, "box": list(r.box),
                                                  "description": r.description} for r in regions], "problem": None})
    named = sum(1 for entry in data for r in entry["regions"] if r["name"] and r["type"] == FACE)
    emit(args, {"photos": data}, rows, ["photo", "name", "type", "box (fractions)", "problem"],
         text=f"{len(photos)} photo(s), {named} named face region(s)")
    return 0


def _enroll(args, gallery, photos: list[tuple[Path, str]]) -> int:
    known = {person.name.casefold() for person in gallery.people()}
    rows, counts = [], {"enrolled": 0, "added": 0, "refused": 0}
    with progress_bar(len(photos), "enrolling from tags") as bar:
        for path, shown in photos:
            for region, outcome in _enrolled_regions(args, gallery, path, known):
                kind = outcome.split(":")[0]
                counts[kind if kind in counts else "refused"] += 1
                rows.append([shown, region.name if region else "", outcome])
            bar.update(1)
    emit(args, {**counts, "regions": [{"photo": r[0], "name": r[1], "outcome": r[2]} for r in rows]}, rows,
         ["photo", "name", "outcome"],
         text=f"{counts['enrolled']} enrolled, {counts['added']} photo(s) added to people already enrolled, "
              f"{counts['refused']} region(s) not used, from {len(photos)} photo(s)")
    return 0


def _enrolled_regions(args, gallery, path: Path, known: set[str]) -> list[tuple[Region | None, str]]:
    """Each named face region of one photo, with what enrolling it did."""
    try:
        regions = named_faces(path)
        if not regions:
            return []
        photo, faces = gallery.services().photos.detect(photo_bytes(path))
    except (FaceRecError, OSError) as error:
        return [(None, f"not read: {one_line(error)}")]
    height, width = photo.shape[:2]
    chosen = {id(region): face_in_region(region, [face.box for face in faces], width, height) for region in regions}
    taken = [index for index in chosen.values() if index is not None]
    outcomes = []
    for region in regions:
        index = chosen[id(region)]
        if index is None:
            outcomes.append((region, "refused: no face found inside the region"))
        elif taken.count(index) > 1:
            outcomes.append((region, "refused: another region of this photo holds the same face"))
        else:
            outcomes.append((region, _enrolled(args, gallery, photo, index, region.name, known)))
    return outcomes


def _enrolled(args, gallery, photo, index: int, name: str, known: set[str]) -> str:
    try:
        if name.casefold() not in known:
            try:
                gallery.enroll(photo, name, face_index=index, allow_lookalike=args.allow_lookalike,
                               allow_low_quality=args.allow_low_quality)
                known.add(name.casefold())
                return "enrolled"
            except NameTaken:
                known.add(name.casefold())
        gallery.add_photo(name, photo, face_index=index, allow_low_quality=args.allow_low_quality)
        return "added"
    except FaceRecError as error:
        return f"refused: {one_line(error)}"


def _write(args, gallery, photos: list[tuple[Path, str]]) -> int:
    rows, written = [], 0
    with progress_bar(len(photos), "writing tags") as bar:
        for path, shown in photos:
            try:
                photo = gallery.services().photos.read(photo_bytes(path))
                height, width = photo.shape[:2]
                faces = [Region((m.face.box[0] / width, m.face.box[1] / height, m.face.box[2] / width,
                                 m.face.box[3] / height), m.name, FACE, "found by facerec")
                         for m in gallery.identify(photo, remember=False) if m.name is not None]
                report = write_regions(path, faces, width, height, into_photo=args.into_photos) if faces else None
            except (FaceRecError, OSError) as error:
                rows.append([shown, "", "", one_line(error)])
                bar.update(1)
                continue
            if report is not None:
                written += bool(report.added)
                kept = "; ".join(f"{theirs or 'an unnamed region'} kept (facerec: {ours})"
                                 for theirs, ours in report.kept_as_they_were)
                rows.append([shown, ", ".join(report.added), report.target.name, kept])
            bar.update(1)
    emit(args, {"photos": len(photos), "written": written,
                "rows": [{"photo": r[0], "added": r[1], "file": r[2], "note": r[3]} for r in rows]},
         rows, ["photo", "names added", "written to", "note"],
         text=f"{written} of {len(photos)} photo(s) got new face tags")
    return 0
