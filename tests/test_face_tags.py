"""Face tags in and out (#66 items 3-5): MWG face regions read from public-domain White House photos that carry them
(tests/tagged_photos, with their source), the people they name enrolled through the real gallery, and the names
facerec finds written into XMP sidecars, read back by Debian's `exiv2` as another program would."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

exifmwg = pytest.importorskip("exifmwg", reason="face tags need the 'tags' extra (in the dev extra)")

from facerec.faces.pipeline import FacePipeline  # noqa: E402
from facerec.formats.face_tags import (  # noqa: E402
    MAX_SIDECAR_BYTES,
    Region,
    face_in_region,
    named_faces,
    read_regions,
    sidecars,
    write_regions,
)
from facerec.gallery import Gallery  # noqa: E402
from facerec.settings import Settings  # noqa: E402

TAGGED = Path(__file__).parent / "tagged_photos"
REPO_ROOT = Path(__file__).resolve().parents[1]
NAMED = {"white_house_1.jpg": ["Barack Obama"], "white_house_2.jpg": ["Barack Obama"],
         "white_house_3.jpg": ["Barack Obama", "Denis McDonough", "Hillary Clinton", "Joseph R Biden"]}


def exiv2_regions(path: Path) -> list[tuple[str, str]]:
    """(name, type) of each MWG region in `path`, as Debian's exiv2 reads them."""
    exiv2 = shutil.which("exiv2")
    if exiv2 is None:
        if os.environ.get("CI") == "true":
            pytest.fail("exiv2 is missing (.ci/run installs Debian's exiv2)")
        pytest.skip("Debian's exiv2 is not installed")
    printed = subprocess.run([exiv2, "-px", str(path)], capture_output=True, text=True, timeout=60).stdout
    values: dict[str, dict[str, str]] = {}
    for line in printed.splitlines():
        key, *rest = line.split(None, 3)
        if key.startswith("Xmp.mwg-rs.Regions/mwg-rs:RegionList[") and key.endswith(("mwg-rs:Name", "mwg-rs:Type")):
            item = key.split("[", 1)[1].split("]", 1)[0]
            values.setdefault(item, {})[key.rsplit(":", 1)[1]] = rest[2] if len(rest) > 2 else ""
    return [(v.get("Name", ""), v.get("Type", "")) for _, v in sorted(values.items(), key=lambda kv: int(kv[0]))]


def facerec(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def library(tmp_path) -> Path:
    folder = tmp_path / "library"
    folder.mkdir()
    for name in NAMED:
        shutil.copy(TAGGED / name, folder / name)
    return folder


def test_every_named_face_region_of_the_samples_is_a_face_facerec_detects() -> None:
    pipeline = FacePipeline(Settings())
    for name, people in NAMED.items():
        regions = named_faces(TAGGED / name)
        assert [r.name for r in regions] == people
        photo = pipeline.read(TAGGED / name)
        height, width = photo.shape[:2]
        boxes = [face.box for face in pipeline.detect(photo)]
        chosen = [face_in_region(region, boxes, width, height) for region in regions]
        assert None not in chosen and len(set(chosen)) == len(chosen), (name, chosen)
    assert ("Bo", "Pet") in [(r.name, r.kind) for r in read_regions(TAGGED / "white_house_1.jpg")]


def test_tags_enroll_enrolls_each_person_once_adds_their_other_photos_and_changes_nothing_run_again(
        library, tmp_path) -> None:
    home = tmp_path / "home"
    done = facerec("tags", "enroll", str(library), "--allow-low-quality", "--json", home=home)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["enrolled"], answer["added"], answer["refused"]) == (4, 2, 0), answer
    with Gallery.open(home=home) as gallery:
        people = {person.name: person.photos for person in gallery.people()}
    assert people == {"Barack Obama": 3, "Denis McDonough": 1, "Hillary Clinton": 1, "Joseph R Biden": 1}
    again = json.loads(facerec("tags", "enroll", str(library), "--allow-low-quality", "--json", home=home).stdout)
    assert (again["enrolled"], again["added"], again["refused"]) == (0, 0, 6)
    assert all("already" in row["outcome"] or "duplicate" in row["outcome"] for row in again["regions"]), again
    with Gallery.open(home=home) as gallery:
        assert {person.name: person.photos for person in gallery.people()} == people


