"""Face tags as photo managers keep them: MWG face regions (XMP `mwg-rs:Regions`), in a photo or in its sidecar.

digiKam, Lightroom, Picasa, Immich and PhotoPrism read and write the Metadata Working Group's regions: a list of
areas of the photo, each with a type (`Face`, `Pet`, ...), a name and a box given as its centre and size in
fractions of the photo (`stArea:x/y/w/h`, unit `normalized`), relative to the photo as it is shown (facerec
decodes photos with their EXIF orientation applied, so a box read here lands on the face facerec sees).

Read and written through `exifmwg` (MPL-2.0; PyPI, Exiv2 bundled): a maintained, typed library made for exactly
these structures, by the author of the test photos' repository, instead of XMP written by hand. What is read is
bounded before Exiv2 parses it: the photo at `MAX_PHOTO_BYTES`, a sidecar at `MAX_SIDECAR_BYTES`, at most
`MAX_REGIONS` regions a photo.

Sidecars: `photo.jpg.xmp` (digiKam, darktable, Immich) is written; `photo.jpg.xmp` and `photo.xmp` (Lightroom)
are both read. Writing never loses a region already there: facerec's are added beside them, a face that already
has a region is left as it is (a name a person gave is never replaced), and a new sidecar starts from the regions
the photo itself carries, so a manager that prefers the sidecar still shows them. The original photo is written
only when asked (`into_photo`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from facerec.errors import InvalidArgument
from facerec.faces.boxes import overlap
from facerec.words.phrasing import one_line

MAX_PHOTO_BYTES = 64 << 20  # as `facerec identify DIR/` reads a library's photos
MAX_SIDECAR_BYTES = 4 << 20  # an XMP sidecar of a photo is a few kB; this is far above any real one
MAX_REGIONS = 200  # a photo's regions read or kept; a group photo of a school year fits
EMPTY_PACKET = ('<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
                '<x:xmpmeta xmlns:x="adobe:ns:meta/"/>\n<?xpacket end="w"?>\n')  # the XMP standard's empty packet
INSTALL_HINT = "face tags need the 'tags' extra: pip install 'facerec[tags]'"
FACE = "Face"


@dataclass(frozen=True)
class Region:
    """One MWG region: `box` (left, top, right, bottom) in fractions of the photo as shown, its `name` ("" when
    none), its `kind` (MWG's Type: Face, Pet, Focus, BarCode) and `description`."""

    box: tuple[float, float, float, float]
    name: str = ""
    kind: str = FACE
    description: str | None = None

    def pixels(self, width: int, height: int) -> tuple[float, float, float, float]:
        left, top, right, bottom = self.box
        return left * width, top * height, right * width, bottom * height


@dataclass(frozen=True)
class WriteReport:
    """What writing tags to one photo did: where, the names added, and the faces left as they were because a
    region already held them (its name, if any, and facerec's)."""

    target: Path
    added: list[str]
    kept_as_they_were: list[tuple[str, str]]


def require_library() -> None:
    """InvalidArgument (one line, how to install it) when the `tags` extra is missing: said once, before a walk."""
    _library()


def _library():
    try:
        import exifmwg
    except ImportError:
        raise InvalidArgument(INSTALL_HINT) from None
    return exifmwg


def sidecars(photo: Path) -> list[Path]:
    """The sidecars a photo may have, the one facerec writes first."""
    return [photo.with_name(photo.name + ".xmp"), photo.with_suffix(".xmp")]


def _bounded(path: Path, limit: int) -> Path:
    size = os.stat(path).st_size
    if size > limit:
        raise InvalidArgument(f"{path.name} is {size:,} bytes, over the {limit:,} face tags are read from")
    return path


def _metadata(path: Path, limit: int):
    exifmwg = _library()
    try:
        return exifmwg.ImageMetadata(_bounded(path, limit))
    except exifmwg.ExifMwgBaseError as error:
        raise InvalidArgument(f"the face tags of {path.name} cannot be read ({one_line(error, 160)})") \
            from None


def _regions_of(metadata) -> list[Region]:
    info = metadata.region_info
    if info is None:
        return []
    regions = []
    for region in list(info.region_list)[:MAX_REGIONS]:
        area = region.area
        if (area.unit or "normalized") != "normalized" or area.w is None or area.h is None:
            continue  # MWG allows only normalized areas for regions; anything else is not a box we can place
        x, y, w, h = float(area.x), float(area.y), float(area.w), float(area.h)
        if not all(0.0 <= v <= 1.0 for v in (x, y, w, h)) or w <= 0 or h <= 0:
            continue
        regions.append(Region((max(0.0, x - w / 2), max(0.0, y - h / 2), min(1.0, x + w / 2), min(1.0, y + h / 2)),
                              (region.name or "").strip(), region.type or "", region.description))
    return regions


def read_regions(photo: Path) -> list[Region]:
    """Every region of `photo`: its sidecar's where it has one (a manager writes its edits there), else the
    photo's own. InvalidArgument (one line) when a file is too large or cannot be parsed."""
    for sidecar in sidecars(photo):
        if sidecar.is_file():
            found = _regions_of(_metadata(sidecar, MAX_SIDECAR_BYTES))
            if found:
                return found
    return _regions_of(_metadata(photo, MAX_PHOTO_BYTES))


def named_faces(photo: Path) -> list[Region]:
    """The regions of `photo` that are faces with a name."""
    return [region for region in read_regions(photo) if region.kind == FACE and region.name]


def face_in_region(region: Region, boxes: list[tuple[float, float, float, float]], width: int, height: int,
                   least: float = 0.3) -> int | None:
    """The index of the detected face box (pixels) that is the region's face: the one overlapping it most, at
    least `least` (tag tools draw looser boxes than a detector, so not more), and whose centre lies inside it.
    None: no detected face is the region's."""
    target = region.pixels(width, height)
    best, best_overlap = None, least
    for index, box in enumerate(boxes):
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        inside = target[0] <= centre[0] <= target[2] and target[1] <= centre[1] <= target[3]
        share = overlap(target, tuple(box))
        if inside and share >= best_overlap:
            best, best_overlap = index, share
    return best


def write_regions(photo: Path, faces: list[Region], width: int, height: int, into_photo: bool = False) -> WriteReport:
    """Add `faces` (named face regions) to `photo`'s tags: into its sidecar (made when missing; one without regions
    starts from the photo's own) or, with `into_photo`, into the photo itself. Every region already there is written back
    as Exiv2 read it, whatever it holds; a face that overlaps a face region already there (intersection over union
    0.3 or more) is left to that region. `width` and `height`: the photo as shown, recorded as MWG's
    AppliedToDimensions when the file had none."""
    exifmwg = _library()
    target = photo if into_photo else sidecars(photo)[0]
    source = None
    if not into_photo and not target.exists():
        target.write_text(EMPTY_PACKET, encoding="utf-8")
    metadata = _metadata(target, MAX_SIDECAR_BYTES if target != photo else MAX_PHOTO_BYTES)
    if target != photo and metadata.region_info is None:
        source = _metadata(photo, MAX_PHOTO_BYTES)  # a sidecar without regions starts from the photo's own
    holder = source if source is not None else metadata
    info = holder.region_info
    kept_regions = list(info.region_list) if info is not None else []
    placed = _regions_of(holder)
    added, kept = [], []
    for face in faces:
        there = next((r for r in placed if r.kind == FACE and overlap(r.box, face.box) >= 0.3), None)
        if there is not None:
            kept.append((there.name, face.name))
            continue
        if len(kept_regions) >= MAX_REGIONS:
            break
        kept_regions.append(_as_mwg(exifmwg, face))
        placed.append(face)
        added.append(face.name)
    if added or source is not None:
        dimensions = info.applied_to_dimensions if info is not None and info.applied_to_dimensions is not None \
            else exifmwg.Dimensions(float(height), float(width), "pixel")
        metadata.region_info = exifmwg.RegionInfo(dimensions, kept_regions)
        try:
            metadata.save()
        except exifmwg.ExifMwgBaseError as error:
            raise InvalidArgument(f"the face tags of {target.name} cannot be written "
                                  f"({one_line(error, 160)})") from None
    return WriteReport(target, added, kept)


def _as_mwg(exifmwg, region: Region):
    left, top, right, bottom = region.box
    area = exifmwg.XmpArea(bottom - top, right - left, (left + right) / 2, (top + bottom) / 2, "normalized")
    return exifmwg.Region(area, region.name, region.kind or FACE, region.description)
