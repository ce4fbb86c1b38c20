"""The video tables (#50): face_recognition's example clip, and tracks in the open set."""

from __future__ import annotations

import json
import re

from result_blocks.common import cpu_text, load, model_text


def video_hamilton_block() -> str:
    """face_recognition's example clip: tracks, names and speed beside its example script (benchmarks/video_hamilton.py)."""
    result = load("video_hamilton")
    if not result:
        return ("(not measured yet: `python benchmarks/video_hamilton.py --clip DIR --peer-python PYTHON "
                "--out benchmarks/results/video_hamilton.json`)")
    rows = ["| track | name | score | frames | frames seen | views | who it is (labelled by a person watching: "
            "Lin-Manuel Miranda wherever he is on screen, Alex Lacamoire at the piano) |",
            "|---|---|---|---|---|---|---|"]
    for track in result["tracks"]:
        rows.append(f"| {track['track']} | {track['name']} | {track['score']:.2f} | {track['first_frame']}-"
                    f"{track['last_frame']} | {track['frames_seen']} | {track['views']} | "
                    f"{', '.join(t if t != 'None' else 'not labelled' for t in track['truth'])} |")
    peer = result.get("peer") or {}
    speed = (f"facerec followed the clip at {result['fps']:.0f} frames a second (decode to tracks, faces looked for on "
             f"one frame in {result['detected_every']}, 2 cores, fastest of {len(result['runs_seconds'])} runs: "
             f"{', '.join(f'{s:.2f}' for s in result['runs_seconds'])} s for {result['frames']} frames)")
    if "fps" in peer:
        speed += (f"; face_recognition's `facerec_from_video_file.py` at {peer['fps']:.1f} frames a second in the "
                  f"same run ({result['speed_ratio']:.1f}x)")
    load_average = result.get("load_average") or [0]
    return ("\n".join(rows) + f"\n\nLin-Manuel Miranda: {result['lin_named']} of his {result['lin_detections']} "
            f"detected faces on tracks named him ({100 * result['lin_coverage']:.0f}%), on {result['lin_tracks']} "
            f"track(s); faces named as someone they are not: {len(result['named_wrongly'])}. Tracks are decided at "
            f"score {result['threshold']:.2f} (the photo rule's threshold for 2 people at 1% plus "
            f"{result['pooled_shift']:.2f} for pooled evidence). {speed}. The machine was shared while it ran "
            f"(load average {load_average[0]:.1f} on {result.get('cores', 2)} cores). Clip and photos: "
            f"{result['clip']['source']} @ `{result['clip']['commit'][:12]}` (MIT), not committed. "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}.")


def video_open_set_block() -> str:
    """FPIR and DIR per track beside per frame (benchmarks/video_open_set.py)."""
    result = load("video_open_set")
    if not result:
        return "(not measured yet: `python benchmarks/video_open_set.py --out benchmarks/results/video_open_set.json`)"
    strangers, mated = result["strangers"], result["mated"]
    rows = ["| decided | threshold | FPIR (strangers named) | DIR (enrolled people named as themselves) |",
            "|---|---|---|---|",
            f"| per track (views pooled, once) | {result['track_threshold']:.2f} | "
            f"{100 * strangers['fpir_per_track']:.2f}% ({strangers['tracks_named']} of {strangers['tracks']:,}) | "
            f"{100 * mated['dir_per_track']:.1f}% of {mated['tracks']:,} |",
            f"| per frame (each view alone) | {result['photo_threshold']:.2f} | "
            f"{100 * strangers['fpir_per_frame']:.2f}% ({strangers['frames_named']} of {strangers['frames']:,}) | "
            f"{100 * mated['dir_per_frame']:.1f}% of {mated['frames']:,} |"]
    return ("\n".join(rows) + f"\n\nAt the default rate ({100 * result['target_fpir']:g}%), a gallery of "
            f"{result['gallery_people']:,} LFW people; synthetic tracks of {result['views_per_track']} video views of "
            f"one photo; {result['data']}. Measured on: {cpu_text(result)}, model {model_text(result)}.")