def test_tags_enroll_checks_each_face_as_an_enrollment_and_says_per_region_why_not(library, tmp_path) -> None:
    """Without --allow-low-quality the small faces of group photos are refused as poor enrollment photos; a
    region over no face, and one on an untagged face whose name hides a right-to-left override, are one line
    each; nothing refused is kept."""
    photo = library / "white_house_3.jpg"
    height, width = Image.open(photo).size[::-1]
    write_regions(photo, [Region((0.9, 0.02, 0.98, 0.1), "Nobody Here"),
                          Region((0.715, 0.12, 0.768, 0.224), "Eve\u202eevE")], width, height)
    home = tmp_path / "home"
    done = facerec("tags", "enroll", str(library), "--json", home=home)
    assert done.returncode == 0, done.stderr
    outcomes = {(row["photo"], row["name"]): row["outcome"] for row in json.loads(done.stdout)["regions"]}
    assert outcomes[("white_house_3.jpg", "Nobody Here")] == "refused: no face found inside the region"
    assert "invisible formatting character" in outcomes[("white_house_3.jpg", "Eve\u202eevE")]
    assert any("poor enrollment photo" in outcome for outcome in outcomes.values()), outcomes
    assert all("\n" not in outcome for outcome in outcomes.values())
    enrolled = {name for (_photo, name), outcome in outcomes.items() if outcome == "enrolled"}
    with Gallery.open(home=home) as gallery:
        assert {person.name for person in gallery.people()} == enrolled


@pytest.fixture
def obama_and_biden(tmp_path, portrait) -> Path:
    home = tmp_path / "home"
    with Gallery.open(home=home) as gallery:
        gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
        gallery.enroll(portrait("Joe_Biden", 1), "Joe Biden", allow_low_quality=True)
    return home


def test_tags_write_puts_the_enrolled_people_in_a_new_sidecar_exiv2_reads_and_leaves_the_photo(
        obama_and_biden, portrait, tmp_path) -> None:
    folder = tmp_path / "untagged"
    folder.mkdir()
    shutil.copy(portrait("Barack_Obama", 2), folder / "obama.jpg")
    shutil.copy(portrait("Grace_Hopper", 1), folder / "stranger.jpg")
    before = {path.name: digest(path) for path in folder.iterdir()}
    done = facerec("tags", "write", str(folder), "--fpir", "0.001", "--json", home=obama_and_biden)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == 1
    assert exiv2_regions(folder / "obama.jpg.xmp") == [("Barack Obama", "Face")]
    assert not (folder / "stranger.jpg.xmp").exists()  # a stranger gets no tag
    assert {path.name: digest(path) for path in folder.glob("*.jpg")} == before  # the originals untouched
    (region,) = named_faces(folder / "obama.jpg")
    pipeline = FacePipeline(Settings())
    photo = pipeline.read(folder / "obama.jpg")
    height, width = photo.shape[:2]
    assert face_in_region(region, [face.box for face in pipeline.detect(photo)], width, height) is not None


def test_tags_write_keeps_every_region_and_name_already_in_a_sidecar(obama_and_biden, library) -> None:
    """A sidecar a manager wrote: the photo's regions, Barack Obama's renamed by its user, Biden's removed, a
    region of another type added, and a title. facerec adds Biden under its own name and changes nothing else."""
    photo = library / "white_house_3.jpg"
    sidecar = sidecars(photo)[0]
    shutil.copy(photo, sidecar.with_suffix(".tmp.jpg"))
    managed = exifmwg.ImageMetadata(sidecar.with_suffix(".tmp.jpg"))
    regions = [r for r in managed.region_info.region_list if r.name != "Joseph R Biden"]
    obama = next(r for r in regions if r.name == "Barack Obama")
    regions[regions.index(obama)] = exifmwg.Region(obama.area, "POTUS 44", "Face", None)
    regions.append(exifmwg.Region(exifmwg.XmpArea(0.1, 0.1, 0.5, 0.9, "normalized"), "the table", "Focus", None))
    sidecar.write_text('<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
                       '<x:xmpmeta xmlns:x="adobe:ns:meta/"/>\n<?xpacket end="w"?>\n', encoding="utf-8")
    written = exifmwg.ImageMetadata(sidecar)
    written.region_info = exifmwg.RegionInfo(managed.region_info.applied_to_dimensions, regions)
    written.title = "The Situation Room"
    written.save()
    done = facerec("tags", "write", str(photo), "--fpir", "0.001", "--json", home=obama_and_biden)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["rows"]
    assert row["added"] == "Joe Biden" and "POTUS 44 kept (facerec: Barack Obama)" in row["note"], row
    assert exiv2_regions(sidecar) == [("POTUS 44", "Face"), ("Denis McDonough", "Face"), ("Hillary Clinton", "Face"),
                                      ("the table", "Focus"), ("Joe Biden", "Face")]
    assert exifmwg.ImageMetadata(sidecar).title == "The Situation Room"
    assert digest(photo) == digest(TAGGED / "white_house_3.jpg")


