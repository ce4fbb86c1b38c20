"""Cameras watched (#67): cameras per 2 cores, latency and memory; face_recognition's example clip over RTSP in a loop;
a reconnect; a hung webhook."""

from __future__ import annotations

from result_blocks.common import cpu_text, load, model_text


def cameras_block() -> str:
    result = load("cameras")
    if not result:
        return ("(not measured yet: `python benchmarks/cameras.py --hamilton DIR --out "
                "benchmarks/results/cameras.json`)")
    rows = ["| cameras (640x360, 15 fps, RTSP) | recognised a second, per camera (slowest / mean; asked: "
            f"{result['load'][0]['detect_fps']:g}) | keeping up | frames dropped (never queued) | arrivals | latency "
            "p50 / p99 | CPU (share of 2 cores) | peak memory |", "|---|---|---|---|---|---|---|---|"]
    for row in result["load"]:
        rows.append(f"| {row['cameras']} | {row['processed_fps_min']:.2f} / {row['processed_fps_mean']:.2f} | "
                    f"{row['keeping_up']} of {row['cameras']} | {row['frames_dropped']:,} of "
                    f"{row['frames_received']:,} | {row['arrivals']} ({row['named_wrongly']} named wrongly) | "
                    f"{_s(row['latency_p50_s'])} / {_s(row['latency_p99_s'])} | {row['cpu_share_of_2_cores']:.0%} | "
                    f"{row['peak_rss_mb']} MB |")
    first, last = result["load"][0], result["load"][-1]
    per_camera = (last["peak_rss_mb"] - first["peak_rss_mb"]) / max(1, last["cameras"] - first["cameras"])
    up = [row["cameras"] for row in result["load"] if row["keeping_up"] == row["cameras"]]
    text = "\n".join(rows) + (
        f"\n\nEach run {first['seconds']:.0f} s. Memory per camera: {per_camera:.0f} MB (the peak's growth from "
        f"{first['cameras']} to {last['cameras']} cameras). On these 2 cores, {max(up) if up else 0} camera(s) kept up "
        "(every camera recognised at least 95% of the frames asked for); past that, each camera is recognised less "
        "often, never late: frames wait for nobody.")
    lines = []
    for run in result["hamilton"]:
        lines.append(f"with `--leave-after {run['leave_after']:g}`: {run['lin_arrivals']} arrival(s) of Lin-Manuel "
                     f"Miranda for the {run['lin_visits_on_screen']} visit(s) the labels make of "
                     f"{run['stream_seconds_watched']:.0f} s of the looped clip, {run['alex_arrivals']} of Alex "
                     f"Lacamoire, {run['unknown_arrivals']} unknown; named arrivals placed where that person is not on "
                     f"screen: {len(run['named_when_not_on_screen'])}")
    text += ("\n\nface_recognition's example clip served over RTSP in a loop (the clip: "
             f"`{result['clip']}`), its two example photos enrolled, each named arrival placed in the clip by when its "
             "face was first seen and checked against a person's labels (benchmarks/video_hamilton.py): "
             + "; ".join(lines) + ".")
    again = result["reconnect"]
    text += (f"\n\nThe RTSP server killed 5 s in and started again {again['outage_seconds']:g} s later: frames flowed "
             f"again {_s(again['seconds_to_frames_again'])} after its return (read from the status file, written every "
             f"{again['status_every_seconds']:g} s; the back-off: "
             f"{', '.join(str(s) for s in again['backoff_seconds'])} s).")
    free, hung = result["hung_webhook"]
    text += (f"\n\nA webhook that never answers: {hung['frames_processed']} frames recognised and {hung['arrivals']} "
             f"arrivals, against {free['frames_processed']} and {free['arrivals']} with one that answers "
             f"({hung['webhook_sent']} and {free['webhook_sent']} events delivered).")
    return text + f" Measured on: {cpu_text(result)}, {result['cores']} cores, model {model_text(result)}, " \
                  f"{result['provenance']['date'][:10]}."


def _s(value) -> str:
    return "–" if value is None else f"{value:.2f} s"
