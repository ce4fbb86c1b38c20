"""The README's Python API section is true (issue #15, point 7): its code runs against a real app, and its table
lists every API name the app has, with every parameter.

The section "Calling the app from Python" is read from README.md; its Python blocks run, in order, against
`python app.py` (tests/app_server.py) with the README's file names replaced by real photos: `alice.jpg` and
`alice2.jpg` are two photos of one LFW person, `party.jpg` that person's third photo beside two strangers. What
the calls returned is then checked. Also here, with the app running: "enroll" is spelled one way on the page.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from app_server import running_app

README = Path(__file__).resolve().parents[1] / "docs" / "app.md"  # the app's page, linked from the README
SECTION = "## Calling the app from Python"
ALICE = "Antonio_Trillanes"  # three single-face photos: 1 enrolled, 2 added, 3 in the party photo
STRANGERS = ("Andy_Griggs", "Andy_Rooney")  # one photo each, never enrolled
BRITISH = re.compile(r"\benrol\b|\benrols\b|\benrolment", re.IGNORECASE)


def section(text: str) -> str:
    start = text.index(SECTION)
    end = text.find("\n# ", start)
    return text[start:end if end >= 0 else None]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("readme-app") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def photos(lfw_photo, tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("readme-photos")
    tiles = [Image.open(p).convert("RGB") for p in (lfw_photo(ALICE, 3), *(lfw_photo(s, 1) for s in STRANGERS))]
    party = Image.new("RGB", (250 * len(tiles), 250))
    for i, tile in enumerate(tiles):
        party.paste(tile, (250 * i, 0))
    party.save(folder / "party.jpg", "JPEG", quality=95)
    return {"alice.jpg": lfw_photo(ALICE, 1), "alice2.jpg": lfw_photo(ALICE, 2), "party.jpg": folder / "party.jpg"}


def test_the_readme_api_session_runs_and_answers_as_it_says(app, photos):
    blocks = python_blocks(section(README.read_text()))
    assert blocks, f"no Python code under {SECTION!r}"
    namespace: dict = {}
    for code in blocks:
        code = code.replace('"http://127.0.0.1:7860/"', repr(app.url))
        for name, path in photos.items():
            code = code.replace(f'"{name}"', repr(str(path)))
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example

    assert namespace["note"] == "One face found."
    assert namespace["alice"]["name"] == "Alice" and namespace["added"]["photos"] == 2
    assert [m["name"] for m in namespace["matches"]] == ["Alice", "unknown", "unknown"]
    assert namespace["strict"][0]["score_threshold"] == 8  # the pin is on the normalised score
    assert namespace["result"]["same_person"] is True
    assert "The second photo has 3 faces" in namespace["refusal"] and "face_b" in namespace["refusal"]
    assert [p["name"] for p in namespace["people"]] == ["Alice"]  # /list with no arguments (the old TypeError)
    assert namespace["renamed"]["name"] == "Alice Smith"
    assert Path(namespace["export"]).is_file()
    assert namespace["report"]["identities"] == 1 and namespace["report"]["faces"] == 2
    assert namespace["deleted"]["photos"] == 2
    assert namespace["counts"] == {"added": 2, "skipped": 0}


def test_the_readme_lists_every_api_name_with_its_parameters(app):
    from gradio_client import Client

    endpoints = Client(app.url, verbose=False).view_api(return_format="dict", print_info=False)["named_endpoints"]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(/\w+)` \|.*$", section(README.read_text()),
                                                      flags=re.MULTILINE)}
    assert sorted(rows) == sorted(endpoints), "the README's API table and the app's API names differ"
    for name, endpoint in endpoints.items():
        parameters = rows[name].split("|")[2]
        for parameter in endpoint["parameters"]:
            assert f"`{parameter['parameter_name']}`" in parameters, (name, parameter["parameter_name"])


def test_enroll_is_spelled_one_way_on_the_page(app):
    with urllib.request.urlopen(f"{app.url}config", timeout=30) as response:
        config = json.load(response)
    texts = [value for component in config["components"] for value in component.get("props", {}).values()
             if isinstance(value, str)]
    assert any("Enroll" in text for text in texts)
    found = sorted({m.group(0) for text in texts for m in BRITISH.finditer(text)})
    assert found == [], f"British spellings on the page: {found}"
