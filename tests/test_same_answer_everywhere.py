"""The page, the REST API and the CLI answer the same photo alike under the operator's settings.

The page's controls used to make a second rule: FACEREC_FPIR=0.007 went into the slider as 0.7% and came back as
0.00699..., and a pinned FACEREC_THRESHOLD went into the pin box as text and came back rounded, so the page's
answer was "another rule" than the one in force: its named faces were not kept as sightings (no Confirm or
Correct for them), where REST and the CLI kept them. An untouched control now means the default in force
(`facerec.ui.threshold_controls.page_rule`). Runs on the portraits that ship with the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from app_server import running_app
from gradio_client import Client, handle_file

from facerec.gallery import Gallery
from facerec.gallery.composition import parts_of
from facerec.settings import Settings
from facerec.ui.threshold_controls import shown_percent, shown_pin

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "facerec.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, **env})


@pytest.mark.parametrize("setting", [{"FACEREC_FPIR": "0.007"}, {"FACEREC_THRESHOLD": "2.123456789"}],
                         ids=["rate", "pin"])
def test_the_page_rest_and_the_cli_answer_a_photo_alike(tmp_path, portrait, setting):
    home = tmp_path / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(portrait("Barack_Obama", 1), "Barack Obama", allow_low_quality=True)
    key = json.loads(cli("api-key", "create", "--role", "admin", "--json", "--home", str(home), env={}).stdout)["key"]
    query = portrait("Barack_Obama", 2)
    settings = Settings.from_env(**{"fpir": float(setting.get("FACEREC_FPIR", 0.01)),
                                    "similarity_threshold": (float(setting["FACEREC_THRESHOLD"])
                                                             if "FACEREC_THRESHOLD" in setting else None)})
    answers = {}
    with running_app(home, extra_env=setting) as app:  # the page's controls as they start, untouched
        page = Client(app.url, verbose=False).predict(handle_file(str(query)), shown_pin(settings), 3, "",
                                                      shown_percent(settings), api_name="/identify")
        answers["page"] = page[3][0]
        rest = httpx.post(f"{app.url}api/v1/identify", headers={"X-API-Key": key}, timeout=120,
                          files={"photo": (query.name, query.read_bytes(), "image/jpeg")})
        assert rest.status_code == 200, rest.text
        answers["rest"] = {**rest.json()["faces"][0], "score_threshold": rest.json()["score_threshold"]}
    done = cli("identify", str(query), "--json", "--home", str(home), env=setting)
    assert done.returncode == 0, done.stderr
    answers["cli"] = json.loads(done.stdout)[0]
    for where, answer in answers.items():
        assert answer["name"] == "Barack Obama", (where, answer)
        assert answer.get("sighting_id") is not None, f"{where}: the named face was not kept as the rule in force"
    thresholds = {where: answer["score_threshold"] for where, answer in answers.items()}
    assert len(set(thresholds.values())) == 1, thresholds


@pytest.mark.parametrize("operator", [{"fpir": 0.007}, {"fpir": 0.0125}, {"similarity_threshold": 2.123456789},
                                      {"similarity_threshold": 6.0, "fpir": 0.02}])
def test_untouched_controls_ask_for_the_rule_in_force_exactly(tmp_path, operator):
    """What the page sends from controls nobody touched is the operator's rule itself, not its rounded echo: the
    same threshold to the last bit, and the rule counted as the default (the old round trip made 0.007 into
    0.00699..., and a pin of 2.123456789 into 2.12346)."""
    from facerec.ui.threshold_controls import page_rule

    settings = Settings(home=tmp_path / "home", **operator)
    with Gallery(settings) as gallery:
        fpir, threshold = page_rule(settings, shown_percent(settings), shown_pin(settings))
        assert parts_of(gallery).thresholds.is_default(fpir, threshold)
        assert gallery.services().thresholds.in_force(fpir, threshold).threshold == gallery.services().thresholds.in_force().threshold
        if settings.similarity_threshold is not None:  # the operator's pin emptied: the rate, exactly
            assert page_rule(settings, shown_percent(settings), "") == (settings.fpir, None)
        assert page_rule(settings, 5.0, "") == (0.05, None)  # a moved slider is the rate it shows
        assert page_rule(settings, shown_percent(settings), "7.5") == (None, 7.5)  # a typed pin is that pin
