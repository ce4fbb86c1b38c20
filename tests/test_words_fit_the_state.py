"""Words and pictures that fit what is shown: face labels that never collide, an interval never of zero width, words
that fit the state, a terminal table that fits its width, the README and API page sentences (each fails on the code
before; found by a new user's walk through the app). The browser parts (labels at 1280 and 390 px, an upload over
the limit, the footer's link) are in tests/test_app_labels_and_links.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from facerec.openset.model_card import policy_for
from facerec.gallery import Gallery
from facerec.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]


def group_photo(portrait_square, people=("Grace_Hopper", "Joe_Biden", "Barack_Obama")) -> np.ndarray:
    """Three shipped portraits (tests/faces) framed as LFW photos are, side by side: a 750 x 250 group photo of
    three faces, as three LFW photos make."""
    return np.hstack([np.asarray(Image.open(portrait_square(person, 1)).convert("RGB")) for person in people])


def test_labels_of_faces_side_by_side_never_overlap(tmp_path, portrait_square):
    """Item 1: in a 750 x 250 photo of three people, "#1 unknown" covered Colin Powell's score and "#2 Serena
    Williams 0.930" most of "#1 unknown"."""
    from facerec.faces.drawing import label_layout

    photo = group_photo(portrait_square)
    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        faces = gallery.services().photos.detect(photo)[1]
    assert len(faces) == 3
    labels = ["#0 unknown", "#1 Joe Biden 0.930", "#2 Barack Obama 0.912"]
    for size, shown in (((750, 250), photo), ((375, 125), None)):  # and the same faces in half the pixels
        scaled = faces if shown is not None else [type(f)(tuple(v / 2 for v in f.box), f.score, f.landmarks / 2)
                                                  for f in faces]
        boxes = [box for _text, box, _font in label_layout(size, scaled, labels)]
        for i, a in enumerate(boxes):
            assert 0 <= a[0] and 0 <= a[1] and a[2] <= size[0] and a[3] <= size[1], a
            for b in boxes[i + 1:]:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def test_few_events_get_an_exact_binomial_interval():
    """Item 5: 0 false matches in 40 searches printed "0.00% (0.00-0.00%)"; 0 of 40 allows up to ~9%."""
    from facerec.evaluation.open_set import Outcomes, exact_binomial_interval

    outcomes = Outcomes(40)
    outcomes.add(np.arange(40), np.zeros(40, bool))
    low, high = outcomes.interval(np.random.default_rng(0))
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 40), abs=1e-6)  # 8.81%
    assert exact_binomial_interval(1, 40) == pytest.approx([0.000633, 0.131586], abs=1e-5)
    assert exact_binomial_interval(40, 40)[0] == pytest.approx(0.025 ** (1 / 40), abs=1e-6)
    many = Outcomes(500)  # plenty of both outcomes: the bootstrap over people, as before
    many.add(np.arange(500), np.arange(500) % 4 == 0)
    low, high = many.interval(np.random.default_rng(0))
    assert low < 0.25 < high and high - low < 0.1


def test_health_in_a_terminal_fits_its_width(tmp_path, lfw):
    """Item 4: `facerec health` printed lines of 529 characters."""
    from facerec.datasets.folders import list_identities
    from facerec.faces.choice import largest_face_index

    people = [photos for photos in list_identities(lfw).values() if len(photos) >= 3][:20]
    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as gallery:
        for photos in people:
            photo, faces = gallery.services().photos.detect(photos[0])
            gallery.enroll(photo, photos[0].parent.name.replace("_", " "), face_index=largest_face_index(faces),
                           allow_lookalike=True, allow_low_quality=True)
        for photos in people:
            gallery.identify(photos[1])
    for columns in (100, 60):
        done = subprocess.run([sys.executable, "-m", "facerec.cli", "health", "--home", str(home)],
                              capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
                              env={**os.environ, "COLUMNS": str(columns)}, check=True)
        longest = max(done.stdout.splitlines(), key=len)
        assert len(longest) <= columns, longest
        assert "ClosestIsPositiveAccuracy" in done.stdout and "MedianClosestPositiveDistance" in done.stdout
    done = subprocess.run([sys.executable, "-m", "facerec.cli", "health", "--home", str(home), "--json"],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT, check=True)
    assert '"closest_is_positive_accuracy"' in done.stdout  # the whole report, unwrapped, in --json


