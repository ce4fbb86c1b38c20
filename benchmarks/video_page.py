"""#64 row 1: what a user waits for when the page answers a video: seconds from pressing Identify video to the
track table, and to the annotated video, beside the REST route on the same app.

    python benchmarks/video_page.py --clip DIR --out benchmarks/results/video_page.json

DIR holds `short_hamilton_clip.mp4`, `lin-manuel-miranda.png` and `alex-lacamoire.png` from ageitgey/face_recognition
(MIT, examples/; not committed here). The two photos are enrolled in a fresh gallery, `python app.py` serves it
(started as the tests start it), and the clip is sent `--runs` times each way: to the page's own Identify video
event (`/gradio_api/queue/join` and its event stream, as the browser does; the clock starts when the event is
sent, after the upload) and to `POST /api/v1/videos/identify` with a read key. Written: per run, the seconds to
the first message that holds the track table, to the message that holds the annotated video, and the REST
route's seconds; the drawing's speed in frames a second (the clip's frames over the seconds between the two).
Run on an earlier commit's checkout to measure "before" (its page answered in one message: both times equal).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from app_server import running_app  # noqa: E402 - starts app.py the way the tests do

from facerec.gallery import Gallery  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402

PEOPLE = {"Lin-Manuel Miranda": "lin-manuel-miranda.png", "Alex Lacamoire": "alex-lacamoire.png"}


def page_times(http: httpx.Client, clip: Path) -> tuple[float, float, str]:
    """(seconds to the table, seconds to the annotated video, the last status line) for one page answer."""
    event = next(d for d in http.get("config").json()["dependencies"] if d.get("api_name") == "identify_video")
    (uploaded,) = http.post("gradio_api/upload", files={"files": (clip.name, clip.read_bytes(), "video/mp4")}).json()
    video = {"path": uploaded, "orig_name": clip.name, "meta": {"_type": "gradio.FileData"}}
    session = f"bench-{time.monotonic_ns()}"
    started = time.perf_counter()
    http.post("gradio_api/queue/join", json={"data": [video, "", 3, "", 1.0], "fn_index": event["id"],
                                             "session_hash": session, "event_data": None,
                                             "trigger_id": event["targets"][0][0]}).raise_for_status()
    table_s = video_s = None
    last = ""
    with http.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") not in ("process_generating", "process_completed"):
                continue
            said = json.dumps(message.get("output", {}))
            if table_s is None and "Lin-Manuel Miranda" in said:
                table_s = time.perf_counter() - started
            if video_s is None and ".webm" in said:
                video_s = time.perf_counter() - started
            last = said
            if message.get("msg") == "process_completed":
                if not message.get("success"):
                    raise SystemExit(f"the page refused the clip: {said[:300]}")
                break
    return table_s, video_s, last[:200]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clip", type=Path, required=True, help="the folder with the peer's clip and photos")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    clip = args.clip / "short_hamilton_clip.mp4"
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        with Gallery(Settings(home=home)) as gallery:
            for name, photo in PEOPLE.items():
                gallery.enroll(args.clip / photo, name, allow_low_quality=True)
        key = json.loads(subprocess.run([sys.executable, "-m", "facerec.cli", "api-key", "create", "--role", "read",
                                         "--json", "--home", str(home)], capture_output=True, text=True, check=True,
                                        cwd=ROOT).stdout)["key"]
        runs = []
        with running_app(home) as app, httpx.Client(base_url=app.url, timeout=600) as http:
            page_times(http, clip)  # warm-up: models loaded, nothing measured
            for _ in range(args.runs):
                table_s, video_s, _said = page_times(http, clip)
                started = time.perf_counter()
                answer = http.post("api/v1/videos/identify", headers={"X-API-Key": key},
                                   files={"video": (clip.name, clip.read_bytes(), "video/mp4")})
                answer.raise_for_status()
                rest_s = time.perf_counter() - started
                runs.append({"page_table_s": round(table_s, 2), "page_video_s": round(video_s, 2),
                             "rest_s": round(rest_s, 2)})
                print(json.dumps(runs[-1]), flush=True)
            frames = answer.json()["video"]["frames"]
    best = min(runs, key=lambda run: run["page_video_s"])
    drawing = best["page_video_s"] - best["page_table_s"]
    result = {"clip": {"name": clip.name, "frames": frames, "source": "ageitgey/face_recognition examples/"},
              "runs": runs, "best": best,
              "drawing_fps": round(frames / drawing, 1) if drawing > 0.05 else None,
              "clip_seconds": answer.json()["video"]["seconds"]}
    print(json.dumps(result, indent=1))
    if args.out:
        write_result(args.out, result, Settings().model_path, None)


if __name__ == "__main__":
    main()
