"""What a new user trips on, round 6 (#64): each test fails on 8d20703.

Real faces (the shipped public-domain portraits), a real SQLite gallery, the real CLI in a subprocess."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from facerec.gallery import Gallery
from facerec.settings import Settings
from tests.test_user_words import facerec  # the CLI as a user runs it (round 5's helper)

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def three_people(tmp_path_factory, portrait) -> Path:
    home = tmp_path_factory.mktemp("three") / "home"
    with Gallery(Settings(home=home)) as gallery:
        for person in ("Barack_Obama", "Joe_Biden", "Grace_Hopper"):
            gallery.enroll(portrait(person, 1), person.replace("_", " "), allow_low_quality=True)
    return home


# ----- row 14: `facerec health` gives the readings the Health tab gives ----------------------------------------------
def test_health_in_the_terminal_has_the_health_tabs_six_readings(three_people) -> None:
    """The CLI printed 5 metric rows where the Health tab has 6: "Nearest other person" was missing."""
    from facerec.ui.health_tab import report_html
    from facerec.words.health import health_in_words

    with Gallery(Settings(home=three_people)) as gallery:
        report = gallery.health()
        page = report_html(report, health_in_words(report)["readings"])
    page_rows = re.findall(r'<td class="metric">([^<]+)</td>', page)
    data = json.loads(facerec("health", "--json", home=three_people).stdout)
    assert data["nearest_other_person"] is not None
    text = facerec("health", home=three_people)
    assert text.returncode == 0, text.stderr
    assert len(page_rows) == 6, page
    for name in page_rows:
        assert name in text.stdout, (name, text.stdout)
    assert data["readings"]["NearestOtherPerson"] in text.stdout


# ----- row 15: the README lists the tabs in the page's order ----------------------------------------------------------
def test_the_readme_names_the_tabs_in_the_order_the_page_shows_them() -> None:
    """The README said Enroll, Identify, Live, Verify; the page shows Verify before Live. The page's order is the
    order `facerec.ui.app.build_app` builds the tabs in (read from its source: no second app in this process)."""
    readme = (REPO_ROOT / "README.md").read_text()
    sentence = readme[readme.index("The app has six tabs"):].split("\n\n")[0]
    said = re.findall(r"\*\*(\w+)\*\*", sentence)
    built = re.findall(r"(\w+)_tab\.build\(", (REPO_ROOT / "facerec" / "ui" / "app.py").read_text())
    assert said == [name.capitalize() for name in built], (said, built)


# ----- row 5: a small face is found, or said to be too small, never "no face found" --------------------------------
def _face_of_side(portrait, side: int, height: int | None = None) -> bytes:
    import io

    from PIL import Image

    photo = Image.open(portrait("Barack_Obama", 1)).convert("RGB").crop((211, 48, 340, 237))
    buffer = io.BytesIO()
    photo.resize((side, height or round(side * 1.47))).save(buffer, "PNG")
    return buffer.getvalue()


def test_a_face_under_the_smallest_size_is_said_to_be_too_small(tmp_path, portrait) -> None:
    """A face the detector found but dropped for its size was "no face found" (or, in a photo smaller than the
    smallest face, "too small to contain a face"): now the face's own size and the least that is used."""
    from facerec.errors import NoFace

    with Gallery(Settings(home=tmp_path / "home", min_face_size=60)) as gallery:
        with pytest.raises(NoFace, match=r"^the face in the photo is too small \(\d\d px wide; faces of at least 60 "
                                         r"px are used\): use a photo where the face is larger$"):
            gallery.enroll(_face_of_side(portrait, 48), "Barack Obama")


