"""`facerec identify DIR/` (#41 item 5): a folder of photos at once, in a subprocess as a user runs it.

Who is in which photo (CSV and JSON, owner-only), subfolders included, a file that is no photo reported in one line
without stopping the walk, a photo with no face said so, and a second run that only identifies what is new or
changed. A name that starts like a spreadsheet formula is written as text."""

from __future__ import annotations

import csv
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ALAN, BILJANA, STRANGER = "Andre_Agassi", "Biljana_Plavsic", "Andy_Griggs"


def facerec(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)],
                          capture_output=True, text=True, timeout=600)


def test_a_folder_of_photos_at_once_and_resumed(tmp_path, lfw_photo):
    home = tmp_path / "home"
    assert facerec("enroll", str(lfw_photo(ALAN, 1)), "--name", "Andre Agassi", home=home).returncode == 0
    formula = "=HYPERLINK(1)"
    assert facerec("enroll", str(lfw_photo(BILJANA, 1)), "--name", formula, "--allow-low-quality", "--force",
                   home=home).returncode == 0
    library = tmp_path / "library"
    (library / "2024" / "party").mkdir(parents=True)
    shutil.copy(lfw_photo(ALAN, 2), library / "alan.jpg")
    shutil.copy(lfw_photo(BILJANA, 2), library / "2024" / "biljana.jpg")
    shutil.copy(lfw_photo(STRANGER, 1), library / "2024" / "party" / "stranger.JPG")
    (library / "notes.jpg").write_text("not a photo")
    (library / "readme.txt").write_text("not even named like a photo")
    out = tmp_path / "answers" / "who"

    first = facerec("identify", str(library), "--out", str(out), "--workers", "2", "--json", home=home)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["photos"] == 4 and summary["resumed"] == 0 and len(summary["problems"]) == 1
    assert summary["problems"][0]["photo"] == "notes.jpg" and "\n" not in summary["problems"][0]["problem"]
    with open(f"{out}.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_photo = {row["photo"]: row for row in rows}
    assert by_photo["alan.jpg"]["name"] == "Andre Agassi"
    assert by_photo[str(Path("2024") / "biljana.jpg")]["name"] == "'" + formula  # text, never a formula
    assert by_photo[str(Path("2024") / "party" / "stranger.JPG")]["name"] == "unknown"
    assert by_photo["notes.jpg"]["name"] == "" and by_photo["notes.jpg"]["problem"]
    answers = json.loads(Path(f"{out}.json").read_text())["photos"]
    assert [entry["photo"] for entry in answers] == sorted(entry["photo"] for entry in answers)
    assert next(e for e in answers if e["photo"] == "alan.jpg")["faces"][0]["name"] == "Andre Agassi"
    # the score that decided is written beside the similarity, in both files: a named face never shows a lower
    # number than an unknown one
    faces = [face for entry in answers for face in entry["faces"]]
    named = [face["score"] for face in faces if face["known"]]
    unknown = [face["score"] for face in faces if not face["known"]]
    assert named and unknown and min(named) > max(unknown)
    assert by_photo["alan.jpg"]["score"] and float(by_photo["alan.jpg"]["score"]) == pytest.approx(
        next(e for e in answers if e["photo"] == "alan.jpg")["faces"][0]["score"], abs=1e-3)
    for written in (f"{out}.csv", f"{out}.json", f"{out}.progress.jsonl"):
        assert stat.S_IMODE(Path(written).stat().st_mode) == 0o600, written

    shutil.copy(lfw_photo(ALAN, 3), library / "alan_again.jpg")  # new since the first run
    (library / "notes.jpg").write_bytes(lfw_photo(BILJANA, 3).read_bytes())  # changed: a photo now
    again = facerec("identify", str(library), "--out", str(out), "--json", home=home)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["photos"] == 5 and summary["resumed"] == 3 and summary["problems"] == []
    with open(f"{out}.csv", newline="") as handle:
        names = {row["photo"]: row["name"] for row in csv.DictReader(handle)}
    assert names["alan_again.jpg"] == "Andre Agassi" and names["notes.jpg"] == "'" + formula


def test_an_empty_folder_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    done = facerec("identify", str(tmp_path / "empty"), home=tmp_path / "home")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1 and "no photos" in done.stderr


def _limited(*args: str, home: Path, memory_bytes: int) -> subprocess.CompletedProcess:
    """`facerec` in a process whose address space is capped: a file read whole past the cap fails it."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)], capture_output=True,
                          text=True, timeout=600, preexec_fn=cap)


def test_a_library_is_read_within_bounds_and_within_its_folder(tmp_path, lfw_photo):
    """#48 row 9: a 4 GB sparse `big.jpg` is refused by its size without being read (the run fits in an address
    space smaller than the file); a link out of the folder is not followed; outputs that are links are
    replaced, not written through; an old output's looser mode goes; a name that would start a formula after a
    semicolon is text too."""
    home = tmp_path / "home"
    formula = "Bob;=HYPERLINK(1)"
    assert facerec("enroll", str(lfw_photo(ALAN, 1)), "--name", formula, home=home).returncode == 0
    library, elsewhere = tmp_path / "library", tmp_path / "elsewhere"
    library.mkdir()
    elsewhere.mkdir()
    shutil.copy(lfw_photo(ALAN, 2), library / "alan.jpg")
    with open(library / "big.jpg", "wb") as handle:  # sparse: costs no disk, 4 GB to whoever reads it whole
        handle.write(b"\xff\xd8\xff\xe0")  # a JPEG's first bytes (before: read whole, MemoryError under the cap)
        handle.truncate(4 << 30)
    (library / "fake.jpg").write_bytes(b"GIF89a" + b"\0" * 100)
    shutil.copy(lfw_photo(BILJANA, 2), elsewhere / "private.jpg")
    (library / "outside.jpg").symlink_to(elsewhere / "private.jpg")
    out = tmp_path / "answers" / "who"
    out.parent.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("must stay as it is")
    Path(f"{out}.json").symlink_to(victim)
    Path(f"{out}.csv").write_text("old")
    Path(f"{out}.csv").chmod(0o644)

    done = _limited("identify", str(library), "--out", str(out), "--json", home=home, memory_bytes=3 << 30)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    problems = {p["photo"]: p["problem"] for p in summary["problems"]}
    assert summary["photos"] == 3 and set(problems) == {"big.jpg", "fake.jpg"}  # outside.jpg: not even listed
    assert "MiB" in problems["big.jpg"] and "not read" in problems["big.jpg"]
    assert "not a JPEG, PNG, WebP or BMP" in problems["fake.jpg"]
    assert victim.read_text() == "must stay as it is" and not Path(f"{out}.json").is_symlink()
    for written in (f"{out}.csv", f"{out}.json"):
        assert stat.S_IMODE(Path(written).stat().st_mode) == 0o600, written
    with open(f"{out}.csv", newline="") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert "Bob;'=HYPERLINK(1)" in cells
    for separator in (",", ";"):  # as a spreadsheet splitting on either would read the cells
        assert not any(piece.startswith("=") for cell in cells for piece in cell.split(separator))
