"""Cameras watched (#67 must-show): how many 640x360, 15 fps cameras 2 cores keep up with, the latency from a face's
first frame to its event, memory per camera; face_recognition's example clip over RTSP in a loop; a reconnect after
the server restarts; a hung webhook.

    python benchmarks/cameras.py --hamilton DIR --out benchmarks/results/cameras.json

DIR holds face_recognition's `short_hamilton_clip.mp4`, `lin-manuel-miranda.png` and `alex-lacamoire.png`
(ageitgey/face_recognition @2e2dccea9dd0, examples/; fetched for the measurement, not committed).

1. Load: a 20 s clip made from the shipped public-domain portraits (tests/faces: Barack Obama, enrolled from another
   portrait, then Grace Hopper, Eileen Collins and Joe Biden, not enrolled, 4 s each with 1 s between), 640x360 at
   15 fps, encoded once as H.264 in a loop (`h264_loops`) and sent as it is, paced, by GStreamer's RTSP server
   (tests/rtsp_server.py --encoded: no encoder per client, so the server costs little however many connect). `facerec watch` with N cameras on it (N in --counts) for
   --seconds, recognition taking 5 frames a second from each (the default), `--leave-after 1`. A camera keeps up
   when recognition took at least 95% of its 5 frames a second, from its first frame to the end; frames the stream sent beyond those are dropped,
   counted, never queued. Latency: from the arrival of the first frame a track was seen on to its event. Memory:
   the watch process's peak resident set (VmHWM); per camera, the growth from 1 camera to the largest N. CPU: the
   process's CPU seconds over its wall time.
2. face_recognition's example clip over RTSP, looped in one session, its two example photos enrolled: arrivals by
   name, with `--leave-after` 10 (the default) and 1, each named arrival checked against who is on screen then
   (`hamilton`).
3. The server killed 5 s in and started again 3 s later: the seconds from its return to frames flowing again.
4. The load clip on 1 camera with a webhook that never answers, and with one that does: frames recognised, arrivals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

FACES = ROOT / "tests" / "faces"
SECRET = "benchmark secret"
DETECT_FPS = 5.0


def load_clip(out: Path) -> Path:
    from video_clips import Path2D, clip

    people = [FACES / "Barack_Obama" / "Barack_Obama_0003.jpg", FACES / "Grace_Hopper" / "Grace_Hopper_0001.jpg",
              FACES / "Eileen_Collins" / "Eileen_Collins_0001.jpg", FACES / "Joe_Biden" / "Joe_Biden_0001.jpg"]
    fps = 15
    return clip(out, [Path2D(photo, (0.35, 0.5), (0.65, 0.5), side=140, frames=(5 * i * fps, (5 * i + 4) * fps - 1))
                      for i, photo in enumerate(people)], frames=20 * fps, size=(640, 360), fps=fps)


def h264_loops(clip: Path, out: Path, loops: int) -> Path:
    """`clip` `loops` times back to back as one H.264 MP4 (GStreamer's gst-launch-1.0: concat, x264enc), so the
    RTSP server sends it as it is, paced, to each client on a pipeline of its own (no encoder per client)."""
    sources = [part for _ in range(loops) for part in ("filesrc", f"location={clip}", "!", "decodebin", "!", "c.")]
    subprocess.run(["gst-launch-1.0", "-q", "concat", "name=c", "!", "videoconvert", "!", "x264enc",
                    "speed-preset=fast", "key-int-max=15", "!", "h264parse", "!", "mp4mux", "!", "filesink",
                    f"location={out}", *sources], check=True, timeout=600)
    return out


def watch(home: Path, args: list[str], env: dict | None = None) -> tuple[dict, dict]:
    """Run `facerec watch ... --json`; (its answer, {"wall_seconds", "cpu_seconds", "peak_rss_mb"}), the last two
    read from /proc while it runs (VmHWM; utime + stime, last read at most 0.2 s before it ended)."""
    process = subprocess.Popen([sys.executable, "-m", "facerec.cli", "watch", *args, "--json", "--home", str(home)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    seen = {"peak_kb": 0, "ticks": 0}
    done = threading.Event()

    def poll() -> None:
        proc = Path(f"/proc/{process.pid}")
        while not done.wait(0.2):
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                seen["ticks"] = int(fields[11]) + int(fields[12])
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        seen["peak_kb"] = max(seen["peak_kb"], int(line.split()[1]))
            except (OSError, IndexError, ValueError):
                continue

    poller = threading.Thread(target=poll, daemon=True)
    started = time.monotonic()
    poller.start()
    out, err = process.communicate(timeout=900)
    wall = time.monotonic() - started
    done.set()
    poller.join()
    if process.returncode:
        raise SystemExit(err[-3000:])
    return json.loads(out), {"wall_seconds": round(wall, 1),
                             "cpu_seconds": round(seen["ticks"] / os.sysconf("SC_CLK_TCK"), 1),
                             "peak_rss_mb": round(seen["peak_kb"] / 1024)}


def enrolled_home(root: Path, people: dict[str, Path]) -> Path:
    from facerec.gallery import Gallery

    home = root / "home"
    with Gallery(Settings(home=home)) as gallery:
        for name, photo in people.items():
            gallery.enroll(photo, name, allow_low_quality=True)
    return home


def load(scratch: Path, counts: list[int], seconds: float) -> list[dict]:
    from camera_servers import rtsp_server

    home = enrolled_home(scratch / "load", {"Barack Obama": FACES / "Barack_Obama" / "Barack_Obama_0001.jpg"})
    rows = []
    clip = h264_loops(load_clip(scratch / "load.mp4"), scratch / "load-h264.mp4", int(seconds // 20) + 2)
    for count in counts:
        with rtsp_server(clip, encoded=True) as server:
            answer, usage = watch(home, [*(f"cam{i}={server.url}" for i in range(count)), "--leave-after", "1",
                                         "--seconds", str(seconds)])
            cameras = answer["cameras"]
            rates = [(c["frames_processed"] - 1) / max(c["recognising_seconds"], 1e-9) for c in cameras]
            latencies = sorted(v for c in cameras for v in c["latencies_s"])
            events = [e for c in cameras for e in c["recent_events"]]
            rows.append({"cameras": count, "seconds": seconds, "detect_fps": DETECT_FPS,
                         "processed_fps_min": round(min(rates), 2), "processed_fps_mean": round(sum(rates) / count, 2),
                         "keeping_up": sum(rate >= 0.95 * DETECT_FPS for rate in rates),
                         "frames_received": sum(c["frames_received"] for c in cameras),
                         "frames_dropped": sum(c["frames_dropped"] for c in cameras),
                         "stream_fps": cameras[0]["fps"], "arrivals": len(latencies),
                         "latency_p50_s": _q(latencies, 0.5), "latency_p99_s": _q(latencies, 0.99),
                         "named_wrongly": sum(1 for e in events if e["event"] == "arrived" and e["known"]
                                              and e["name"] != "Barack Obama"),
                         "cpu_share_of_2_cores": round(usage["cpu_seconds"] / (usage["wall_seconds"] * 2), 2),
                         **usage})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def hamilton(scratch: Path, folder: Path) -> list[dict]:
    """The clip over RTSP, 4 loops in one session, watched for 32 s (3 loops and some: no reconnect inside it).
    Each named arrival is placed in the clip by where its face's first frame is in the stream (`stream_seconds`, by
    the stream's own clock, modulo one loop's length) and checked against who is on screen then (`SHOTS` of
    benchmarks/video_hamilton.py, a person's labels, with half a second's slack either side)."""
    from camera_servers import rtsp_server
    from video_hamilton import ALEX, LIN, SHOTS

    home = enrolled_home(scratch / "hamilton", {LIN: folder / "lin-manuel-miranda.png",
                                                ALEX: folder / "alex-lacamoire.png"})
    fps, frames, slack = 2997 / 100, 275, 15  # the clip's own rate and length
    runs = []
    looped = h264_loops(folder / "short_hamilton_clip.mp4", scratch / "hamilton-h264.mp4", 4)
    import av

    with av.open(str(looped)) as container:  # one loop's length as concat made it (the clip's container's)
        stream = container.streams.video[0]
        loop_seconds = float(stream.duration * stream.time_base) / 4
    for leave_after in (10.0, 1.0):
        with rtsp_server(looped, encoded=True) as server:
            log = scratch / f"hamilton-{leave_after:g}.jsonl"
            answer, usage = watch(home, [f"stage={server.url}", "--leave-after", str(leave_after), "--seconds", "32",
                                         "--jsonl", str(log)])
        camera = answer["cameras"][0]
        arrivals = [e for e in map(json.loads, log.read_text().splitlines()) if e["event"] == "arrived"]
        placed = [(e["name"], round((e["stream_seconds"] % loop_seconds) * fps)) for e in arrivals]
        off_screen = [(name, frame) for name, frame in placed if name in SHOTS and not any(
            first - slack <= frame <= last + slack for first, last, _x in SHOTS[name])]
        covered = camera["recognising_seconds"]  # from the first frame recognised to the last
        runs.append({"leave_after": leave_after, "loops_in_session": 4, "stream_seconds_watched": round(covered, 1),
                     "arrivals": placed, "lin_arrivals": sum(name == LIN for name, _f in placed),
                     "lin_visits_on_screen": _visits(SHOTS[LIN], leave_after, fps, frames, covered),
                     "alex_arrivals": sum(name == ALEX for name, _f in placed),
                     "unknown_arrivals": sum(name == "unknown" for name, _f in placed),
                     "named_when_not_on_screen": off_screen, "frames_processed": camera["frames_processed"],
                     **usage})
        print(json.dumps(runs[-1]), flush=True)
    return runs


def _visits(shots, leave_after: float, fps: float, frames: int, seconds: float) -> int:
    """How many visits the labels make over `seconds` of the looped clip: stretches on screen, joined when the gap
    between them is under `leave_after`."""
    stretches = sorted((loop * frames + first, loop * frames + last) for loop in range(int(seconds * fps / frames) + 1)
                       for first, last, _x in shots if loop * frames + first <= seconds * fps)
    visits, end = 0, None
    for first, last in stretches:
        if end is None or (first - end) / fps >= leave_after:
            visits += 1
        end = last if end is None else max(end, last)
    return visits


def reconnect(scratch: Path) -> dict:
    from camera_servers import rtsp_server
    from facerec.cameras.status_file import read_status

    home = enrolled_home(scratch / "reconnect", {"Barack Obama": FACES / "Barack_Obama" / "Barack_Obama_0001.jpg"})
    with rtsp_server(load_clip(scratch / "reconnect.mp4"), loops=3) as server:
        process = subprocess.Popen([sys.executable, "-m", "facerec.cli", "watch", f"door={server.url}", "--seconds",
                                    "30", "--home", str(home)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
        time.sleep(5)
        server.stop()
        time.sleep(3)
        server.start()
        back = time.monotonic()
        flowing = None
        while time.monotonic() - back < 25:
            status = read_status(home)
            camera = status["cameras"][0] if status and status["cameras"] else {}
            if camera.get("state") == "streaming" and camera.get("reconnects", 0) >= 1:
                flowing = round(time.monotonic() - back, 1)
                break
            time.sleep(0.2)
        process.wait(timeout=120)
    result = {"outage_seconds": 3.0, "seconds_to_frames_again": flowing,
              "status_every_seconds": 2.0, "backoff_seconds": [1, 2, 4, 8, 15, 30]}
    print(json.dumps(result), flush=True)
    return result


def hung_webhook(scratch: Path) -> list[dict]:
    from camera_servers import Receiver

    home = enrolled_home(scratch / "hung", {"Barack Obama": FACES / "Barack_Obama" / "Barack_Obama_0001.jpg"})
    clip = load_clip(scratch / "hung.mp4")
    runs = []
    for hung in (False, True):
        with Receiver(SECRET.encode(), hang=hung) as hook:
            answer, usage = watch(home, [f"door={clip}", "--webhook", hook.url, "--webhook-secret-env", "HOOK_SECRET",
                                         "--leave-after", "1"], env={"HOOK_SECRET": SECRET})
        camera, sink = answer["cameras"][0], answer["sinks"][0]
        runs.append({"webhook_hangs": hung, "frames_processed": camera["frames_processed"],
                     "arrivals": sum(e["event"] == "arrived" for e in camera["recent_events"]),
                     "latency_p50_s": camera["latency_p50_s"], "webhook_sent": sink["sent"], **usage})
        print(json.dumps(runs[-1]), flush=True)
    return runs


def _q(values: list[float], q: float) -> float | None:
    return round(values[min(len(values) - 1, int(q * len(values)))], 3) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hamilton", type=Path, required=True)
    parser.add_argument("--counts", default="1,2,4,8,12,16")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        result = {"load": load(scratch, [int(c) for c in args.counts.split(",")], args.seconds),
                  "hamilton": hamilton(scratch, args.hamilton), "reconnect": reconnect(scratch),
                  "hung_webhook": hung_webhook(scratch), "cores": os.cpu_count(),
                  "clip": "ageitgey/face_recognition@2e2dccea9dd0 examples/short_hamilton_clip.mp4"}
    if args.out:
        write_result(args.out, result, Settings().model_path, None)


if __name__ == "__main__":
    main()
