"""Hardening round 5's rows measured on the running app (#63 rows 6 and 7), for `benchmarks/hardening_round5.py`,
which runs each in a fresh process and says how: the app started as the tests start it (`tests/app_server.py`),
driven by a real browser (row 6) or by raw REST uploads (row 7)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from facerec.settings import Settings  # noqa: E402


def web_cache_files(pid: int, home: Path) -> dict[str, int]:
    """Every file under the app's web cache with its size: GRADIO_TEMP_DIR where the app was given one (the tests'
    `running_app` gives it `<home>-gradio-tmp`), else `run-<pid>` in /dev/shm or in the gallery folder."""
    found = {}
    for folder in (home.with_name(home.name + "-gradio-tmp"), Path(f"/dev/shm/facerec-{os.getuid()}/run-{pid}"),
                   home / "webcache" / f"run-{pid}"):
        for path in folder.rglob("*"):
            with contextlib.suppress(OSError):
                if path.is_file():
                    found[str(path)] = path.stat().st_size
    return found


def row_6(scratch: Path, data: Path, seconds: float = 60.0) -> dict:
    from app_server import running_app_with
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, VIEWPORT, expect, open_tab
    from hostile_videos import crowd_clip
    from playwright.sync_api import sync_playwright
    from video_clips import y4m

    portraits = ROOT / "tests" / "faces" / "Barack_Obama"
    photos = sorted(portraits.glob("*.jpg"))
    feed = y4m(scratch / "camera.y4m", photos[-1], frames=40)
    video = crowd_clip(scratch / "crowd.mp4", data / "lfw")
    seen: dict[str, int] = {}
    with running_app_with(scratch / "home", {"Barack Obama": photos[0]}) as app, sync_playwright() as playwright:
        def sample() -> None:
            seen.update(web_cache_files(app.process.pid, app.home))
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS + [
            "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
            f"--use-file-for-fake-video-capture={feed}"])
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(app.url)
        sample()
        uploads = set(seen)  # the page's own (none yet, or Gradio's start-up files)
        panel = open_tab(page, "Live")
        panel.locator("#live-camera").get_by_text("Click to Access Webcam").click()
        panel.locator("#live-camera").get_by_role("button", name="capture photo").click()
        expect(page.locator("#live-status")).to_contain_text("Barack Obama")
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            sample()
            time.sleep(0.5)
        live_status = page.locator("#live-status").inner_text()
        live_files = {path: size for path, size in seen.items() if path not in uploads}
        panel = open_tab(page, "Identify")
        panel.locator("#identify-video input[type=file]").set_input_files(str(video))
        expect(panel.locator("#identify-video video")).to_have_count(1)
        panel.get_by_role("button", name="Identify video", exact=True).click()
        while not page.locator("#video-faces img").count():
            sample()
            time.sleep(0.5)
        sample()
        faces_shown = page.locator("#video-faces img").count()
        inline = sum((image.get_attribute("src") or "").startswith("data:")
                     for image in page.locator("#video-faces img").all())
        browser.close()
    video_files = {path: size for path, size in seen.items() if path not in uploads and path not in live_files}
    pictures = (".png", ".jpg", ".jpeg", ".webp", ".bmp")

    def described(files: dict[str, int]) -> dict:
        images = [size for path, size in files.items() if path.lower().endswith(pictures)]
        return {"files": len(files), "bytes": sum(files.values()), "image_files": len(images),
                "image_bytes": sum(images), "names": sorted(Path(p).name for p in files)[:20]}
    return {"live_seconds": seconds, "live_status": " ".join(live_status.split())[:160],
            "live": described(live_files), "video_bytes": video.stat().st_size, "video_faces_shown": faces_shown,
            "video_faces_inline": inline, "video": described(video_files)}


def used_bytes(folder: str) -> int:
    """Bytes in use on the filesystem holding `folder` (the shared machine's other work is noise, small here)."""
    stats = os.statvfs(folder)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def row_7(scratch: Path, _data: Path, clients: int = 12, megabytes: int = 100) -> dict:
    """`clients` REST video uploads of `megabytes` each at once with a read key, on the app as it runs by default
    (its own upload quota); /tmp's and /dev/shm's use sampled every 0.1 s; then a page upload of a photo."""
    import socket

    import httpx
    from app_server import running_app

    from facerec.gallery import Gallery

    home = scratch / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(ROOT / "tests/faces/Barack_Obama/Barack_Obama_0001.jpg", "Barack Obama")
    created = subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "read", "--json",
                              "--home", str(home)], capture_output=True, text=True, timeout=120, check=True,
                             cwd=ROOT)
    key = json.loads(created.stdout)["key"]
    chunk = os.urandom(1 << 20)
    statuses: list[str] = []
    with running_app(home) as app:
        base = {folder: used_bytes(folder) for folder in ("/tmp", "/dev/shm")}
        peaks = dict(base)

        def upload() -> None:
            body_head = (b"--x\r\nContent-Disposition: form-data; name=\"video\"; filename=\"a.mp4\"\r\n"
                         b"Content-Type: video/mp4\r\n\r\n")
            tail = b"\r\n--x--\r\n"
            length = len(body_head) + megabytes * len(chunk) + len(tail)
            head = (f"POST /api/v1/videos/identify HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n"
                    f"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: {length}\r\n\r\n")
            try:
                with socket.create_connection(("127.0.0.1", app.port), timeout=600) as connection:
                    connection.sendall(head.encode() + body_head)
                    for _ in range(megabytes):
                        connection.sendall(chunk)
                    connection.sendall(tail)
                    answer = connection.recv(200).decode("latin-1")
                statuses.append(answer.split("\r\n", 1)[0].split(" ", 2)[1] if answer else "closed")
            except OSError as error:  # the server answered early and closed: the status came before our body
                statuses.append(f"closed early ({type(error).__name__})")
        threads = [threading.Thread(target=upload) for _ in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            for folder in peaks:
                peaks[folder] = max(peaks[folder], used_bytes(folder))
            time.sleep(0.1)
        seconds = time.perf_counter() - started
        photo = (ROOT / "tests/faces/Barack_Obama/Barack_Obama_0002.jpg").read_bytes()
        page = httpx.post(app.url + "gradio_api/upload", files={"files": ("p.jpg", photo, "image/jpeg")}, timeout=60)
    counted: dict[str, int] = {}
    for status in statuses:
        counted[status] = counted.get(status, 0) + 1
    return {"clients": clients, "megabytes_each": megabytes, "statuses": counted, "seconds": round(seconds, 1),
            "tmp_added_mb": round((peaks["/tmp"] - base["/tmp"]) / 1e6),
            "shm_added_mb": round((peaks["/dev/shm"] - base["/dev/shm"]) / 1e6),
            "page_upload_after": page.status_code}