# ----- row 12: the start-up lines say which guards and opt-in features are in force ---------------------------------
def test_the_start_up_lines_name_the_pack_the_password_and_what_is_kept(tmp_path) -> None:
    """On 8d20703 the app said nothing at start about the admin password or suggested people being on."""
    from app_server import running_app

    with running_app(tmp_path / "home", admin_password="a long enough secret",
                     extra_env={"FACEREC_SUGGESTIONS": "on", "FACEREC_PACK": "dlib-public-domain"}) as app:
        log = app.log_text()
    assert "facerec: model pack: dlib's public-domain models (commercial use: yes;" in log
    assert "facerec: admin password: set: enrolling, deleting, exports and every face or name shown need it" in log
    assert "facerec: suggested people: on: unknown faces are kept for at most 30 days, 10,000 at most" in log
    assert "facerec: face crops: kept with each face and sighting" in log


# ----- row 16: folder mode names every file it writes and counts what it skipped ------------------------------------
def test_folder_mode_counts_what_it_skipped_and_names_its_progress_file(tmp_path, portrait) -> None:
    """A .txt file in the folder was skipped without a word, and who.progress.jsonl written without being named."""
    import shutil

    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(portrait("Barack_Obama", 1), library / "obama.jpg")
    (library / "notes.txt").write_text("not a photo")
    (library / "outside.jpg").symlink_to(portrait("Joe_Biden", 1))
    result = facerec("identify", str(library), "--out", str(tmp_path / "who"), home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert "(answers as they came: who.progress.jsonl)" in result.stdout
    assert ("skipped 1 file(s) that are not photos or videos (by their names), 1 link(s) leading outside the "
            "folder") in result.stdout
    docs = (REPO_ROOT / "docs" / "cli.md").read_text()
    assert "who.progress.jsonl" in docs


# ----- row 11: a working video path prints no alarming line ----------------------------------------------------------
def test_writing_the_annotated_video_prints_no_opencv_warning(tmp_path, portrait) -> None:
    """Every annotated video printed "OpenCV: FFMPEG: tag 0x30395056/'VP90' is not supported ..." to the server's
    terminal, although the WebM plays."""
    import subprocess
    import sys

    from video_clips import Path2D, clip

    source = clip(tmp_path / "clip.mp4", [Path2D(portrait("Barack_Obama", 1), (0.5, 0.5), (0.5, 0.5))], frames=10)
    code = ("import sys; from facerec.video.annotate import write_annotated; "
            f"write_annotated({str(source)!r}, {str(tmp_path / 'out.webm')!r}, [])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.webm").stat().st_size > 0
    assert "VP90" not in done.stderr and "not supported" not in done.stderr, done.stderr


# ----- row 10 (and #62 item 5): a sighting too poor to learn from is not held against an enrollment ---------------
def test_a_face_too_poor_to_learn_from_makes_no_weak_enrollment(tmp_path, portrait) -> None:
    """A 27 px face of Barack Obama, corrected to him by an admin and refused as too poor to learn from, made
    Health call his enrollment weak (its similarity is low because the face is small, not because the enrollment
    is bad). Now the weak enrollment is judged without it, and Health says why."""
    import io

    from PIL import Image

    from facerec.gallery.composition import parts_of

    photo = Image.open(portrait("Barack_Obama", 3)).convert("RGB")
    small = photo.resize((photo.width * 40 // 180, photo.height * 40 // 180))
    canvas = Image.new("RGB", (400, 300), (120, 120, 120))
    canvas.paste(small, (100, 50))
    buffer = io.BytesIO()
    canvas.save(buffer, "JPEG", quality=90)
    with Gallery(Settings(home=tmp_path / "home", similarity_threshold=8.0)) as gallery:
        gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama")
        decoded = parts_of(gallery).pipeline.read(buffer.getvalue())
        match = max(gallery.identify(decoded), key=lambda m: m.face.width)
        taught = gallery.services().feedback.label(match.embedding, "Barack Obama", photo=decoded, face=match.face,
                                                   learn_by="admin password")
        assert taught.learning["not_learned_because"].startswith("a poor photo of the face")
        report = gallery.health().to_dict()
    assert report["sightings"]["weak_enrollments"] == []
    assert any("too poor to learn from" in note for note in report["notes"])
