"""A grouped library run's groups (`OUT.groups.json`, written by `facerec identify DIR/ --group --out OUT`) as an
admin uses them from the CLI (`facerec library`), the REST API and the page: list the groups to show, look at a
group's faces, name one (enroll the person from its most typical faces), add one to an enrolled person, dismiss one.

The file holds each group's faces (file under the library's folder and box), most typical first; the enrolled
person it resembles when most of its faces are nearest to one (that person's missed photos: never shown as a new
person); the enrolled person its faces are most often nearest to (a hint); and whether it was named or dismissed.
Every change is a read, a change and a whole-file replace under an exclusive lock on `OUT.groups.lock`, so a library
run writing its groups and an admin naming one from the page never lose each other's change.

Naming a group enrolls the person from its most typical faces (the first as the enrollment, up to `NAMED_FACES` more
added, each checked as any enrollment is: quality, duplicate, look-alike), each face found again in its file by its
box; adding it to an enrolled person adds those photos. A photo is read only inside the library's folder and within
`facerec.library.files.MAX_PHOTO_BYTES`; a face is shown as a small crop of its photo, never the photo.
"""

from __future__ import annotations

import fcntl
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PIL import Image

from facerec.errors import FaceRecError, InvalidArgument, NameTaken, UnknownIdentity, UnknownLibraryGroup
from facerec.faces.boxes import overlap
from facerec.faces.image import decode_photo
from facerec.library.files import is_video, photo_bytes, replacing
from facerec.names import clean_name, name_key
from facerec.words.phrasing import one_line

STATE_VERSION = 1
KEEP_DAYS = 30  # an unknown face's embedding is kept this long by a grouped run, as the strangers memory keeps one
NAMED_FACES = 5  # faces added beyond the enrollment when a group is named or added
SHOWN_FACES = 12  # faces a group's pictures show (the most typical)
CROP_SIDE = 112  # pixels of a face's picture
WORKING_PIXELS = 4_000_000  # a library photo is decoded at most this large to cut a face's picture from it


