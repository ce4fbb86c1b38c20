"""`facerec identify clip.mp4`: every face of a video followed across frames, one row per track.

A table (or `--json`), a progress bar over the frames on stderr, `--out OUT` for OUT.csv and OUT.json as for a
folder of photos (owner-only, formula-safe cells), and `--annotate out.webm` for a copy with the tracks drawn on it
(VP9 WebM, which browsers play). Videos inside a folder (`facerec identify DIR/`) are answered by `video_entry`.
"""

from __future__ import annotations

from pathlib import Path

from facerec.cli.output import emit, open_gallery, progress_bar
from facerec.errors import InvalidArgument
from facerec.words.threshold import threshold_sentence, worded
from facerec.words.video import pooled_sentence, span, video_summary

def identify_video(args, write_outputs) -> int:
    """`write_outputs(out, entries)`: how `--out` files are written (`facerec.cli.library.write_outputs`)."""
    annotate = Path(args.annotate) if getattr(args, "annotate", None) else None
    if annotate is not None and annotate.suffix.lower() != ".webm":
        raise InvalidArgument(f"--annotate writes VP9 WebM video: give it a name ending in .webm, not {annotate.name}")
    with open_gallery(args) as gallery:
        with progress_bar(1, "following faces", "frame") as bar:
            def progress(done: int, total: int) -> None:
                if total and bar.total != total:
                    bar.total = total
                bar.update(done - bar.n)

            answer = gallery.identify_video(args.photo, top_k=args.top_k, progress=progress)
        if annotate is not None:
            with progress_bar(answer.counts.frames, "drawing", "frame") as bar:
                gallery.services().video.annotate(args.photo, answer, [t.match.label for t in answer.tracks],
                                                  annotate, progress=lambda done, _total: bar.update(done - bar.n))
    data = worded(answer.to_dict(), answer.rule)
    rows = [[t["track"], t["name"], f"{t['score']:.2f}" if t["score"] is not None else "",
             span(t["first_time"], t["last_time"]), t["frames_seen"], t["views"], t.get("sighting_id", "")]
            for t in data["tracks"]]
    text = f"{video_summary(data)}\n{pooled_sentence(data)} {threshold_sentence(answer.rule)}"
    if annotate is not None:
        text += f"\nWrote {annotate}."
    if getattr(args, "out", None):
        write_outputs(Path(args.out), [video_entry_of(Path(args.photo).name, data)])
        text += f"\nWrote {args.out}.csv and {args.out}.json."
    emit(args, data, rows, ["track", "name", "score", "on screen", "frames seen", "views", "sighting"], text=text)
    return 0


def video_entry(gallery, path: Path, name: str, top_k: int, keep=None) -> dict:
    """A video's answer as `facerec identify DIR/` keeps it: one face row per track; `keep(answer)`: more fields
    the caller keeps from the whole answer (a grouped run's unknown tracks)."""
    answer = gallery.identify_video(path, top_k=top_k, label=name)
    return {**video_entry_of(name, answer.to_dict()), **(keep(answer) if keep else {})}


def video_entry_of(name: str, data: dict) -> dict:
    faces = [{"face": t["track"], "name": t["name"], "known": t["known"], "similarity": t["similarity"],
              "score": t["score"], "box": t["box"], "sighting_id": t.get("sighting_id"),
              "first_time": t["first_time"], "last_time": t["last_time"], "frames_seen": t["frames_seen"]}
             for t in data["tracks"]]  # the fields of a photo's face (`library.FACE_FIELDS`), and when it was seen
    return {"photo": name, "video": True, "faces": faces, "faces_found": len(faces), "problem": None}
