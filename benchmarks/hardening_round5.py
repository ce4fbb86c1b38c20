"""Hardening round 5's other findings (#63 rows 1, 2, 3, 4, 6, 7, 8 and 10), measured again as the red team
measured them, on today's code. Rows 5 and 9 are `benchmarks/video_bombs.py`; the flood is `benchmarks/flood.py`.

    python benchmarks/hardening_round5.py --data ../shared/data --out benchmarks/results/hardening_round5.json   # ~10 min

Each row runs in a fresh process (`--row NAME`), so its CPU seconds (its own and its children's) and its resident
peak (`VmHWM`, reset just before) are its own:
1. Live frames of EPS (1 KB, eight at once, inline as a `data:` URL and as a file), through the Live tab's camera
   input, with a `gs` on PATH that records each start (the red team's Ghostscript ran 20.5 CPU-s a frame).
2. Live frames of a real 13,300 x 13,300 PNG (all its pixels compressed in, not only a header), three at once.
3. A cross-fade: an enrolled person's face turning in place into a stranger's, one track, confirmed as the person
   by the admin; the stranger's 20 other LFW photos identified before and after (two pairs, the issue's).
4. An anonymous video of 50 different faces on every frame, 60 frames of 1280 x 720, followed and drawn as the page
   does (`video_bombs.measure_one`): CPU seconds, tracks.
6. The app (`python app.py`) in a real browser: a fake camera streaming to the Live tab for a minute, then a crowd
   video identified in the Identify tab; every file that appears in the app's web cache, sampled each 0.5 s.
7. Twelve REST video uploads of 100 MB at once with a read key, on the app with its default upload quota: the
   answers, /tmp's and /dev/shm's growth (sampled each 0.1 s), and a page upload afterwards.
8. `facerec identify file:` and `facerec identify http:` in a photo library whose folders have those names, each
   holding a face-less clip at a path that is also a URL to a clip with a face (a file outside the folder; a local
   HTTP server counting its requests).
10. Row 4's video identified with suggestions on: the faces kept in the strangers memory before and after.

`FOUND` quotes what the issue measured on 8d20703, beside each row's measurement now.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.server
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

FOUND = {  # the table (#63), measured on main @8d20703
    "1": "one EPS frame: Ghostscript ran 20.5 CPU-s; eight at once: 8 Ghostscript processes, 252 CPU-s",
    "2": "one 13,300 x 13,300 PNG frame: resident +1,681 MB; three at once: 409 -> 5,555 MB",
    "3": "Vladimir Putin's photos named Donald Rumsfeld 0/20 -> 19/20 after one confirmation "
         "(Jacques Chirac -> George W Bush 0/20 -> 14/20)",
    "4": "a 2.8 MB, 60-frame video of 50 changing faces per frame: 442 CPU-s, 652 tracks",
    "6": "8 fake cameras for 330 s: 590 MB of frames written to the web cache; one video left 652 face files",
    "7": "REST video uploads (a read key) written whole before waiting, in any number: +1,006 MB in /dev/shm and "
         "+1,006 MB in /tmp; page uploads meanwhile 507",
    "8": "decoded a video outside the folder (past the symlink guard) and fetched one over HTTP",
    "10": "2 -> 647 kept faces from one 2.8 MB request",
}
EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n"
       b"/loop { loop } def 0 0 moveto 10 10 lineto stroke\nshowpage\n%%EOF\n")
PAIRS = (("Donald_Rumsfeld", "Vladimir_Putin"), ("George_W_Bush", "Jacques_Chirac"))  # (enrolled, stranger)


# ----- what a row measures, in its own process ---------------------------------------------------------------------
def peak_kb() -> int:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM"))
    return int(line.split()[1])


@contextlib.contextmanager
def metered(into: dict):
    """Fill `into` with the CPU seconds of this process and its children, the wall seconds and the resident peak's
    rise while the block runs."""
    Path("/proc/self/clear_refs").write_text("5")
    before, wall = peak_kb(), time.perf_counter()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    yield
    own2, children2 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    into.update(cpu_s=round(own2.ru_utime + own2.ru_stime - own.ru_utime - own.ru_stime, 2),
                children_cpu_s=round(children2.ru_utime + children2.ru_stime - children.ru_utime - children.ru_stime, 2),
                wall_s=round(time.perf_counter() - wall, 2), rss_before_mb=round(before / 1024),
                rss_added_mb=round((peak_kb() - before) / 1024))


def frames_at_once(payloads: list) -> list[str]:
    """Each payload through the Live tab's camera input on its own thread, as the tab's concurrent frames are."""
    from facerec.ui.camera_input import CameraFrameInput
    from facerec.ui.uploads import Unreadable

    camera = CameraFrameInput(sources=["webcam"], streaming=True, type="numpy", image_mode="RGB")
    outcomes: list[str] = [""] * len(payloads)

    def one(index: int) -> None:
        value = camera.preprocess(payloads[index])
        outcomes[index] = f"refused: {value.message}" if isinstance(value, Unreadable) else "decoded"
    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(payloads))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def row_1(scratch: Path, _data: Path) -> dict:
    from gradio.data_classes import FileData

    record = scratch / "gs-starts"
    (scratch / "bin").mkdir()
    (scratch / "bin" / "gs").write_text(f"#!/bin/sh\necho started >> '{record}'\nexit 1\n")
    (scratch / "bin" / "gs").chmod(0o755)
    os.environ["PATH"] = f"{scratch / 'bin'}:{os.environ['PATH']}"
    inline = FileData(url=f"data:image/x-eps;base64,{base64.b64encode(EPS).decode()}", path="frame")
    files = []
    for index in range(4):
        (scratch / f"frame{index}.eps").write_bytes(EPS)
        files.append(FileData(path=str(scratch / f"frame{index}.eps"), orig_name=f"frame{index}.eps"))
    frames_at_once([FileData(url="data:image/png;base64," + base64.b64encode(png_bomb(64)).decode(), path="f")])
    row: dict = {}
    with metered(row):  # after a first ordinary frame: the imports and the decoder's start are not the EPS's
        outcomes = frames_at_once([inline] * 4 + files)
    starts = len(record.read_text().splitlines()) if record.exists() else 0
    left = sum((scratch / f"frame{index}.eps").exists() for index in range(4))
    return {**row, "frames": len(outcomes), "outcomes": sorted(set(outcomes)), "ghostscript_starts": starts,
            "frame_files_left": left}


def png_bomb(side: int = 13_300) -> bytes:
    """A real grey PNG of side x side pixels, every row compressed in (made row by row: 177 MB never held)."""
    import struct

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    squeeze, row, parts = zlib.compressobj(9), b"\x00" + b"\x80" * side, []
    for _ in range(side):
        parts.append(squeeze.compress(row))
    parts.append(squeeze.flush())
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b""))


def row_2(_scratch: Path, _data: Path) -> dict:
    from gradio.data_classes import FileData

    bomb = png_bomb()
    frame = FileData(url=f"data:image/png;base64,{base64.b64encode(bomb).decode()}", path="frame")
    frames_at_once([FileData(url="data:image/png;base64," + base64.b64encode(png_bomb(64)).decode(), path="f")])
    row: dict = {}
    with metered(row):
        outcomes = frames_at_once([frame] * 3)
    return {**row, "png_bytes": len(bomb), "frames": 3, "outcomes": sorted(set(outcomes))}


def lfw_photo(data: Path, person: str, index: int) -> Path:
    return sorted((data / "lfw" / person).glob("*.jpg"))[index - 1]


def row_3(scratch: Path, data: Path) -> dict:
    from video_clips import cross_fade_clip

    from facerec.gallery import Gallery

    pairs = []
    for enrolled, stranger in PAIRS:
        name = enrolled.replace("_", " ")
        video = cross_fade_clip(scratch / f"{enrolled}.mp4", lfw_photo(data, enrolled, 1), lfw_photo(data, stranger, 1))
        with Gallery(Settings(home=scratch / f"home-{enrolled}")) as gallery:
            gallery.enroll(lfw_photo(data, enrolled, 2), name)
            for other in ("Alan_Ball", "Biljana_Plavsic"):
                gallery.enroll(lfw_photo(data, other, 1), other.replace("_", " "), allow_low_quality=True)

            def named() -> int:
                answers = [gallery.identify(lfw_photo(data, stranger, i), remember=False) for i in range(2, 22)]
                return sum(max(faces, key=lambda m: m.face.width).name == name for faces in answers if faces)
            before = named()
            tracks = [t for t in gallery.identify_video(video).tracks if t.name == name]
            for track in tracks:
                gallery.services().feedback.confirm(track.match.sighting_id, learn_by="admin password")
            pairs.append({"enrolled": name, "stranger": stranger.replace("_", " "), "tracks_confirmed": len(tracks),
                          "stranger_photos": 20, "named_before": before, "named_after": named()})
    return {"pairs": pairs}


def changing_crowd(out: Path, data: Path, faces_per_frame: int = 50, frames: int = 60) -> Path:
    """Every frame a new set of `faces_per_frame` LFW faces on a 10 x 5 grid (1280 x 720), moved half a cell every
    other frame: no face is seen twice, and none appears where the last one was.
    Each is the middle of its photo (the face, 120 px of 250), so the detector finds most of them."""
    from PIL import Image
    from video_clips import Path2D, clip

    faces_folder = out.parent / "faces"
    faces_folder.mkdir(exist_ok=True)
    photos = []
    for index, photo in enumerate(sorted(data.glob("lfw/*/*.jpg"))[:faces_per_frame * frames]):
        photos.append(faces_folder / f"{index}.jpg")
        Image.open(photo).crop((65, 65, 185, 185)).save(photos[-1])
    columns, rows = 10, (faces_per_frame + 9) // 10
    faces = []
    for index, photo in enumerate(photos):
        frame, slot = divmod(index, faces_per_frame)
        shift = 0.5 * (frame % 2)  # every other frame the grid moves half a cell: no face takes over another's box
        place = (((slot % columns + 0.25 + shift) / columns), ((slot // columns + 0.25 + shift) / rows))
        faces.append(Path2D(photo, place, place, side=96, frames=(frame, frame)))
    return clip(out, faces, frames=frames, size=(1280, 720))


def row_4(scratch: Path, data: Path) -> dict:
    from video_bombs import measure_one

    video = changing_crowd(scratch / "crowd.mp4", data)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    answer = measure_one(str(video), str(scratch / "home"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"bytes": video.stat().st_size, **answer,
            "children_cpu_s": round(after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, 2)}


def row_10(scratch: Path, data: Path) -> dict:
    from facerec.gallery import Gallery
    from facerec.gallery.composition import parts_of

    video = changing_crowd(scratch / "crowd.mp4", data)
    with Gallery(Settings(home=scratch / "home", suggestions=True)) as gallery:
        gallery.enroll(lfw_photo(data, "Colin_Powell", 1), "Colin Powell")
        gallery.identify(lfw_photo(data, "Hugo_Chavez", 1))  # a stranger's photo: one kept face before the video
        memory = parts_of(gallery).strangers
        memory.settle()
        before = memory.count()
        answer = gallery.identify_video(video)
        memory.settle()
        return {"bytes": video.stat().st_size, "tracks": len(answer.tracks),
                "unknown_tracks": sum(t.name is None for t in answer.tracks),
                "kept_before": before, "kept_after": memory.count()}


class Counting(http.server.SimpleHTTPRequestHandler):
    requests = 0

    def do_GET(self):  # noqa: N802 - the base class's name
        Counting.requests += 1
        super().do_GET()

    def log_message(self, *args) -> None:
        pass


def row_8(scratch: Path, data: Path) -> dict:
    from video_clips import Path2D, clip

    from facerec.gallery import Gallery

    home = scratch / "home"
    with Gallery(Settings(home=home)) as gallery:
        gallery.enroll(lfw_photo(data, "Colin_Powell", 1), "Colin Powell")
    served = scratch / "served"
    served.mkdir()
    face = [Path2D(lfw_photo(data, "Colin_Powell", 2), (0.5, 0.5), (0.5, 0.5))]
    clip(served / "clip.mp4", face)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: Counting(*a, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    outside = clip(scratch / "outside.mp4", face)
    cases = {"file:": str(outside).lstrip("/"), "http:": f"/127.0.0.1:{server.server_address[1]}/clip.mp4"}
    results = []
    for folder, rest in cases.items():
        library = scratch / f"library-{folder.rstrip(':')}"
        inside = library / folder / rest.lstrip("/")
        inside.parent.mkdir(parents=True)
        clip(inside, [])  # the same name inside the folder: a plain background, no face
        done = subprocess.run([sys.executable, "-m", "facerec.cli", "identify", folder, "--out", "answers",
                               "--home", str(home), "--json"], capture_output=True, text=True, timeout=600,
                              cwd=library, env={**os.environ, "PYTHONPATH": str(ROOT)})
        entries = json.loads((library / "answers.json").read_text())["photos"] if done.returncode == 0 else []
        results.append({"folder": folder, "exit": done.returncode,
                        "faces_named": sum(len(e["faces"]) for e in entries),
                        "http_requests": Counting.requests if folder == "http:" else None})
    server.shutdown()
    return {"cases": results}


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


ROWS = {"1": row_1, "2": row_2, "3": row_3, "4": row_4, "6": row_6, "7": row_7, "8": row_8, "10": row_10}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS),
                        help="measure only these rows (the others keep their last measurement in --out)")
    parser.add_argument("--row", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.row:
        with tempfile.TemporaryDirectory() as scratch:
            print(json.dumps(ROWS[args.row](Path(scratch), args.data.resolve())))
        return
    results = []
    for row in args.rows:
        done = subprocess.run([sys.executable, __file__, "--row", row, "--data", str(args.data)], capture_output=True,
                              text=True)
        if done.returncode:
            raise SystemExit(f"row {row}: {done.stderr[-3000:]}")
        result = {"row": int(row), "found_on_8d20703": FOUND[row], "now": json.loads(done.stdout.strip().splitlines()[-1])}
        print(json.dumps(result), flush=True)
        results.append(result)
    if args.out:
        if args.out.exists() and set(args.rows) != set(ROWS):  # some rows again: the others' last measurement stays
            kept = [row for row in json.loads(args.out.read_text())["rows"] if str(row["row"]) not in args.rows]
            results = sorted(kept + results, key=lambda row: row["row"])
        write_result(args.out, {"rows": results}, Settings().model_path, None)


if __name__ == "__main__":
    main()
