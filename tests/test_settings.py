"""On/off settings fail closed: only on/off, true/false, yes/no and 1/0 are read; anything else is one line at start
and nothing starts (#48 row 7: `FACEREC_SUGGESTIONS=disabled` kept strangers' faces, `FACEREC_STORE_CROPS=n` turned
privacy mode off)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from facerec.errors import InvalidArgument
from facerec.settings import Settings

SWITCHES = {"FACEREC_SUGGESTIONS": "suggestions", "FACEREC_STORE_CROPS": "store_crops"}
TYPOS = ("disabled", "none", "n", "of", "enabled", "2", "ja")
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("variable", sorted(SWITCHES))
def test_a_switch_reads_the_eight_words_and_refuses_anything_else(variable, monkeypatch):
    for text, meant in (("on", True), ("TRUE", True), ("yes", True), ("1", True), ("off", False), ("False", False),
                        ("NO", False), ("0", False), (" off ", False)):
        monkeypatch.setenv(variable, text)
        assert getattr(Settings.from_env(), SWITCHES[variable]) is meant, (variable, text)
    for typo in TYPOS:
        monkeypatch.setenv(variable, typo)
        with pytest.raises(InvalidArgument) as caught:
            Settings.from_env()
        message = str(caught.value)
        assert message.startswith(f"{variable}=") and "on or off" in message and "\n" not in message, message


def test_the_cli_and_the_app_refuse_to_start_on_a_typo(tmp_path):
    env = {**os.environ, "FACEREC_SUGGESTIONS": "disabled", "FACEREC_HOME": str(tmp_path / "home")}
    listed = subprocess.run([sys.executable, "-m", "facerec.cli", "list"], capture_output=True, text=True,
                            timeout=300, env=env)
    assert listed.returncode != 0 and listed.stderr.count("error:") == 1 and "Traceback" not in listed.stderr
    assert "FACEREC_SUGGESTIONS='disabled'" in listed.stderr
    env = {**os.environ, "FACEREC_STORE_CROPS": "n", "FACEREC_HOME": str(tmp_path / "home")}
    started = subprocess.run([sys.executable, str(ROOT / "app.py"), "--port", "0"], capture_output=True, text=True,
                             timeout=300, env=env, cwd=tmp_path)
    assert started.returncode != 0 and "FACEREC_STORE_CROPS='n'" in started.stderr
    assert "Traceback" not in started.stderr and not (tmp_path / "home").exists()  # nothing was made


@pytest.mark.parametrize("variable,value", [("FACEREC_UPLOAD_QUOTA_MB", "lots"), ("FACEREC_UPLOAD_QUOTA_MB", "-5"),
                                            ("GRADIO_SERVER_PORT", "http")])
def test_the_app_refuses_a_bad_server_setting_in_one_line(tmp_path, variable, value):
    """The server's own variables are read where the gallery's are (#49: app.py read them itself, and a quota of
    `lots` stopped the app with a ValueError's traceback after the gallery was opened)."""
    env = {**os.environ, variable: value, "FACEREC_HOME": str(tmp_path / "home")}
    started = subprocess.run([sys.executable, str(ROOT / "app.py"), "--port", "0"], capture_output=True, text=True,
                             timeout=300, env=env, cwd=tmp_path)
    assert started.returncode == 1 and started.stderr.startswith(f"error: {variable}={value!r} is not usable")
    assert "Traceback" not in started.stderr and not (tmp_path / "home").exists()