def video_request_block() -> str:
    """Memory and CPU of one video request at the stated maxima, over REST (benchmarks/video_request.py)."""
    result = load("video_request")
    if not result:
        return ("(not measured yet: `python benchmarks/video_request.py --data ../shared/data "
                "--out benchmarks/results/video_request.json`)")
    clip, counts = result["clip"], result["counts"]
    named = sorted({t["name"] for t in result["tracks"]})
    return (f"| clip | CPU time | wall time | resident memory before | largest sampled during | process peak |\n"
            f"|---|---|---|---|---|---|\n"
            f"| {clip['frames']:,} frames, {clip['width']} x {clip['height']} at {clip['fps']:g} fps "
            f"({clip['seconds']:.0f} s, {clip['megabytes']:.0f} MB) | {result['cpu_seconds']:.0f} s | "
            f"{result['wall_seconds']:.0f} s | {result['rss_before_mb']:.0f} MB | "
            f"{result['largest_sampled_rss_mb']:.0f} MB | {result['peak_rss_mb']:.0f} MB |\n\n"
            f"One `POST /api/v1/videos/identify` at the default maxima ({result['limits']['max_frames']:,} frames, "
            f"{result['limits']['max_seconds']:g} s, frames of {result['limits']['max_side']} px a side: none "
            f"shrunk), an enrolled person and a stranger moving over the whole clip; faces looked for on one frame "
            f"in {result['detected_every']} ({counts['detected_frames']:,} frames, {counts['embedded']:,} views "
            f"embedded), {len(result['tracks'])} tracks ({', '.join(named)}). CPU time: user + system of the app's "
            f"process over the request (every thread); memory: its resident set before the request (models loaded "
            f"by a short clip first), the largest sampled every 0.2 s during it, and the process's high-water mark. "
            f"{result['machine']['cpus']} cores shared with other work (load average "
            f"{result['machine']['load_average_at_start'][0]:.1f} at the start). "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}.")


def video_bombs_block() -> str:
    """What hostile videos cost one anonymous page request, before and after #63 rows 5 and 9
    (benchmarks/video_bombs.py, run on the code of each commit)."""
    before, after = load("video_bombs_before"), load("video_bombs")
    if not after:
        return ("(not measured yet: `python benchmarks/video_bombs.py --out benchmarks/results/video_bombs.json`)")
    earlier = {row["video"]: row for row in before.get("videos", [])}
    commit = ((before.get("provenance") or {}).get("commit") or "?")[:7]  # the "before" run is of a clean commit
    rows = [f"| video | size | on {commit} (before) | now |", "|---|---|---|---|"]

    def cell(row: dict | None) -> str:
        if not row:
            return "not measured"
        return (f"{row['outcome']}; {row['cpu_s']:.1f} CPU-s, {row['wall_s']:.1f} s, resident peak "
                f"+{row['rss_added_mb']} MB")

    for row in after["videos"]:
        rows.append(f"| {row['video']} | {row['bytes'] / 1e6:.1f} MB | {cell(earlier.get(row['video']))} | "
                    f"{cell(row)} |")
    return ("\n".join(rows) + "\n\nEach video followed as the page follows an anonymous upload (its bounds, then "
            "the annotated copy it shows), in a fresh process, on an empty gallery; the peak is the process's "
            f"`VmHWM`, reset just before. Before: {cpu_text(before)}; now: {cpu_text(after)}, model "
            f"{model_text(after)}.")


def video_page_block() -> str:
    """Seconds to the page's video table and annotated copy, before and after #64 row 1 (benchmarks/video_page.py)."""
    rows = ["| code | to the track table | to the annotated video | the REST route, same app | drawing speed |",
            "|---|---|---|---|---|"]
    measured = []
    for name in ("video_page_before", "video_page"):
        result = load(name)
        if not result:
            continue
        measured.append(result)
        best, commit = result["best"], (result.get("provenance") or {}).get("commit") or "?"
        where = f"{commit[:7]} with the changes of #64 row 1" if commit.endswith("+changes") else commit[:7]
        label = f"{where} (before)" if name.endswith("before") else f"{where} (now)"
        drawing = f"{result['drawing_fps']:.0f} frames a second" if result.get("drawing_fps") else "not apart"
        rows.append(f"| {label} | {best['page_table_s']:.1f} s | {best['page_video_s']:.1f} s | {best['rest_s']:.1f} s "
                    f"| {drawing} |")
    if not measured:
        return ("(not measured yet: `python benchmarks/video_page.py --clip DIR "
                "--out benchmarks/results/video_page.json`)")
    last = measured[-1]
    return ("\n".join(rows) + f"\n\nThe clip: {last['clip']['frames']} frames, {last['clip_seconds']:.1f} s; the "
            f"fastest of {len(last['runs'])} runs each way after a warm-up (the page's own event and its stream, as "
            "a browser sends it, timed from the event after the upload). Measured on: "
            + "; ".join(f"{cpu_text(r)}" for r in measured) + f", model {model_text(last)}.")


