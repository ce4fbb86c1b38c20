"""What a hostile video costs one anonymous page request (hardening round 5, rows 5 and 9), measured per video in
a fresh process so each peak is its own.

    nice -n 5 python benchmarks/video_bombs.py --out benchmarks/results/video_bombs.json      # ~2 min on 2 cores

Videos (`tests/hostile_videos.py`, made at run time): row 9, a Motion JPEG AVI whose first frame is 320 x 240 and
whose next three are 16,000 x 16,000 (about 12 MB); row 5, a VP9 AVI of 1,800 frames of 7,296 x 5,472 (39.9
megapixels) in a few hundred kB; the largest decoding an anonymous video is allowed now (395 frames of 4K, within
1,800 frames of 1080p); and, for scale, an ordinary 60 s 1280 x 720 clip at the anonymous maxima
(`tests/video_clips.py`: one LFW face moving across it). Each is followed as the page follows an anonymous
upload (`Gallery.identify_video` with `facerec.gallery.video.ANONYMOUS_LIMITS`, nothing remembered, then the
annotated copy the page shows, `write_annotated`) on an empty gallery. Written: for each video its size, the answer or the one-line refusal, CPU seconds (user + system) and wall
seconds, and the process's peak resident memory during the request (`VmHWM`, reset before it) against its
memory before it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402


def measure_one(path: str, home: str) -> dict:
    """In this process: open a gallery, warm it on a small photo, follow `path` at the anonymous bounds."""
    from facerec.errors import FaceRecError
    from facerec.gallery import Gallery
    from facerec.gallery.video import ANONYMOUS_LIMITS
    from facerec.video.annotate import write_annotated
    from facerec.video.decode import VideoLimits

    gallery = Gallery.open(home)
    portrait = next((ROOT / "tests" / "faces").glob("*/*.jpg"))  # a committed public-domain portrait
    gallery.identify(str(portrait), remember=False)  # every model loaded before measuring
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from now
    before_kb = peak_kb()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        answer = gallery.identify_video(path, remember=False, not_below_default=True, limits=ANONYMOUS_LIMITS)
        outcome = f"answered: {len(answer.tracks)} tracks, {answer.counts.frames} frames"
        drawn = [(t.track, t.match.label, t.match.name is not None) for t in answer.tracks]
        write_annotated(path, Path(home) / "annotated.webm", drawn, VideoLimits().tighter(ANONYMOUS_LIMITS))
        outcome += ", annotated copy written"
    except FaceRecError as error:
        outcome = f"refused: {error}"
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    peak = peak_kb()
    gallery.close()
    return {"outcome": outcome, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
            "rss_before_mb": round(before_kb / 1024), "rss_peak_mb": round(peak / 1024),
            "rss_added_mb": round((peak - before_kb) / 1024)}


def peak_kb() -> int:
    """The process's resident peak since the last reset (`VmHWM`), in kB."""
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM"))
    return int(line.split()[1])


def ordinary_clip(out: Path, data: Path) -> Path:
    from video_clips import Path2D, clip

    face = next((data / "lfw" / "Andre_Agassi").glob("*.jpg"))
    return clip(out, [Path2D(face, (0.2, 0.3), (0.8, 0.7), side=200)], frames=1_790, fps=30, size=(1280, 720))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--videos", type=Path, default=Path(tempfile.gettempdir()) / "facerec-video-bombs",
                        help="where the videos are made, and kept for the next run (the 40-megapixel one takes "
                             "about 3 min to encode)")
    parser.add_argument("--one", nargs=2, metavar=("VIDEO", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(*args.one)))
        return
    from hostile_videos import decompression_bomb, growing_frames

    rows, folder = [], args.videos
    folder.mkdir(parents=True, exist_ok=True)
    made = {"growing.avi": lambda out: growing_frames(out, frames=4), "bomb.avi": decompression_bomb,
            "ordinary.mp4": lambda out: ordinary_clip(out, args.data),
            "bomb-4k.webm": lambda out: decompression_bomb(out, (4096, 2304), 395, format="webm")}
    for name, make in made.items():
        if not (folder / name).exists():
            make(folder / f"partial-{name}").rename(folder / name)
    videos = {"row 9: 320 x 240 first frame, then three of 16,000 x 16,000 (MJPEG AVI)": folder / "growing.avi",
              "row 5: 1,800 VP9 frames of 39.9 megapixels (AVI)": folder / "bomb.avi",
              "the most decoding an anonymous video may ask for now: 395 VP9 frames of 4K (4096 x 2304, WebM)":
              folder / "bomb-4k.webm",
              "an ordinary clip at the anonymous maxima: 1,790 frames at 30 a second of 1280 x 720 (MPEG-4)":
              folder / "ordinary.mp4"}
    with tempfile.TemporaryDirectory() as scratch:
        for what, path in videos.items():
            home = Path(scratch) / f"gallery-{len(rows)}"
            done = subprocess.run([sys.executable, __file__, "--one", str(path), str(home)], capture_output=True,
                                  text=True)
            if done.returncode:
                raise SystemExit(done.stderr[-3000:])
            row = {"video": what, "bytes": path.stat().st_size, **json.loads(done.stdout.strip().splitlines()[-1])}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        write_result(args.out, {"videos": rows}, Settings().model_path, None)


if __name__ == "__main__":
    main()
