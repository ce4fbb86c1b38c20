"""A photo library grouped in one pass (#66 items 1-2): `facerec identify DIR/ --group` on LFW people who may be
trained on (3+ photos; never the evaluation people), one of them enrolled; the groups, a second run that keeps
their numbers, naming and dismissing a group, and the strangers' embeddings kept no longer than their bound."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
STRANGERS = ["Alejandro_Toledo", "Alvaro_Uribe", "Amelie_Mauresmo", "Angelina_Jolie", "Ari_Fleischer"]
ENROLLED = "Andre_Agassi"


def facerec(*args: str, home: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "facerec.cli", *args, "--home", str(home)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def library(lfw, tmp_path) -> tuple[Path, Path, Path]:
    """(library folder: photos 2-5 of five strangers and of Andre Agassi, and a clip of one stranger, gallery with
    Agassi enrolled from his photo 1, the run's --out)."""
    folder = tmp_path / "library"
    for person in STRANGERS + [ENROLLED]:
        (folder / person).mkdir(parents=True)
        for photo in sorted((lfw / person).glob("*.jpg"))[1:5]:
            shutil.copy(photo, folder / person / photo.name)
    from video_clips import Path2D, clip

    toledo = sorted((lfw / "Alejandro_Toledo").glob("*.jpg"))[6]  # a clip of him, in his folder (a video's track)
    clip(folder / "Alejandro_Toledo" / "walk.mp4", [Path2D(toledo, (0.3, 0.5), (0.7, 0.5))])
    (folder / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a whole photo")  # answered with its problem
    home = tmp_path / "home"
    facerec("enroll", str(sorted((lfw / ENROLLED).glob("*.jpg"))[0]), "--name", "Andre Agassi", home=home)
    return folder, home, tmp_path / "out" / "who"


def grouped(out: Path) -> dict:
    return json.loads(out.with_name(out.name + ".groups.json").read_text())


def test_a_library_run_groups_each_stranger_once_and_keeps_the_numbers_on_a_second_run(library, lfw) -> None:
    folder, home, out = library
    answer = json.loads(facerec("identify", str(folder), "--group", "--out", str(out), "--json", home=home).stdout)
    state = grouped(out)
    shown = {g["group"] for g in answer["groups"]}
    owners = {number: {face["photo"].split("/")[0] for face in state["groups"][str(number)]["faces"]}
              for number in shown}
    assert sorted(owner for names in owners.values() for owner in names) == STRANGERS, owners  # one group each, pure
    sizes = {next(iter(owners[n])): len(state["groups"][str(n)]["faces"]) for n in shown}
    assert sizes == {**{person: 4 for person in STRANGERS}, "Alejandro_Toledo": 5}, sizes  # his photos and his track
    toledo = next(n for n, names in owners.items() if names == {"Alejandro_Toledo"})
    assert any(f["photo"].endswith("walk.mp4") for f in state["groups"][str(toledo)]["faces"])
    assert not any(face["photo"].startswith(ENROLLED) for g in state["groups"].values() for face in g["faces"])
    written = json.loads(out.with_name("who.json").read_text())
    assert "embedding" not in json.dumps(written) and set(written) == {"photos", "people", "groups"}
    assert len(written["people"]["Andre Agassi"]) == 4
    header = out.with_name("who.csv").read_text().splitlines()[0]
    assert header.endswith(",group")
    for name in ("who.csv", "who.json", "who.groups.json", "who.progress.jsonl"):
        assert stat.S_IMODE(out.with_name(name).stat().st_mode) == 0o600, name
    # a new photo of one stranger: only it is identified, it joins that stranger's group, no number moves
    extra = sorted((lfw / "Alvaro_Uribe").glob("*.jpg"))[5]
    shutil.copy(extra, folder / "Alvaro_Uribe" / extra.name)
    again = json.loads(facerec("identify", str(folder), "--group", "--out", str(out), "--json", home=home).stdout)
    # the clip and the broken file too (a video's answer, and a file's problem, were never taken as done before)
    assert again["resumed"] == answer["photos"]
    after = grouped(out)
    assert all(after["faces"][key] == number for key, number in state["faces"].items())
    uribe = next(n for n, names in owners.items() if names == {"Alvaro_Uribe"})
    assert any(face["photo"].endswith(extra.name) for face in after["groups"][str(uribe)]["faces"])


def test_naming_a_group_enrolls_the_person_and_a_dismissed_group_is_no_longer_offered(library, lfw) -> None:
    folder, home, out = library
    answer = json.loads(facerec("identify", str(folder), "--group", "--out", str(out), "--json", home=home).stdout)
    state = grouped(out)
    number_of = {state["groups"][str(g["group"])]["faces"][0]["photo"].split("/")[0]: g["group"]
                 for g in answer["groups"]}
    named = json.loads(facerec("library", "name", str(out), str(number_of["Ari_Fleischer"]), "Ari Fleischer",
                               "--json", home=home).stdout)
    outcomes = [face["outcome"] for face in named["faces"]]
    assert outcomes[0] == "enrolled" and outcomes.count("added") >= 2, outcomes
    facerec("library", "dismiss", str(out), str(number_of["Amelie_Mauresmo"]), home=home)
    unseen = sorted((lfw / "Ari_Fleischer").glob("*.jpg"))[6]
    seen = json.loads(facerec("identify", str(unseen), "--json", home=home).stdout)
    assert [face["name"] for face in seen] == ["Ari Fleischer"], seen
    offered = json.loads(facerec("identify", str(folder), "--group", "--out", str(out), "--json", home=home).stdout)
    assert {g["group"] for g in offered["groups"]} == set(number_of.values()) - {number_of["Ari_Fleischer"],
                                                                                 number_of["Amelie_Mauresmo"]}


def test_strangers_embeddings_older_than_their_bound_leave_the_runs_files(library) -> None:
    folder, home, out = library
    facerec("identify", str(folder), "--group", "--out", str(out), home=home)
    progress = out.with_name("who.progress.jsonl")
    entries = [json.loads(line) for line in progress.read_text().splitlines()]
    assert any(entry.get("unknown") for entry in entries)
    old = time.time() - 31 * 86_400
    progress.write_text("".join(json.dumps({**entry, "at": old}) + "\n" for entry in entries))
    facerec("identify", str(folder), "--out", str(out), home=home)  # a plain run: nothing identified again
    kept = [json.loads(line) for line in progress.read_text().splitlines()]
    assert len(kept) == len(entries) and not any("unknown" in entry for entry in kept)


def test_group_is_refused_in_privacy_mode_and_writes_nothing(library) -> None:
    """Privacy mode keeps no faces of people not enrolled: `--group` (which keeps their embeddings) is one line,
    exit 1, and no file of the run is written (it ran and kept them before this)."""
    folder, home, out = library
    done = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", str(folder), "--group", "--out", str(out),
                           "--home", str(home)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "FACEREC_STORE_CROPS": "off"})
    assert done.returncode == 1 and "privacy mode" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.parent.exists() or not any(out.parent.iterdir())


def test_the_app_groups_no_library_unless_the_operator_set_one_outside_privacy_mode(tmp_path) -> None:
    """FACEREC_LIBRARY is the operator's opt-in (as `--group` is); privacy mode keeps no faces of people not
    enrolled, so it groups none; a folder that is not there is one line. Each refusal starts nothing."""
    from facerec.errors import InvalidArgument
    from facerec.library.app_runs import LibraryRuns
    from facerec.settings import Settings

    photos = tmp_path / "photos"
    photos.mkdir()
    for settings, why in ((Settings(home=tmp_path / "a"), "FACEREC_LIBRARY"),
                          (Settings(home=tmp_path / "b", library=photos, store_crops=False), "privacy mode"),
                          (Settings(home=tmp_path / "c", library=tmp_path / "gone"), "not a folder")):
        runs = LibraryRuns(settings)
        assert why in runs.why_off()
        with pytest.raises(InvalidArgument, match=why):
            runs.start()
        status = runs.status()
        assert (status["on"], status["running"], status["started_at"]) == (False, False, None)
        assert not (settings.home / "library").exists()
    assert LibraryRuns(Settings(home=tmp_path / "d", library=photos)).why_off() is None
