"""Start the real web app (`python app.py`) in a subprocess for end-to-end tests (not a test module itself).

    with running_app(tmp_path / "home") as app:
        Client(app.url) ...

The app runs from the repository root on a free local port with its own gallery folder and Gradio temp folder;
the context manager waits until the page answers and stops the process afterwards. Its output goes to
`<home>.log`, quoted in the error when the app fails to come up.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 90.0


@dataclass
class RunningApp:
    url: str
    port: int
    home: Path
    log: Path
    process: subprocess.Popen

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def running_app(home: Path, admin_password: str | None = None, timeout_s: float = START_TIMEOUT_S,
                extra_env: dict[str, str] | None = None, repo_root: Path = REPO_ROOT) -> Iterator[RunningApp]:
    """Run `app.py --home <home> --port <free port>`; yields once the page answers HTTP 200. `extra_env` is added
    to the app's environment; `repo_root`: another checkout's app.py (a benchmark compares two commits)."""
    home = Path(home)
    home.parent.mkdir(parents=True, exist_ok=True)
    log = home.with_name(home.name + ".log")
    gradio_tmp = home.with_name(home.name + "-gradio-tmp")
    gradio_tmp.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("FACEREC_ADMIN_PASSWORD", "FACEREC_HOME", "GRADIO_SERVER_PORT", "GRADIO_SERVER_NAME")}
    env.update(GRADIO_ANALYTICS_ENABLED="False", GRADIO_TEMP_DIR=str(gradio_tmp), PYTHONUNBUFFERED="1",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    if admin_password is not None:
        env["FACEREC_ADMIN_PASSWORD"] = admin_password
    env.update(extra_env or {})
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "app.py", "--home", str(home), "--port", str(port)],
                                   cwd=repo_root, env=env, stdout=out, stderr=subprocess.STDOUT)
    app = RunningApp(url, port, home, log, process)
    try:
        deadline = time.monotonic() + timeout_s
        while not _answers(url):
            if process.poll() is not None:
                raise RuntimeError(f"app.py exited with code {process.returncode} before answering:\n"
                                   f"{app.log_text()[-4000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"app.py did not answer on {url} within {timeout_s:.0f} s:\n"
                                   f"{app.log_text()[-4000:]}")
            time.sleep(0.5)
        yield app
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


@contextlib.contextmanager
def running_app_with(home: Path, people: dict[str, Path]) -> Iterator[RunningApp]:
    """`running_app` on a gallery where `people` (name -> photo) were enrolled before the app started, so the page
    reads the same gallery the test filled."""
    from facerec import Gallery

    with Gallery.open(home=home) as gallery:
        for name, photo in people.items():
            gallery.enroll(photo, name, allow_low_quality=True)
    with running_app(home) as running:
        yield running
