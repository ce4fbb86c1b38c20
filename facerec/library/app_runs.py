"""The app's photo library (FACEREC_LIBRARY): grouped into people on the admin's word, from the page or REST (#66).

The run is `facerec identify LIBRARY/ --group` itself, in a child process on one worker (`WORKERS`), so the app
keeps answering while a library of thousands of photos is identified, a crash of the run is not the server's, and
its memory is the CLI's (measured in docs/results.md) and is given back when it ends. Its files are under the
gallery's home (`HOME/library/library.*`, owner-only, as the CLI writes them); the same command run by hand or from
cron with that `--out` is the same run, resumed. Setting FACEREC_LIBRARY is the operator's opt-in to keeping
embeddings of the library's faces nobody enrolled matches, for at most `groups_file.KEEP_DAYS` days (as `--group`
is); in privacy
mode (FACEREC_STORE_CROPS=off) no library is grouped.

One run at a time: a run holds an exclusive lock on `HOME/library/run.lock` while it lasts (other app processes on
this machine see it too), and `HOME/library/run.json` says when it started, when it ended, how many files it had
answered and its one-line problem, if any.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from facerec.errors import Busy, InvalidArgument
from facerec.library.files import library_files, replacing
from facerec.library.groups_file import GroupsFile
from facerec.settings import Settings

WORKERS = 1  # the run's identification threads: the app's own requests keep the other cores


class LibraryRuns:
    """The configured library, its run (start one, read how it stands) and its groups (`groups`)."""

    def __init__(self, settings: Settings) -> None:
        self.folder = Path(settings.library) if settings.library else None
        self._settings = settings
        self._place = Path(settings.home) / "library"
        self.groups = GroupsFile(self._place / "library")
        self._lock_path = self._place / "run.lock"
        self._status_path = self._place / "run.json"

    def why_off(self) -> str | None:
        """Why the app groups no library (None: it may)."""
        if self.folder is None:
            return ("no library is set: start the app with FACEREC_LIBRARY=/path/to/photos to group a photo "
                    "library here")
        if not self._settings.store_crops:
            return "privacy mode (FACEREC_STORE_CROPS=off) keeps no faces of people not enrolled: no library is grouped"
        if not self.folder.is_dir():
            return f"the library folder FACEREC_LIBRARY names ({self.folder.name}) is not a folder this app can read"
        return None

    def start(self) -> dict:
        """Start a run in the background and say how it stands; Busy while one runs, InvalidArgument when off."""
        why = self.why_off()
        if why:
            raise InvalidArgument(why)
        self._place.mkdir(parents=True, exist_ok=True)
        handle = open(self._lock_path, "a")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise Busy("the library is being grouped already: its groups are shown when the run ends") from None
        total = len(library_files(self.folder, set()))
        self._write({"started_at": time.time(), "finished_at": None, "files": total, "problem": None})
        threading.Thread(target=self._run, args=(handle, total), name="library-run", daemon=True).start()
        return self.status()

    def status(self) -> dict:
        """{"on", "off_because", "running", "files", "answered", "started_at", "finished_at", "problem"}: files the
        last run found and files answered so far (the groups: `groups.shown()`)."""
        why = self.why_off()
        state = self._read()
        progress = self.groups.out.with_name("library.progress.jsonl")
        answered = sum(1 for _ in open(progress, "rb")) if progress.is_file() else 0
        return {"on": why is None, "off_because": why, "running": self._running(), "files": state.get("files"),
                "answered": answered, "started_at": state.get("started_at"), "finished_at": state.get("finished_at"),
                "problem": state.get("problem")}

    def _run(self, handle, total: int) -> None:
        """The child process, start to end; the lock is let go when it ends, however it ends."""
        problem = None
        try:
            log = self._place / "run.log"  # the run's progress bar and its one-line problem, if any
            with open(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as errors:
                done = subprocess.run(
                    [sys.executable, "-m", "facerec.cli", "identify", str(self.folder), "--group", "--out",
                     str(self.groups.out), "--workers", str(WORKERS), "--home", str(self._settings.home)],
                    stdout=subprocess.DEVNULL, stderr=errors, stdin=subprocess.DEVNULL)
            if done.returncode:
                lines = [line for line in re.split(r"[\r\n]", log.read_text(errors="replace")) if line.strip()]
                problem = lines[-1][:300] if lines else f"the run ended with status {done.returncode}"
        except OSError as error:
            problem = f"the run could not start: {error}"[:300]
        finally:
            self._write({**self._read(), "finished_at": time.time(), "files": total, "problem": problem})
            handle.close()  # the lock goes with it

    def _running(self) -> bool:
        if not self._lock_path.is_file():
            return False
        with open(self._lock_path, "a") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return False

    def _read(self) -> dict:
        try:
            return json.loads(self._status_path.read_text())
        except (OSError, ValueError):
            return {}

    def _write(self, state: dict) -> None:
        with replacing(self._status_path) as handle:
            json.dump(state, handle)
