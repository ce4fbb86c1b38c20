"""The CLI on real photos: exit codes, JSON shapes, one-line errors (run as a user would, in a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def facerec(*args: str, home: Path, module: str = "facerec.cli") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args, "--home", str(home)],
                          capture_output=True, text=True, timeout=300)


TRAIN = "facerec.train.cli"  # `facerec-train`: the model-making commands, apart from the app's


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli_home")


def test_version_and_help() -> None:
    version = subprocess.run([sys.executable, "-m", "facerec.cli", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("facerec ")
    helped = subprocess.run([sys.executable, "-m", "facerec.cli", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0
    for command in ("enroll", "identify", "eval", "eval-pairs", "health"):
        assert command in helped.stdout
    for research in ("prepare", "train", "export-onnx", "quantize", "teacher-targets", "calibrate"):
        assert f" {research} " not in helped.stdout  # the app's command line holds no model making...
    trainer = subprocess.run([sys.executable, "-m", TRAIN, "--help"], capture_output=True, text=True)
    for research in ("prepare", "train", "export-onnx", "quantize", "teacher-targets", "calibrate", "average"):
        assert research in trainer.stdout  # ...facerec-train does


def test_usage_error_exits_2(home: Path) -> None:
    result = facerec("enroll", home=home)  # photo and --name missing
    assert result.returncode == 2
    assert "usage" in result.stderr.lower()


def test_enroll_identify_list_delete_round_trip(home: Path, portrait) -> None:
    enrolled = facerec("enroll", str(portrait("Barack_Obama", 1)), "--name", "Barack Obama", "--json", home=home)
    assert enrolled.returncode == 0, enrolled.stderr
    assert json.loads(enrolled.stdout)["name"] == "Barack Obama"

    listed = facerec("list", "--json", home=home)
    assert listed.returncode == 0
    people = json.loads(listed.stdout)
    assert [(p["name"], p["photos"]) for p in people] == [("Barack Obama", 1)]

    found = facerec("identify", str(portrait("Barack_Obama", 2)), "--json", home=home)
    assert found.returncode == 0, found.stderr
    matches = json.loads(found.stdout)
    assert len(matches) == 1 and matches[0]["name"] == "Barack Obama" and matches[0]["known"] is True

    table = facerec("identify", str(portrait("Barack_Obama", 2)), home=home)
    assert table.returncode == 0 and "Barack Obama" in table.stdout

    stranger = facerec("identify", str(portrait("Grace_Hopper", 1)), "--json", home=home)
    assert json.loads(stranger.stdout)[0]["name"] == "unknown"

    deleted = facerec("delete", "Barack Obama", home=home)
    assert deleted.returncode == 0
    assert json.loads(facerec("list", "--json", home=home).stdout) == []


def test_bad_photo_exits_1_with_one_line(home: Path, tmp_path: Path) -> None:
    not_an_image = tmp_path / "notes.jpg"
    not_an_image.write_text("this is not a photo")
    result = facerec("enroll", str(not_an_image), "--name", "Nobody", home=home)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "not an image" in lines[0]
    assert "Traceback" not in result.stderr


def test_no_face_and_unknown_name_exit_1(home: Path, tmp_path: Path) -> None:
    from PIL import Image

    blank = tmp_path / "blank.png"
    Image.new("RGB", (300, 300), (128, 128, 128)).save(blank)
    no_face = facerec("identify", str(blank), home=home)
    assert no_face.returncode == 1 and "no face" in no_face.stderr
    unknown = facerec("rename", "Nobody Here", "Somebody", home=home)
    assert unknown.returncode == 1 and "Nobody Here" in unknown.stderr
    assert "Traceback" not in no_face.stderr + unknown.stderr


def test_eval_json_shape_on_a_small_dataset(home: Path, lfw: Path, tmp_path: Path) -> None:
    # A folder-per-identity dataset of six LFW people with exactly two photos (symlinks, nothing copied).
    people = ["Abdullah_Gul", "Adam_Sandler", "Alan_Ball", "Alec_Baldwin", "Ali_Naimi", "Alejandro_Toledo"]
    dataset = tmp_path / "dataset"
    for person in people:
        (dataset / person).mkdir(parents=True)
        for photo in sorted((lfw / person).iterdir())[:2]:
            (dataset / person / photo.name).symlink_to(photo)
    out = tmp_path / "out.json"
    result = facerec("eval", str(dataset), "--max-per-identity", "2", "--json", str(out),
                     "--report", str(tmp_path / "report"), home=home)
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    for key in ("rank1", "rank5", "n_identities", "n_queries", "detection_failures",
                "closest_is_positive_accuracy", "median_distances", "tar_at_far", "photos_per_second"):
        assert key in figures
    assert figures["n_identities"] == len(people) and figures["n_queries"] == len(people)
    assert set(figures["median_distances"]) == {"MedianDistance", "MedianClosestDistance",
                                                "MedianClosestPositiveDistance",
                                                "MedianClosestVsClosestPositiveDistance"}
    assert 0.0 <= figures["rank1"] <= figures["rank5"] <= 1.0
    for name in ("cmc.png", "roc_det.png", "similarities.png", "summary.md", "eval.json"):
        assert (tmp_path / "report" / name).stat().st_size > 0
    assert "rank-1" in result.stdout


def test_prepare_builds_a_resumable_cache(home: Path, lfw: Path, tmp_path: Path) -> None:
    import numpy as np

    dataset = tmp_path / "people"
    for person in ("Alan_Ball", "Ai_Sugiyama"):
        (dataset / person).mkdir(parents=True)
        for photo in sorted((lfw / person).iterdir())[:2]:
            (dataset / person / photo.name).symlink_to(photo)
    (dataset / "Ai_Sugiyama" / "broken.jpg").write_bytes(b"not a jpeg")
    out = tmp_path / "cache"
    first = facerec("prepare", str(dataset), str(out), "--json", home=home, module=TRAIN)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["photos"] == 5 and summary["detected"] == 4 and summary["identities"] == 2
    assert summary["unreadable"] == ["Ai_Sugiyama/broken.jpg"] and summary["fallbacks"] == []
    faces = np.load(out / "faces.npy", mmap_mode="r")
    assert faces.shape == (5, 112, 112, 3) and faces[:4].mean() > 20
    again = facerec("prepare", str(dataset), str(out), "--json", home=home, module=TRAIN)  # resumes: nothing left to do
    assert json.loads(again.stdout)["detected"] == 4
    assert len((out / "results.tsv").read_text().strip().splitlines()) == 1 + 5


def test_eval_open_set_with_several_photos_per_person(lfw: Path, tmp_path: Path) -> None:
    """#28: `facerec eval --open-set --photos-per-person` enrolls k photos of each person with more than the
    largest k, searches their other photos and the one-photo people, and says whether the promise was kept."""
    dataset = tmp_path / "people"
    for person in ("Alvaro_Uribe", "Atal_Bihari_Vajpayee", "Amelie_Mauresmo"):  # 8 or more photos each
        (dataset / person).mkdir(parents=True)
        for photo in sorted((lfw / person).iterdir())[:4]:
            (dataset / person / photo.name).symlink_to(photo)
    for person in ("Aaron_Eckhart", "Aaron_Guiel", "Aaron_Patterson"):  # one photo each: strangers
        (dataset / person).mkdir(parents=True)
        (dataset / person / f"{person}_0001.jpg").symlink_to(lfw / person / f"{person}_0001.jpg")
    done = facerec("eval", str(dataset), "--open-set", "--photos-per-person", "1,3", "--json", home=tmp_path / "h")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [row["photos_per_person"] for row in result["rows"]] == [1, 3]
    assert all(row["people"] == 3 and row["non_mated_searches"] == 3 and row["mated_searches"] == 3
               for row in result["rows"])
    assert result["rows"][1]["enrolled_faces"] == 9 and "promise_kept" in result
    refused = facerec("eval", str(dataset), "--open-set", "--photos-per-person", "a,b", home=tmp_path / "h")
    assert refused.returncode == 1 and "whole numbers" in refused.stderr


def test_eval_existing_gallery_with_labelled_probes(portrait, tmp_path: Path) -> None:
    gallery_home = tmp_path / "gallery"
    enrolled = facerec("enroll", str(portrait("Barack_Obama", 1)), "--name", "Barack_Obama", home=gallery_home)
    assert enrolled.returncode == 0, enrolled.stderr
    probes = tmp_path / "probes"
    (probes / "Barack_Obama").mkdir(parents=True)
    (probes / "Barack_Obama" / "a.jpg").symlink_to(portrait("Barack_Obama", 2))
    (probes / "Grace_Hopper").mkdir()  # not enrolled: a non-mated search that should come back unknown
    (probes / "Grace_Hopper" / "b.jpg").symlink_to(portrait("Grace_Hopper", 1))
    result = facerec("eval", str(probes), "--existing", "--json", home=gallery_home)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["n_mated"] == 1 and figures["n_non_mated"] == 1
    assert figures["rank1"] == 1.0 and figures["identified_at_threshold"] == 1.0
    assert figures["unknown_rejection_rate"] == 1.0


def test_every_extra_the_cli_names_exists() -> None:
    """`teacher-targets --help` named a 'teacher' extra that pyproject.toml does not have (#31 item 5)."""
    import re
    import tomllib

    extras = set(tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    helped = subprocess.run([sys.executable, "-m", TRAIN, "teacher-targets", "--help"], capture_output=True,
                            text=True)
    from facerec.train import teacher

    named = set(re.findall(r"'(\w+)'\s+extra", helped.stdout)) | set(re.findall(r"facerec\[(\w+)\]",
                                                                                teacher.INSTALL_HINT))
    assert named and named <= extras, (named, extras)


def test_the_app_speaks_facerec_options_on_a_busy_port_and_at_start(tmp_path) -> None:
    """A busy port gave Gradio's traceback about `server_port` of launch(), and every start Gradio's advice to
    set `share=True` in launch() (#31 item 2): facerec's own sentences name --port and --share."""
    import socket
    import time

    from app_server import REPO_ROOT, running_app

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run([sys.executable, "app.py", "--home", str(tmp_path / "busy"), "--port", str(port)],
                              cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert busy.returncode == 1 and "Traceback" not in busy.stderr, busy.stderr
    assert busy.stderr.strip().splitlines() == [f"error: port {port} on 127.0.0.1 is in use (another facerec, or "
                                                f"another program): start with --port N, for example --port "
                                                f"{port + 1}"]
    with running_app(tmp_path / "home") as app:
        deadline = time.monotonic() + 30
        while "facerec: running on" not in app.log_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        log = app.log_text()
    assert f"facerec: running on http://127.0.0.1:{app.port}/ (add --share for a public link)" in log
    assert "share=True" not in log and "launch()" not in log
