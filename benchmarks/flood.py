"""A bounded flood: 8 anonymous clients send the costliest inputs for 60 s while a ninth identifies normally.

    nice -n 5 python benchmarks/flood.py --out benchmarks/results/flood.json     # ~3 min on 2 cores

The real app (`app.py`, a temporary gallery of 100 LFW people, an admin password set) serves, on this machine:
- 8 anonymous clients, each cycling through what cost the most in the third and fourth hardening rounds: a
  1,440 px mosaic of 144 faces and an 87 kB 16-bit PNG of 40 megapixels identified through the web app's API
  (Gradio's queue, as a browser would), an EPS file (Ghostscript bait), a 60-file upload, a keyless REST identify
  that announces 30 MB, a WebP and a JPEG of 40 megapixels in a few dozen and a few hundred kB (made at run time:
  a flat picture with a patch of noise) identified through the web app's API, and the page's own upload event
  (Add photo's `received`, which needs no password and keeps the decoded photo for its page) with one of those
  two, each time in a new anonymous page session; and those of the fifth round: the page's Identify video (an
  upload, then the page's event) with the worst videos of `tests/hostile_videos.py` (a crowd of 60 faces, 1,800
  VP9 frames of 40 megapixels, 395 of 4K, a small first frame then 16,000 x 16,000 ones), and the Live tab's
  camera event with an EPS frame and a 13,300 x 13,300 PNG sent inline as the page would;
- a ninth client with a read API key identifying one ordinary LFW photo over the REST API, one call at a time.
The result: the ninth client's latency (p50, p99, max), its errors, what the attackers got (answers and refusals
by kind), and the app's resident memory (its peak, `VmHWM`, and the largest `VmRSS` sampled). Bounds from
SECURITY.md: p99 <= 2 s and RSS <= 2 GB (1.5 GB before videos and camera frames were among the inputs).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from facerec.datasets.folders import list_identities  # noqa: E402
from facerec.faces.choice import largest_face_index  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n{ } loop\n"
PASSWORD = "flood"


def mosaic(people: list[list[Path]], side: int = 12) -> bytes:
    tiles = [np.asarray(Image.open(photos[0]).convert("RGB"))[65:185, 65:185] for photos in people]
    grid = np.vstack([np.hstack([tiles[(r * side + c) % len(tiles)] for c in range(side)]) for r in range(side)])
    buffer = io.BytesIO()
    Image.fromarray(grid).save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def sixteen_bit_png() -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.full((6324, 6324), 40000, np.uint16)).save(buffer, "PNG")
    return buffer.getvalue()


def forty_megapixels(format: str) -> bytes:
    """A 7,300 x 5,479 photo (just under 40 MP, the pixel limit): flat grey with a 130 px patch of noise, so it
    is small on the wire (WebP ~90 kB, JPEG ~600 kB) and 120 MB once decoded."""
    picture = Image.new("RGB", (7300, 5479), (128, 120, 110))
    noise = np.random.default_rng(6).integers(0, 255, (130, 130, 3), dtype=np.uint8)
    picture.paste(Image.fromarray(noise), (1000, 1000))
    buffer = io.BytesIO()
    picture.save(buffer, format, **({"quality": 50, "method": 4} if format == "WEBP" else {"quality": 85}))
    return buffer.getvalue()


def page_event(http, url: str, event: dict, data: list, session: str, stream_event: bool = False) -> str:
    """Run one of the page's own events (`/gradio_api/queue/join`, as the page sends it) in `session`; how it
    ended: "answered", or "refused: " and why. A `stream_event` (the Live tab's camera) stays open for the next
    frame: its first answer to the frame ends the wait (the stream is then closed by closing the request)."""
    joined = http.post(f"{url}gradio_api/queue/join", json={"data": data, "fn_index": event["id"],
                                                            "session_hash": session, "event_data": None,
                                                            "trigger_id": (event["targets"] or [[None]])[0][0]})
    if joined.status_code != 200:
        return f"refused: {joined.status_code}"
    deadline = time.perf_counter() + 30  # a camera frame dropped while the server is busy is never answered
    with http.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if stream_event and time.perf_counter() > deadline:
                return "dropped (no answer in 30 s)"
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if stream_event and message.get("msg") in ("process_streaming", "process_generating"):
                said = re.sub(r"<[^>]+>", "", json.dumps(message.get("output", {})).replace("\\", ""))
                refused = re.search(r"A frame was not followed: ([^.]*)", said)
                return "refused: " + refused.group(1)[:70] if refused else "answered"
            if message.get("msg") == "process_completed":
                said = re.sub(r"<[^>]+>", "", json.dumps(message.get("output", {})).replace("\\", ""))
                if message.get("success") and "Error:" not in said:
                    return "answered"
                return "refused: " + " ".join(said.split("Error:", 1)[-1].split())[:70]
    return "refused: never answered"


def memory_kb(pid: int) -> dict:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


KINDS = ("mosaic", "sixteen_bit", "eps", "many_files", "keyless_30mb", "webp_40mp", "jpeg_40mp", "page_session",
         "video_crowd", "video_bomb_40mp", "video_bomb_4k", "video_growing", "live_eps", "live_png_bomb")
IDENTIFIED = ("mosaic", "sixteen_bit", "eps", "webp_40mp", "jpeg_40mp")  # sent to the page's /identify
VIDEOS = ("video_crowd", "video_bomb_40mp", "video_bomb_4k", "video_growing")  # to the page's Identify video
LIVE = ("live_eps", "live_png_bomb")  # sent as the Live tab's camera frames (inline, as data: URLs)


def videos(folder: Path, lfw: Path) -> dict[str, Path]:
    """The worst videos of hardening round 5 (tests/hostile_videos.py), made once into `folder` and kept there:
    a crowd of 60 faces in 180 frames (row 4), 1,800 VP9 frames of 40 megapixels (row 5), 395 VP9 frames of 4K
    (the most decoding an anonymous video may ask for now), a small first frame and then 16,000 x 16,000 ones
    (row 9)."""
    from hostile_videos import crowd_clip, decompression_bomb, growing_frames

    made = {"video_crowd": ("crowd.mp4", lambda out: crowd_clip(out, lfw)),
            "video_bomb_40mp": ("bomb.avi", decompression_bomb),
            "video_bomb_4k": ("bomb-4k.webm", lambda out: decompression_bomb(out, (4096, 2304), 395, format="webm")),
            "video_growing": ("growing.avi", lambda out: growing_frames(out, frames=4))}
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in made.values():
        if not (folder / name).exists():
            make(folder / f"partial-{name}").rename(folder / name)
    return {kind: folder / name for kind, (name, _make) in made.items()}


def live_frames() -> dict[str, str]:
    """The Live tab's worst frames as the page would send them, inline: an EPS that loops for ever (row 1) and a
    515 kB PNG of 13,300 x 13,300 (row 2)."""
    import base64

    buffer = io.BytesIO()
    Image.new("L", (13_300, 13_300), 0).save(buffer, "PNG")
    eps = EPS
    return {"live_eps": "data:image/png;base64," + base64.b64encode(eps).decode(),
            "live_png_bomb": "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()}


def attacker(url: str, port: int, files: dict[str, Path], stop: threading.Event, tally: dict, lock,
             kinds: tuple[str, ...] = KINDS, first: int = 0) -> None:
    import httpx
    from gradio_client import Client

    client = Client(url, verbose=False, download_files=False)
    http = httpx.Client(timeout=120)
    dependencies = http.get(f"{url}config").json()["dependencies"]
    received = next(d for d in dependencies if d.get("api_name") == "received")
    live = next(d for d in dependencies if d.get("api_name") == "see")
    video_event = next(d for d in dependencies if d.get("api_name") == "identify_video")
    own = {}  # this client's own copies (Gradio stores uploads by their content: shared bytes, shared files)
    for kind, path in files.items():
        if kind in LIVE:  # inline frames: never stored
            own[kind] = path
            continue
        own[kind] = path.with_name(f"{threading.get_ident()}-{path.name}")
        own[kind].write_bytes(path.read_bytes() + os.urandom(16))  # bytes after the image's end, ignored
    files = own
    turn, sessions = first, 0  # each client starts at another kind: all of them are sent from the first seconds
    try:
        _attack(client, http, url, port, files, stop, tally, lock, kinds, turn, sessions, received, live, video_event)
    finally:  # this client's copies of the inputs
        for kind, path in files.items():
            if kind not in LIVE:
                path.unlink(missing_ok=True)


def _attack(client, http, url, port, files, stop, tally, lock, kinds, turn, sessions, received, live, video_event):
    """One attacker's loop: the next kind in turn until `stop`, each outcome counted in `tally`."""
    import httpx
    from gradio_client import handle_file

    while not stop.is_set():
        kind = kinds[turn % len(kinds)]
        turn += 1
        try:
            if kind in VIDEOS:  # the page's Identify video, as a browser sends it: the upload, then the event
                (path,) = http.post(f"{url}gradio_api/upload", files={"files": (files[kind].name,
                                                                                files[kind].read_bytes())}).json()
                outcome = page_event(http, url, video_event, [{"path": path, "orig_name": files[kind].name,
                                                               "meta": {"_type": "gradio.FileData"}}, "", 3, "", 1.0],
                                     uuid.uuid4().hex[:11])
            elif kind in LIVE:
                outcome = page_event(http, url, live, [{"url": files[kind], "path": None, "orig_name": "frame.png",
                                                        "meta": {"_type": "gradio.FileData"}}],
                                     uuid.uuid4().hex[:11], stream_event=True)
            elif kind in IDENTIFIED:
                files[kind].write_bytes(files[kind].read_bytes()[:-16] + os.urandom(16))  # a new upload each time
                client.predict(handle_file(str(files[kind])), None, 3, "", api_name="/identify")
                outcome = "answered"
            elif kind == "page_session":  # Add photo's upload event, in a page session of its own
                sessions += 1  # JPEG and WebP in turn, a JPEG first (its photo is kept for the page: 48 MB)
                chosen = files["webp_40mp" if sessions % 2 == 0 else "jpeg_40mp"]
                chosen.write_bytes(chosen.read_bytes()[:-16] + os.urandom(16))
                kind_of = "image/webp" if chosen.suffix == ".webp" else "image/jpeg"
                (path,) = http.post(f"{url}gradio_api/upload",
                                    files={"files": (chosen.name, chosen.read_bytes(), kind_of)}).json()
                outcome = page_event(http, url, received, [{"path": path, "orig_name": chosen.name,
                                                            "meta": {"_type": "gradio.FileData"}}],
                                     uuid.uuid4().hex[:11])
                outcome = re.sub(r"\b\d+-", "", outcome)  # without this client's file prefix
            elif kind == "many_files":
                many = [("files", (f"p{n}.jpg", b"x" * 15_000, "image/jpeg")) for n in range(60)]
                outcome = str(httpx.post(f"{url}gradio_api/upload", files=many, timeout=60).status_code)
            else:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
                    connection.sendall(b"POST /api/v1/identify HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/"
                                       b"form-data; boundary=x\r\nContent-Length: 31457280\r\n\r\n")
                    outcome = connection.recv(4096).decode("latin-1").split(" ", 2)[1]
        except Exception as error:  # noqa: BLE001 - a refusal is the expected answer to most of these
            said = re.sub(r"\b\d+-", "", " ".join(str(error).split()))  # without this client's file prefix
            outcome = "refused: " + said[:70]
        outcome = re.sub(r"\b\d+-", "", outcome)  # without this client's file prefix
        with lock:
            tally.setdefault(kind, {}).setdefault(outcome, 0)
            tally[kind][outcome] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--attackers", type=int, default=8)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS, help="the attacks sent (all)")
    parser.add_argument("--videos", type=Path, default=Path(tempfile.gettempdir()) / "facerec-video-bombs",
                        help="where the hostile videos are made once and kept (the 40-megapixel one: ~3 min)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import httpx

    from app_server import running_app

    people = [photos for photos in list_identities(args.data / "lfw").values() if len(photos) >= 2][:100]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        home = folder / "home"
        with Gallery(Settings(home=home)) as gallery:
            for photos in people:
                photo, faces = gallery.services().photos.detect(photos[0])
                gallery.enroll(photo, photos[0].parent.name.replace("_", " "), face_index=largest_face_index(faces),
                               allow_lookalike=True, allow_low_quality=True)
        key = json.loads(subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "read",
                                         "--json", "--home", str(home)], capture_output=True, text=True, check=True,
                                        cwd=ROOT).stdout)["key"]
        files = {"mosaic": folder / "mosaic.jpg", "sixteen_bit": folder / "scan.png", "eps": folder / "bait.eps",
                 "webp_40mp": folder / "forty.webp", "jpeg_40mp": folder / "forty.jpg"}
        files["mosaic"].write_bytes(mosaic(people))
        files["sixteen_bit"].write_bytes(sixteen_bit_png())
        files["eps"].write_bytes(EPS)
        files["webp_40mp"].write_bytes(forty_megapixels("WEBP"))
        files["jpeg_40mp"].write_bytes(forty_megapixels("JPEG"))
        sizes = {kind: path.stat().st_size for kind, path in files.items()}
        chosen = set(args.kinds)
        files.update({kind: path for kind, path in videos(args.videos, args.data / "lfw").items() if kind in chosen})
        sizes.update({kind: path.stat().st_size for kind, path in files.items() if kind in VIDEOS})
        frames = live_frames()
        files.update({kind: frame for kind, frame in frames.items() if kind in chosen})
        sizes.update({kind: len(frame) for kind, frame in frames.items() if kind in chosen})
        normal = people[0][1].read_bytes()
        with running_app(home, admin_password=PASSWORD) as app:
            stop, lock, tally = threading.Event(), threading.Lock(), {}
            threads = [threading.Thread(target=attacker, args=(app.url, app.port, files, stop, tally, lock,
                                                               tuple(args.kinds), number))
                       for number in range(args.attackers)]
            latencies, errors, peak_rss = [], [], 0
            with httpx.Client(timeout=120) as rest:
                for _ in range(3):  # warm-up, alone
                    rest.post(f"{app.url}api/v1/identify", headers={"X-API-Key": key},
                              files={"photo": ("normal.jpg", normal, "image/jpeg")})
                alone = []
                for _ in range(20):
                    started = time.perf_counter()
                    rest.post(f"{app.url}api/v1/identify", headers={"X-API-Key": key},
                              files={"photo": ("normal.jpg", normal, "image/jpeg")})
                    alone.append(time.perf_counter() - started)
                for thread in threads:
                    thread.start()
                deadline = time.perf_counter() + args.seconds
                while time.perf_counter() < deadline:
                    started = time.perf_counter()
                    answer = rest.post(f"{app.url}api/v1/identify", headers={"X-API-Key": key},
                                       files={"photo": ("normal.jpg", normal, "image/jpeg")})
                    latencies.append(time.perf_counter() - started)
                    if answer.status_code != 200:
                        errors.append(answer.status_code)
                    peak_rss = max(peak_rss, memory_kb(app.process.pid).get("VmRSS", 0))
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
            memory = memory_kb(app.process.pid)
    seconds = np.array(latencies)
    write_result(args.out, {
        "question": "does a normal identify keep answering while 8 anonymous clients send the costliest inputs?",
        "attackers": args.attackers, "seconds": args.seconds, "kinds": args.kinds, "gallery_people": len(people),
        "input_bytes": sizes,
        "ninth_client": {"route": "REST /api/v1/identify, read key, one face", "identifies": len(latencies),
                         "errors": errors, "p50_s": float(np.percentile(seconds, 50)),
                         "p99_s": float(np.percentile(seconds, 99)), "max_s": float(seconds.max()),
                         "alone_p50_s": float(np.median(alone))},
        "attacks": tally,
        "app_memory": {"peak_rss_mb": memory.get("VmHWM", 0) / 1024, "largest_sampled_rss_mb": peak_rss / 1024},
        "bounds": {"p99_s": 2.0, "rss_mb": 2048},
    }, model_path=Settings().model_path, threads=None)
    print(json.dumps(json.loads(Path(args.out).read_text())["ninth_client"], indent=1))


if __name__ == "__main__":
    main()