class GroupsFile:
    """One grouped library run's groups, by its `--out` (the file is `OUT.groups.json`)."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.path = self.out.with_name(self.out.name + ".groups.json")

    def read(self) -> dict:
        """The whole state; an empty one before the first grouped run."""
        if not self.path.is_file():
            return {"version": STATE_VERSION, "faces": {}, "groups": {}}
        try:
            state = json.loads(self.path.read_text())
            if state.get("version") != STATE_VERSION or not isinstance(state.get("faces"), dict):
                raise ValueError
            return state
        except (ValueError, OSError):
            raise InvalidArgument(f"{self.path.name} is not a groups file this facerec wrote; move it away to group "
                                  "the library afresh") from None

    def save(self, state: dict) -> None:
        """Replace the file whole (owner-only); call under `locked`."""
        with replacing(self.path) as handle:
            json.dump(state, handle, indent=1, ensure_ascii=True)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run's groups for a read, change and save (another process waits)."""
        lock = self.path.with_suffix(".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        with open(lock, "a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def shown(self) -> list[tuple[int, dict]]:
        """The groups to show: not dismissed or named, not resembling an enrolled person, of faces in at least 2
        photos (one person is not twice in one photo), the largest first."""
        return open_groups(self.read()["groups"])

    def group(self, number: int) -> dict:
        """One group, whatever its state (UnknownLibraryGroup when the run has none by that number)."""
        return self._of(self.read(), number)

    def dismiss(self, number: int) -> None:
        """Hide the group from the outputs of later runs and from the page; its faces stay where they are."""
        with self.locked():
            state = self.read()
            self._of(state, number)["status"] = "dismissed"
            self.save(state)

    def take(self, gallery, number: int, name: str, new_person: bool) -> list[dict]:
        """Enroll `name` from the group's most typical faces (`new_person`), or add them to the enrolled `name`;
        one {"photo", "outcome"} per face tried. The group is marked named when a face was taken."""
        name = clean_name(name)
        state = self.read()
        group = self._of(state, number)
        enrolled = [p.name for p in gallery.people(name) if name_key(p.name) == name_key(name)]
        if new_person and enrolled:
            raise NameTaken(f"{enrolled[0]} is enrolled already: add the group to them instead", enrolled[0])
        if not new_person and not enrolled:
            raise UnknownIdentity(f"nobody named {name} is enrolled: name the group to enroll them")
        name = enrolled[0] if enrolled else name
        outcomes = _taken_faces(gallery, _folder(state), group, name, new_person)
        if any(o["outcome"] in ("enrolled", "added") for o in outcomes):
            with self.locked():
                state = self.read()
                group = self._of(state, number)
                group["status"], group["named"] = "named", name
                self.save(state)
        return outcomes

    def pictures(self, number: int, limit: int = SHOWN_FACES) -> list[tuple[dict, bytes | None]]:
        """The group's most typical faces, each with a small JPEG cut from its photo (None: a video's face, or a
        photo that is gone or changed)."""
        state = self.read()
        return [(face, _crop(_folder(state), face)) for face in self._of(state, number)["faces"][:limit]]

    def covers(self, numbers: list[int]) -> dict[int, bytes | None]:
        """The most typical face's picture of each group in `numbers` (a page of the list), the file read once."""
        state = self.read()
        return {number: _crop(_folder(state), self._of(state, number)["faces"][0]) for number in numbers}

    def _of(self, state: dict, number: int) -> dict:
        group = state["groups"].get(str(int(number)))
        if group is None:
            raise UnknownLibraryGroup(f"{self.path.name} has no group {number} (`facerec identify DIR/ --group "
                                      f"--out {self.out.name}` lists them)")
        return group


def _folder(state: dict) -> Path:
    """The library's folder, as the run that wrote `state` named it."""
    return Path(state.get("folder") or ".").resolve()


def open_groups(groups: dict) -> list[tuple[int, dict]]:
    """`GroupsFile.shown` for groups already read."""
    shown = [(int(g), group) for g, group in groups.items()
             if group["status"] == "open" and not group["resembles"] and group["photos"] >= 2]
    return sorted(shown, key=lambda item: (-len(item[1]["faces"]), item[0]))


def _inside(folder: Path, relative: str) -> Path:
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise InvalidArgument("outside the library's folder")
    return path


def _crop(folder: Path, face: dict) -> bytes | None:
    if is_video(face["photo"]):
        return None
    try:
        pixels, scale = decode_photo(photo_bytes(_inside(folder, face["photo"])), working_pixels=WORKING_PIXELS)
    except (FaceRecError, OSError):
        return None
    left, top, right, bottom = (value * scale for value in face["box"])
    margin = 0.2 * max(right - left, bottom - top)
    height, width = pixels.shape[:2]
    box = (max(0, int(left - margin)), max(0, int(top - margin)), min(width, int(right + margin)),
           min(height, int(bottom + margin)))
    if box[2] <= box[0] or box[3] <= box[1]:
        return None
    picture = Image.fromarray(pixels).crop(box)
    picture.thumbnail((CROP_SIDE, CROP_SIDE))
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


def _taken_faces(gallery, folder: Path, group: dict, name: str, new_person: bool) -> list[dict]:
    """Enroll `name` from the group's most typical faces (one a photo), or add them to `name`; a line per face."""
    outcomes, photos_used = [], set()
    for face in group["faces"]:
        if len([o for o in outcomes if o["outcome"] in ("enrolled", "added")]) > NAMED_FACES or \
                face["photo"] in photos_used:
            continue
        photos_used.add(face["photo"])
        if is_video(face["photo"]):
            continue  # a person is enrolled from photos
        try:
            photo, found = gallery.services().photos.detect(photo_bytes(_inside(folder, face["photo"])))
            index = max(range(len(found)), key=lambda i: overlap(tuple(found[i].box), tuple(face["box"])),
                        default=None)
            if index is None or overlap(tuple(found[index].box), tuple(face["box"])) < 0.5:
                raise InvalidArgument("the face is no longer where the library run found it")
            if new_person:
                gallery.enroll(photo, name, face_index=index)
                new_person = False
                outcomes.append({"photo": face["photo"], "outcome": "enrolled"})
            else:
                gallery.add_photo(name, photo, face_index=index)
                outcomes.append({"photo": face["photo"], "outcome": "added"})
        except (FaceRecError, OSError) as error:
            outcomes.append({"photo": face["photo"], "outcome": "refused: " + one_line(error)})
    return outcomes
