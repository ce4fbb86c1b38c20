"""Memory and CPU of one video request at the stated maxima, through the REST API as a caller sends it (#50).

    nice -n 5 python benchmarks/video_request.py --data ../shared/data --out benchmarks/results/video_request.json

A clip at the largest a request may be by default (`Settings.video_max_frames` frames lasting
`Settings.video_max_seconds`, frames at `Settings.video_max_side` on their longer side, so none is shrunk) is built
from LFW photos (`tests/video_clips.py`): an enrolled person and a stranger, each moving across the whole clip, so
both are followed on every frame. `python app.py` runs on a gallery of the enrolled person; one read key posts a
short clip (the models load on the first request) and then the clip at the maxima to `/api/v1/videos/identify`. Measured on the app's process (`/proc/<pid>`): its resident memory before
the request and its peak (`VmHWM`, after the request: the high-water mark of the whole process), the largest
`VmRSS` sampled every 0.2 s during it, and the CPU seconds (user + system, every thread) the request cost; the wall
time as the client saw it. `--frames`/`--side` measure a smaller clip instead (to try the script).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from app_server import running_app  # noqa: E402 - starts app.py the way the tests do
from video_clips import Path2D, clip  # noqa: E402 - the clips the tests build

from facerec.access.api_keys import ApiKeys  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

ENROLLED, STRANGER = "Andre_Agassi", "Andy_Griggs"


def memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of every thread of `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--frames", type=int, help="default: Settings.video_max_frames")
    parser.add_argument("--side", type=int, help="the frames' longer side; default: Settings.video_max_side")
    parser.add_argument("--clip", help="keep the clip here (written once, reused when it exists: ~2 min to write)")
    parser.add_argument("--out")
    args = parser.parse_args()
    settings = Settings()
    frames = args.frames or settings.video_max_frames
    fps = frames / settings.video_max_seconds if args.frames is None else 30.0
    width = args.side or settings.video_max_side
    height = round(width * 9 / 16)
    lfw = Path(args.data) / "lfw"
    photo = lambda name, index: lfw / name / f"{name}_{index:04d}.jpg"  # noqa: E731
    with tempfile.TemporaryDirectory() as folder:
        home, video = Path(folder) / "home", Path(args.clip or Path(folder) / "maxima.mp4")
        started = time.perf_counter()
        if not video.is_file():
            clip(video, [Path2D(photo(ENROLLED, 2), (0.15, 0.3), (0.45, 0.7), side=height // 3),
                         Path2D(photo(STRANGER, 1), (0.85, 0.7), (0.55, 0.3), side=height // 3)],
                 frames=frames, fps=fps, size=(width, height))
        megabytes = video.stat().st_size / 1e6
        print(f"clip: {frames} frames of {width} x {height} at {fps:g} fps, {megabytes:.1f} MB, "
              f"written in {time.perf_counter() - started:.0f} s", flush=True)
        warm = clip(Path(folder) / "warm.mp4", [Path2D(photo(ENROLLED, 2), (0.3, 0.5), (0.7, 0.5))], frames=30)
        with Gallery(Settings.from_env(home=home)) as gallery:
            gallery.enroll(photo(ENROLLED, 1), "Andre Agassi", allow_low_quality=True)
            _, key = ApiKeys(parts_of(gallery).store).create("read", "video request benchmark")
            parts_of(gallery).index.save(gallery.services().settings.home, gallery.services().maintenance.model_id, parts_of(gallery).store)
        with running_app(home) as app, httpx.Client(base_url=f"{app.url}api/v1", timeout=3600,
                                                    trust_env=False, headers={"X-API-Key": key}) as client:
            pid = app.process.pid
            with open(warm, "rb") as handle:  # the models load on the first request: not this one's cost
                client.post("/videos/identify", files={"video": (warm.name, handle, "video/mp4")}).raise_for_status()
            before, cpu_before = memory_kb(pid), cpu_seconds(pid)
            sampled, done = [before["VmRSS"]], threading.Event()

            def sample() -> None:
                while not done.wait(0.2):
                    sampled.append(memory_kb(pid)["VmRSS"])

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            started = time.perf_counter()
            with open(video, "rb") as handle:
                response = client.post("/videos/identify", files={"video": (video.name, handle, "video/mp4")})
            wall = time.perf_counter() - started
            done.set()
            sampler.join()
            cpu, after = cpu_seconds(pid) - cpu_before, memory_kb(pid)
        if response.status_code != 200:
            raise SystemExit(f"the request was refused: {response.status_code} {response.text}")
        answer = response.json()
    tracks = [{k: t[k] for k in ("name", "first_frame", "last_frame", "frames_seen", "views")}
              for t in answer["tracks"]]
    result = {"command": "python " + " ".join(sys.argv),
              "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                          "load_average_at_start": [round(v, 2) for v in os.getloadavg()]},
              "clip": {"frames": frames, "fps": fps, "width": width, "height": height,
                       "megabytes": round(megabytes, 1),
                       "seconds": answer["video"]["seconds"]},
              "limits": {"max_seconds": settings.video_max_seconds, "max_frames": settings.video_max_frames,
                         "max_side": settings.video_max_side, "max_bytes": settings.video_max_bytes},
              "rss_before_mb": round(before["VmRSS"] / 1024, 1), "peak_rss_mb": round(after["VmHWM"] / 1024, 1),
              "largest_sampled_rss_mb": round(max(sampled) / 1024, 1), "cpu_seconds": round(cpu, 1),
              "wall_seconds": round(wall, 1), "seconds_taken": answer["seconds_taken"],
              "counts": answer["counts"], "detected_every": answer["detected_every"], "tracks": tracks}
    print({k: result[k] for k in ("rss_before_mb", "peak_rss_mb", "largest_sampled_rss_mb", "cpu_seconds",
                                  "wall_seconds")}, tracks, flush=True)
    if args.out:
        write_result(args.out, result, settings.model_path, None)


if __name__ == "__main__":
    main()