def hardening_round5_block() -> str:
    """#63's rows 1-4, 6, 8 and 10 measured again on today's code (benchmarks/hardening_round5.py), beside what the
    issue measured on 8d20703."""
    result = load("hardening_round5")
    if not result:
        return "(not measured yet: `python benchmarks/hardening_round5.py --out benchmarks/results/hardening_round5.json`)"
    rows = ["| row | found on 8d20703 (the issue) | measured now |", "|---|---|---|"]
    for row in result["rows"]:
        rows.append(f"| {row['row']} | {row['found_on_8d20703']} | {_round5_now(row['row'], row['now'])} |")
    return ("\n".join(rows) + f"\n\nEach row in a fresh process; CPU seconds are the process's and its children's. "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}, {result['provenance']['date'][:10]}.")


def _round5_now(row: int, now: dict) -> str:
    """One row's measurement in words."""
    if row in (1, 2):
        what = ("8 EPS frames at once (4 inline, 4 as files)" if row == 1
                else f"3 frames at once of a real 13,300 x 13,300 PNG ({now['png_bytes'] / 1e3:.0f} kB)")
        extra = (f"; Ghostscript started {now['ghostscript_starts']} times, frame files left "
                 f"{now['frame_files_left']}" if row == 1 else "")
        return (f"{what}: {'; '.join(now['outcomes'])}{extra}; {now['cpu_s'] + now['children_cpu_s']:.2f} CPU-s, "
                f"resident +{now['rss_added_mb']} MB")
    if row == 3:
        return "; ".join(f"{p['stranger']}'s photos named {p['enrolled']}: {p['named_before']}/{p['stranger_photos']} "
                         f"-> {p['named_after']}/{p['stranger_photos']} after {p['tracks_confirmed']} confirmed track"
                         for p in now["pairs"])
    if row == 4:
        return (f"a {now['bytes'] / 1e6:.1f} MB, 60-frame video of 50 new faces on every frame, as the page follows an "
                f"anonymous upload: {now['outcome']}; {now['cpu_s']:.1f} CPU-s, {now['wall_s']:.1f} s, resident "
                f"+{now['rss_added_mb']} MB")
    if row == 6:
        live, video = now["live"], now["video"]
        status = re.sub(r"^[0-9.]+s ", "", now["live_status"])  # the page's timer before the status line
        return (f"a fake camera on the Live tab for {now['live_seconds']:.0f} s ({status}): "
                f"{live['image_files']} image files ({live['image_bytes'] / 1e6:.1f} MB) appeared in the web cache; "
                f"a crowd video in Identify: {now['video_faces_shown']} track faces shown, "
                f"{now['video_faces_inline']} of them inside the page, {video['image_files']} image files in the cache "
                f"(the files that did: {', '.join(video['names']) or 'none'})")
    if row == 7:
        answers = ", ".join(f"{count} x {status}" for status, count in sorted(now["statuses"].items()))
        return (f"{now['clients']} REST video uploads of {now['megabytes_each']} MB at once with a read key: answered "
                f"{answers} (503: refused before its body, the room of three full; 422: admitted, read, not a video) "
                f"in {now['seconds']:.1f} s; /tmp +{now['tmp_added_mb']:,} MB (the app's web cache was under /tmp in "
                f"this run), /dev/shm +{now['shm_added_mb']:,} MB; a page upload afterwards: "
                f"{now['page_upload_after']}")
    if row == 8:
        return "; ".join(f"`facerec identify {c['folder']}`: {c['faces_named']} faces found (the clip the path "
                         "would reach as a URL has one)"
                         + (f", {c['http_requests']} HTTP requests" if c["http_requests"] is not None else "")
                         for c in now["cases"])
    if row == 10:
        return (f"row 4's video with suggestions on: {now['tracks']} tracks, {now['unknown_tracks']} unknown; kept "
                f"faces {now['kept_before']} -> {now['kept_after']}")
    return json.dumps(now)