def test_tags_write_into_photos_writes_the_photo_and_keeps_its_pixels(obama_and_biden, portrait, tmp_path) -> None:
    photo = tmp_path / "obama.jpg"
    shutil.copy(portrait("Barack_Obama", 2), photo)
    pixels = np.asarray(Image.open(photo))
    done = facerec("tags", "write", str(photo), "--into-photos", "--fpir", "0.001", home=obama_and_biden)
    assert done.returncode == 0, done.stderr
    assert not any(path.exists() for path in sidecars(photo))
    assert exiv2_regions(photo) == [("Barack Obama", "Face")]
    np.testing.assert_array_equal(np.asarray(Image.open(photo)), pixels)


def test_a_broken_or_huge_sidecar_is_one_line_and_nothing_changes(obama_and_biden, portrait, tmp_path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    shutil.copy(portrait("Barack_Obama", 2), folder / "a.jpg")
    shutil.copy(portrait("Barack_Obama", 3), folder / "b.jpg")
    (folder / "a.jpg.xmp").write_bytes(b"<x:xmpmeta \x00\xff not xml at all")
    with open(folder / "b.jpg.xmp", "wb") as handle:
        handle.truncate(MAX_SIDECAR_BYTES + 1)
    before = {path.name: digest(path) for path in folder.iterdir()}
    for action in ("read", "write"):
        done = facerec("tags", action, str(folder), "--json", home=obama_and_biden)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        problems = json.dumps(json.loads(done.stdout))
        assert "a.jpg.xmp" in problems and "cannot be read" in problems, problems
        assert "b.jpg.xmp" in problems and "over the" in problems, problems
    assert {path.name: digest(path) for path in folder.iterdir()} == before


def test_a_sidecar_without_regions_gains_the_photos_own_beside_facerecs(library) -> None:
    """A sidecar a manager wrote with a title only: the photo's four named regions would be hidden from a manager
    that prefers the sidecar, so writing a face there copies them in first."""
    photo = library / "white_house_3.jpg"
    sidecar = sidecars(photo)[0]
    sidecar.write_text('<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
                       '<x:xmpmeta xmlns:x="adobe:ns:meta/"/>\n<?xpacket end="w"?>\n', encoding="utf-8")
    titled = exifmwg.ImageMetadata(sidecar)
    titled.title = "The Situation Room"
    titled.save()
    height, width = Image.open(photo).size[::-1]
    report = write_regions(photo, [Region((0.715, 0.12, 0.768, 0.224), "Someone Else")], width, height)
    assert report.added == ["Someone Else"]
    assert [name for name, _kind in exiv2_regions(sidecar)] == NAMED["white_house_3.jpg"] + ["Someone Else"]
    assert exifmwg.ImageMetadata(sidecar).title == "The Situation Room"


def test_without_the_tags_extra_the_command_says_so_once_and_fails(tmp_path) -> None:
    """Found following the README's first command (no extras): the hint was printed on every photo's row, exit 0."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "exifmwg.py").write_text("raise ImportError('not installed')\n")  # as if the extra were missing
    done = subprocess.run([sys.executable, "-m", "facerec.cli", "tags", "read", str(TAGGED), "--home",
                           str(tmp_path / "home")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": f"{blocked}{os.pathsep}{REPO_ROOT}"})
    assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == ["error: face tags need the 'tags' extra: pip install 'facerec[tags]'."]
