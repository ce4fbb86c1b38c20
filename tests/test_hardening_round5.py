"""Hardening round 5 (#63), the rows not about the Live tab (tests/test_live_frames.py has rows 1, 2 and 6's Live
part). Each test fails on 8d20703. Real videos made from LFW photos (tests/video_clips.py), a real gallery, the CLI
in a subprocess as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from video_clips import Path2D, clip

from facerec.gallery import Gallery
from facerec.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
POWELL = "Colin_Powell"


def test_row_8_a_folder_named_like_a_protocol_is_still_only_a_folder(tmp_path, lfw_photo) -> None:
    """`facerec identify file:` run in a library whose folder is called `file:` used to hand FFmpeg
    "file:/abs/path/clip.mp4": another file, outside the folder (past the link guard). Now FFmpeg gets the
    absolute path of the file inside the folder, which has no face."""
    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(lfw_photo(POWELL, 1), "Colin Powell")
    (tmp_path / "outside").mkdir()
    outside = clip(tmp_path / "outside" / "clip.mp4", [Path2D(lfw_photo(POWELL, 2), (0.5, 0.5), (0.5, 0.5))])
    library = tmp_path / "library"
    inside = library / "file:" / str(outside).lstrip("/")
    inside.parent.mkdir(parents=True)
    clip(inside, [])  # the same name, inside the folder: a plain background, no face
    result = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", "file:", "--out", "answers",
                             "--home", str(home), "--json"], capture_output=True, text=True, timeout=600,
                            cwd=library, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads((library / "answers.json").read_text())["photos"]
    assert entry["photo"] == str(Path(str(outside).lstrip("/")))
    assert entry["faces"] == [], entry  # the face was Colin Powell's, in the file outside the folder