def test_the_threshold_sentence_names_people_before_and_after_an_identify(tmp_path, portrait):
    """Item 6: the sentence read "5 people (5 enrolled faces)" before Identify and "5 enrolled faces" after."""
    from facerec.words.threshold import threshold_sentence

    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        for person in ("Barack_Obama", "Joe_Biden", "Eileen_Collins"):  # shipped portraits (tests/faces)
            gallery.enroll(portrait(person, 1), person.replace("_", " "))
        before = threshold_sentence(gallery.services().thresholds.in_force(with_people=True))
        (match,) = gallery.identify(portrait("Barack_Obama", 2))
    after = threshold_sentence(match.rule)
    assert "3 people (3 enrolled faces)" in before and before == after


def test_confusable_pairs_are_never_unrelated_faces(tmp_path, portrait):
    """Item 6: "Most confusable pairs" listed pairs at negative similarity (-0.166)."""
    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        gallery.enroll(portrait("Barack_Obama", 3), "Barack Obama")  # shipped portraits (tests/faces)
        gallery.enroll(portrait("Eileen_Collins", 1), "Eileen Collins")  # -0.03 from Obama's photo 3
        report = gallery.health()
    assert report.confusable_pairs == []


def test_without_a_password_the_identify_tab_does_not_ask_for_one(tmp_path):
    """Item 6: with no admin password set, Identify said "With the admin password: confirm ..."."""
    from facerec.ui import build_app

    with Gallery(Settings(home=tmp_path / "home")) as gallery:
        open_page = build_app(gallery).config
        guarded_page = build_app(gallery, admin_password="pw").config

    def texts(config: dict) -> str:
        return " ".join(str(c.get("props", {}).get("value", "")) for c in config["components"])

    assert "Right or wrong?" in texts(open_page) and "admin password" not in texts(open_page).lower()
    assert "With the admin password: confirm" in texts(guarded_page)


def test_the_readme_says_what_the_test_command_needs_in_short_sentences():
    """Item 9: the test paragraph was one very long sentence; qemu-user's skip and the system user were buried."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme[readme.index("## Two commands"):readme.index("## Everyday use")]
    prose = re.sub(r"```.*?```", "", section, flags=re.S)
    for sentence in re.split(r"(?<=[.;:])\s", " ".join(prose.split())):
        assert len(sentence) < 220, sentence
    assert "without qemu-user that test is skipped" in " ".join(prose.split())
    assert "creates a system user `pgserver`" in " ".join(prose.split())


def test_the_readme_says_how_recognition_falls_as_the_gallery_grows():
    """Item 9: the Health tab's expected true-match rate at 10 / 100 / 1,000 / 10,000 faces, up front, generated
    from the model card."""
    from facerec.settings import Settings as Defaults

    readme = (REPO_ROOT / "README.md").read_text()
    block = readme[readme.index("<!-- results:growth -->"):readme.index("<!-- /results:growth -->")]
    policy = policy_for(Defaults())
    for faces in (10, 100, 1_000, 10_000):
        assert f"{faces:,}" in block
        assert f"{policy.for_gallery(faces).true_match_rate:.0%}" in block


def test_the_api_page_says_where_its_docs_come_from():
    """Item 10: docs/api.md said the docs page loads its script from a CDN; it is served by the app."""
    page = " ".join((REPO_ROOT / "docs" / "api.md").read_text().split())
    assert "CDN" not in page and "served by the app itself from `/api/v1/docs-assets/`" in page


def test_a_second_copy_on_a_busy_port_says_only_why_it_cannot_start(tmp_path):
    """Item 8: a second copy on a busy port first printed "gallery ... (7 people)" and "REST API ... on, 4 active
    key(s)", then its error."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "app.py", "--home", str(tmp_path / "home"), "--port", str(port)],
                              capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 1 and done.stdout == "", done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: port") and f"--port {port + 1}" in line, line
    assert not (tmp_path / "home").exists()  # nothing opened, nothing created


def test_the_user_pages_carry_no_issue_numbers():
    """User pages say what to do and see; issue history goes to docs/model.md and docs/architecture.md."""
    for page in ("app", "cli", "api", "health", "threshold-policy", "deployment"):
        text = (REPO_ROOT / "docs" / f"{page}.md").read_text()
        assert not re.findall(r"\(#\d+\)|issue #\d+|#\d\d\b", text), page
        # and no module paths: where the code lives is docs/architecture.md's business
        assert not re.findall(r"facerec/\w+/|`facerec\.\w+\.\w+", text), page
