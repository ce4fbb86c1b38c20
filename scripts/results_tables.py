"""The results tables of README.md and docs/results.md, generated from benchmarks/results/*.json (never typed).

    python scripts/results_tables.py --write   # rewrite every generated block
    python scripts/results_tables.py --check   # exit 1 if a block is not what the results files say (CI runs it)

A generated block sits between `<!-- results:NAME -->` and `<!-- /results:NAME -->`; everything else in a page is
left alone. docs/results.md holds every block; the README holds the headline (`accuracy`). Every row names the
CPU (model and flags) and the model file (sha256) it was measured with, from
the results file's `provenance` record (`facerec.provenance`).
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tables that facerec itself prints (open set) are made by its own code
RESULTS = ROOT / "benchmarks" / "results"
PAGES = {ROOT / "README.md": ("growth", "accuracy", "speed_line"),
         ROOT / "docs" / "results.md": ("probe_quality", "peer_open_set", "cpus", "accuracy", "peer", "speed", "sightings", "enrollment_quality",
                                        "rest", "scale", "flood", "identify_profile", "reindex_online",
                                        "replay_learning", "suggestions", "scores", "rerank", "score_cost"),
         ROOT / "docs" / "deployment.md": ("replicas", "engines"),
         ROOT / "docs" / "model.md": ("gpu_stage", "gpu_stage_v10", "calibration", "cohort_sweep", "recipe_diagnostic", "asymmetric_flip", "data_slope", "utkface",
                                      "train_speed",
                                      "augmentation_ablation", "standard_stem", "enrollment_views"),
         ROOT / "docs" / "threshold-policy.md": ("threshold_example",),
         ROOT / "docs" / "how-the-threshold-works.md": ("calibration", "open_set", "open_set_photos", "lookalike")}
CARD = ROOT / "models" / "facerec-r18-arcface.json"
PEER_REFERENCE = {"one_shot": 0.933, "distractors": 0.874, "pairs": 0.989}  # face_recognition as this project measured it in an
# earlier run (not dlib's own publication, which gives 99.38% on LFW pairs)


def load(name: str) -> dict:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def cpu_text(result: dict) -> str:
    record = result.get("provenance") or {}
    cpu = record.get("cpu") or {}
    if not cpu:
        return "not recorded"
    if not cpu.get("flags"):  # no flags recorded: say nothing about them (never a guessed "no AVX2")
        return cpu["model"]
    flags = [f for f in cpu["flags"] if f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")]
    return f"{cpu['model']} ({', '.join(flags) or 'none of avx2, avx512f, avx512_vnni, avx_vnni, amx_int8'})"


def model_text(result: dict) -> str:
    """The model a result was measured with, said to be an earlier one when it is not the shipped file."""
    sha = (result.get("provenance") or {}).get("model_sha256")
    if not sha:
        return "not recorded"
    return f"`{sha[:12]}`" + ("" if sha == shipped_sha256() else " (an earlier model, not the shipped one)")


@functools.lru_cache(maxsize=1)
def shipped_sha256() -> str:
    from facerec.provenance import file_sha256

    return file_sha256(CARD.with_suffix(".onnx"))


def accuracy_block() -> str:
    one_shot, distractors, pairs = load("eval_lfw2"), load("eval_lfw2_distractors"), load("eval_pairs")
    peer, peer_pairs = load("peer"), load("peer_pairs")
    rows = ["| LFW protocol | facerec | face_recognition (dlib), same faces, same run | command |",
            "|---|---|---|---|"]
    if one_shot:
        theirs = peer.get("face_recognition", {}).get("rank1")
        rows.append(f"| one-shot rank-1, {one_shot['n_identities']:,} people | **{one_shot['rank1']:.3f}** (rank-5 {one_shot['rank5']:.3f}) | "
                    f"{_figure(theirs)} (earlier run {PEER_REFERENCE['one_shot']}) | "
                    "`facerec eval ../shared/data/lfw --max-per-identity 2` |")
    if distractors:
        rows.append(f"| one-shot rank-1 with 4,069 one-photo distractors | **{distractors['rank1']:.3f}** "
                    f"({round(distractors['rank1'] * distractors['n_queries'])} of {distractors['n_queries']}) | "
                    f"earlier run {PEER_REFERENCE['distractors']} | `... --distractors --open-set` |")
    if one_shot:
        tar = one_shot["tar_at_far"]
        rows.append(f"| TAR at FAR 1e-3 / 1e-2 (query vs enrolled) | {tar['1e-3']['tar']:.3f} / "
                    f"{tar['1e-2']['tar']:.3f} | – | first command |")
    if pairs:
        theirs = peer_pairs.get("face_recognition", {})
        peer_figure = (f"{theirs['accuracy_mean']:.3f} ± {theirs['accuracy_std']:.3f}" if theirs else "–")
        rows.append(f"| pairs, 10-fold verification accuracy (overlaps training people) | "
                    f"**{pairs['accuracy_mean']:.3f} ± {pairs['accuracy_std']:.3f}** | {peer_figure} (earlier run "
                    f"{PEER_REFERENCE['pairs']}) | `facerec eval-pairs ../shared/data/protocols/lfw_pairs.txt "
                    "../shared/data/lfw` |")
    sources = [r for r in (one_shot, distractors, pairs, peer) if r]
    where = "; ".join(sorted({f"{cpu_text(r)}, model {model_text(r)}" for r in sources}))
    return "\n".join(rows) + f"\n\nMeasured on: {where}."


def cpus_block() -> str:
    """One row per kind of CPU: LFW one-shot, agreement with the exact graph, speed against the peer. A real CPU's
    row is one peer run on it (`benchmarks/peer.py`: both libraries on the same faces, one thread, interleaved):
    `peer.json`, and `peer_<cpu>.json` for each other CPU it was run on."""
    rows = ["| CPU | how | int8 kernels | LFW one-shot rank-1 | embeddings vs exact graph (min cosine) | "
            "facerec / dlib faces/s, 1 thread, one run |", "|---|---|---|---|---|---|"]
    for name in ["peer", *sorted(p.stem for p in RESULTS.glob("peer_*.json") if p.stem != "peer_pairs")]:
        peer = load(name)
        if not peer:
            continue
        record = peer["provenance"]
        embedder = record.get("embedder") or {}
        rows.append(f"| {cpu_text(peer)} | real | {record['cpu'].get('int8_dot_product', 'not recorded')} | "
                    f"**{peer['facerec']['rank1']:.3f}** (dlib {peer['face_recognition']['rank1']:.3f}, same run) | "
                    f"{_figure(embedder.get('min_cosine'), 4)} (self-check, {embedder.get('path', 'path not recorded')}) | "
                    f"{_ratio(peer.get('speed_ratio_facerec_over_face_recognition'), peer)} |")
    for name in sorted(p.stem for p in RESULTS.glob("eval_lfw2_emulated_*.json")):
        emulated = load(name)
        cpu = emulated["emulated"]["qemu_cpu"]
        cosine = emulated["cosine_emulated_vs_this_cpu"]
        rows.append(f"| {cpu} (AVX2, FMA; no AVX-512, no VNNI) | emulated: qemu-user `-cpu {cpu}` on "
                    f"{cpu_text(emulated)} | no VNNI (16-bit pair sums) | **{emulated['emulated']['rank1']:.3f}** "
                    f"(embedder emulated; detection native) | {cosine['min']:.4f} vs this CPU's fused kernels "
                    f"({2 * emulated['people']:,} photos of {emulated['people']:,} people) | not measurable under "
                    "emulation |")
    for name in sorted(p.stem for p in RESULTS.glob("op_profile_*.json")):
        profiled = load(name)
        stages = profiled["share_by_stage"]
        trunk = ", ".join(f"{stages.get(f'features.{k}', 0):.0%}" for k in (4, 5, 6, 7))
        rows.append("")
        rows.append(f"Where the embedder's time goes on {cpu_text(profiled)} (`benchmarks/op_profile.py`, one thread, "
                    f"the face and its mirror: {profiled['ms_per_face_with_flip_1_thread']:.1f} ms): int8 "
                    f"convolutions take {profiled['share_by_operator'].get('QLinearConv', 0):.1%} of it; the "
                    f"trunk's four stages {trunk}, the stem {stages.get('features.0', 0):.1%}.")
    counted = load("instruction_count")
    if counted:
        per_face = counted["instructions_per_face"]
        rows.append("")
        rows.append(f"Before a real AVX2-only machine was at hand, an estimate of the speed there: valgrind runs the same "
                    f"x86 code on a CPU without AVX-512 (so onnxruntime takes its int8 kernels without VNNI) and "
                    f"counts {per_face['facerec'] / 1e6:,.0f} M instructions per face for facerec (flip) against "
                    f"{per_face['face_recognition'] / 1e6:,.0f} M for dlib: "
                    f"**{counted['ratio_face_recognition_over_facerec']:.2f}x** "
                    f"(`benchmarks/instruction_count.py`, {counted['faces']} faces; a count, not a timing).")
    return "\n".join(rows)


def speed_line_block() -> str:
    """The README's one sentence on speed: the peer ratio on each real CPU it was measured on (`cpus_block`)."""
    ratios = []
    for name in ["peer", *sorted(p.stem for p in RESULTS.glob("peer_*.json") if p.stem != "peer_pairs")]:
        peer = load(name)
        if peer:
            ratios.append(f"{peer['speed_ratio_facerec_over_face_recognition']:.1f}x less time than dlib on "
                          f"{cpu_text(peer)}")
    return ("Per face, on one thread, with the same faces in one run: facerec took " + "; ".join(ratios) + ".")


def peer_block() -> str:
    peer = load("peer")
    if not peer:
        return "(no peer.json)"
    ours, theirs = peer["facerec"], peer["face_recognition"]
    people = f" ({peer['people']:,} people)" if "people" in peer else ""
    rows = [f"| | rank-1{people} | ms per face (embedding) | faces/s | ms per photo end to end |",
            "|---|---|---|---|---|",
            f"| facerec (ResNet18 int8 ONNX, flip: the default) | {ours['rank1']:.3f} | "
            f"{ours['ms_per_face_embed']:.1f} | {ours['faces_per_s']:.1f} | {ours['ms_per_photo_end_to_end']:.1f} |",
            f"| face_recognition (dlib ResNet) | {theirs['rank1']:.3f} | {theirs['ms_per_face_embed']:.1f} | "
            f"{theirs['faces_per_s']:.1f} | {theirs['ms_per_photo_end_to_end']:.1f} |"]
    return ("\n".join(rows) + f"\n\nfacerec embeds **{peer['speed_ratio_facerec_over_face_recognition']:.2f}x** "
            f"as many faces per second, on {cpu_text(peer)}, model {model_text(peer)}, "
            f"{peer['provenance']['date'][:10]}.")


def speed_block() -> str:
    one, every = load("speed_1thread"), load("speed_all")
    if not one or not every:
        return "(no speed_1thread.json / speed_all.json)"
    rows = ["| stage | 1 thread | all cores |", "|---|---|---|",
            f"| detection, 250x250 photo | {one['detect_ms_250x250']:.1f} ms | {every['detect_ms_250x250']:.1f} ms |",
            f"| detection, 1280x960 photo | {one['detect_ms_1280x960']:.0f} ms | {every['detect_ms_1280x960']:.0f} ms |",
            f"| alignment, per face | {one['align_ms_per_face']:.1f} ms | {every['align_ms_per_face']:.1f} ms |"]
    for label, key in (("no flip", "embed_faces_per_s_batch{}"),
                       ("flip, the default", "embed_faces_per_s_batch{}_flip_tta")):
        rows.append(f"| embedding, faces/s at batch 1 / 32 ({label}) | {one[key.format(1)]:.1f} / "
                    f"{one[key.format(32)]:.1f} | {every[key.format(1)]:.1f} / {every[key.format(32)]:.1f} |")
    rows.append(f"| identify, ms per photo end to end (one face) | "
                f"{one['identify_ms_per_photo_end_to_end']:.0f} ms | {every['identify_ms_per_photo_end_to_end']:.0f} ms |")
    cores = every["provenance"]["cpu"]["cores"]
    return "\n".join(rows) + f"\n\nOn {cpu_text(one)}, {cores} cores, model {model_text(one)}."


def sightings_block() -> str:
    result = load("sightings_health")
    if not result or "provenance" not in result or "recorded_afterwards" in result["provenance"]:
        return "(no sightings_health.json measured with a provenance record)"
    alone, seen = result["enrolled_only"], result["with_sightings"]
    rows = [f"{result['people']} LFW people enrolled from photo 1, their photos 2-5 identified: "
            f"{result['faces_found']} faces found in {result['query_photos']} photos, {result['named']} named, "
            f"{result['named_right']} rightly; {result['identify_ms_per_photo']:.1f} ms per identify, the sighting's "
            f"write included; {result['weak_enrollments']} of the {result['people_seen']} people seen listed as weak "
            f"enrollments; on {cpu_text(result)}, model {model_text(result)}.", "",
            f"| health figure | enrolled faces only | enrolled faces + {result['sightings']} sightings |",
            "|---|---:|---:|"]
    for key in ("closest_is_positive_accuracy", "MedianDistance", "MedianClosestDistance",
                "MedianClosestPositiveDistance", "MedianClosestVsClosestPositiveDistance"):
        name = "ClosestIsPositiveAccuracy" if key == "closest_is_positive_accuracy" else key
        rows.append(f"| {name} | {_defined(alone[key])} | {_defined(seen[key])} |")
    if "health_s" in result:
        rows += ["", f"The report took {result['health_s']:.2f} s here, and "
                     f"{result['health_s_with_10000_sightings_median_of_3']:.2f} s with the memory full (10,000 "
                     "sightings, median of 3)."]
    return "\n".join(rows)


def lookalike_block() -> str:
    """New, different people enrolled into the whole LFW gallery (benchmarks/lookalike_refusal.py)."""
    result = load("lookalike_refusal")
    if not result:
        return "(not measured yet: `python benchmarks/lookalike_refusal.py --json benchmarks/results/lookalike_refusal.json`)"
    low, high = result["refusal_rate_interval_95"]
    raised = result["threshold_policy"].get("raised_from")
    return (f"Enrolling into the {result['gallery_people']:,}-person gallery (`{result['command']}`): "
            f"{result['people_re_enrolled']:,} seeded people are each deleted and enrolled again through "
            f"`Gallery.enroll` (a poor photo allowed: the look-alike check alone is measured), i.e. as a new, "
            f"different person against the other {result['gallery_people_during_each_check']:,}; look-alike "
            f"refusal rate **{100 * result['refusal_rate']:.1f}%** ({result['refusals']} of "
            f"{result['people_re_enrolled']:,}; 95% interval {100 * low:.2f}–{100 * high:.2f}%) at threshold "
            f"{result['threshold']:.4f}" + (f", the gallery's own tail having raised the card's {raised:.4f}"
                                             if raised else "")
            + f". Measured on: {cpu_text(result)}, model {model_text(result)}.")


def _defined(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _figure(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ratio(ratio, peer: dict) -> str:
    if ratio is None:
        return "–"
    ms = (peer["facerec"]["ms_per_face_embed"], peer["face_recognition"]["ms_per_face_embed"])
    return f"**{ratio:.2f}x** ({ms[0]:.1f} vs {ms[1]:.1f} ms per face)"


def open_set_block() -> str:
    """The open-set table at the default policy (LFW, 100 / 1,000 / 4,848 people), as `facerec eval` prints it."""
    from facerec.evaluation.open_set import markdown_table

    result = load("eval_lfw2_distractors")
    return markdown_table(result["open_set"]) + f"\n\nMeasured on: {cpu_text(result)}, model {model_text(result)}."


def calibration_block() -> str:
    """The shipped card's FAR curves at FAR 1e-2 ... 1e-9 (`facerec-train calibrate`): of the normalised score
    the app decides with, the raw cosine beside it, and the tail the first rests on."""
    card = json.loads(CARD.read_text())
    calibration = card["calibration"]
    raw = {row["far"]: row for row in card.get("calibration_cosine", calibration)["curve"]}
    tail = calibration["tail"]
    key = "score" if calibration.get("score") == "as-norm" else "cosine"
    rows = [f"| FAR per comparison | threshold ({'normalised score' if key == 'score' else 'cosine'}) | 95% interval "
            "| from | genuine pairs accepted (TAR) | the data alone | raw cosine: threshold, TAR |",
            "|---|---|---|---|---|---|---|"]
    for row in calibration["curve"]:
        exponent = -math.log10(row["far"])
        if abs(exponent - round(exponent)) > 1e-6 or not 2 <= round(exponent) <= 9:
            continue
        low, high = row.get(f"{key}_interval", [float("nan")] * 2)
        empirical = row.get(f"{key}_empirical")
        cosine = raw.get(row["far"], {})
        rows.append(f"| 1e-{round(exponent)} | {row[key]:.4f} | {low:.4f}–{high:.4f} | {row['from']} | "
                    f"{row.get('tar', float('nan')):.3f} | {'' if empirical is None else f'{empirical:.4f}'} | "
                    f"{cosine.get('cosine', float('nan')):.4f}, {cosine.get('tar', float('nan')):.3f} |")
    shape_low, shape_high = tail.get("shape_interval", [float("nan")] * 2)
    clusters = (f"fitted to the peaks of the {tail['clusters']:,} pairs of identities among its "
                f"{tail['exceedances']:,} impostor pairs (declustered)" if "clusters" in tail else
                f"fitted to its {tail['exceedances']:,} impostor pairs")
    return ("\n".join(rows) + f"\n\n{calibration['identities']} held-out identities, {calibration['photos']:,} photos, "
            f"{calibration['genuine_pairs']:,} genuine and {calibration['impostor_pairs']:,} impostor pairs "
            f"(split: {calibration.get('held_out_split', 'single')}). Tail above {key} {tail['threshold']:.4f} "
            f"(the top {tail['rate']:.2%} of impostor pairs): generalized Pareto shape {tail['shape']:.3f} "
            f"(95% {shape_low:.3f} to {shape_high:.3f}), scale {tail['scale']:.4f}, {clusters}; intervals from "
            f"{calibration['bootstrap']['fitted']} resamples of the identities. Model "
            f"`{calibration['model_sha256'][:12]}`; `{calibration.get('command')}`.")


def cohort_sweep_block() -> str:
    """The score cohort's size and K on the held-out identities (`benchmarks/cohort_sweep.py`)."""
    result = load("cohort_sweep")
    if not result:
        return "Not measured yet: `python benchmarks/cohort_sweep.py`."
    raw = next(r for r in result["rows"] if r["scores"] == "raw cosine")
    normed = [r for r in result["rows"] if r["scores"] == "as-norm"]
    sizes = sorted({r["cohort"] for r in normed})
    ks = sorted({r["top_k"] for r in normed})
    chosen = result["chosen"]
    lines = ["| cohort faces | " + " | ".join(f"K = {k}" for k in ks) + " |", "|---|" + "---|" * len(ks)]
    for size in sizes:
        cells = []
        for k in ks:
            row = next(r for r in normed if r["cohort"] == size and r["top_k"] == k)
            cell = f"{row['tar_at_far_1e-04']:.3f} / {row['tar_at_far_1e-05']:.3f}"
            cells.append(f"**{cell}**" if (size, k) == (chosen["cohort"], chosen["top_k"]) else cell)
        lines.append(f"| {size:,} | " + " | ".join(cells) + " |")
    return ("\n".join(lines) + f"\n\nTAR at FAR 1e-4 / 1e-5 (empirical thresholds over every pair) of the "
            f"{result['identities']} held-out identities' {result['photos']:,} photos; raw cosine: "
            f"{raw['tar_at_far_1e-04']:.3f} / {raw['tar_at_far_1e-05']:.3f}. Shipped (bold): {chosen['cohort']:,} "
            f"faces, K = {chosen['top_k']} ({result['rule']}). Measured on: {cpu_text(result)}, model "
            f"{model_text(result)}.")


def score_cost_block() -> str:
    """What the normalised score costs (`benchmarks/score_cost.py`)."""
    result = load("score_cost")
    if not result:
        return "Not measured yet: `python benchmarks/score_cost.py`."
    face, whole, large = result["per_face"], result["identify_one_face"], result["large_gallery"]
    return ("| one thread | p50 | p99 |\n|---|---|---|\n"
            f"| a face's cohort statistics ({face['cohort_faces']:,} cohort faces, K = {face['top_k']}) | "
            f"{face['statistics']['p50_ms']:.2f} ms | {face['statistics']['p99_ms']:.2f} ms |\n"
            f"| re-rank of the raw top {face['rerank_of_depth']} | {face['rerank']['p50_ms']:.3f} ms | "
            f"{face['rerank']['p99_ms']:.3f} ms |\n"
            f"| identify, one face, {whole['gallery_faces']:,} faces: normalised | "
            f"{whole['normalised']['p50_ms']:.1f} ms | {whole['normalised']['p99_ms']:.1f} ms |\n"
            f"| the same on raw cosines (depth 20, as before) | {whole['raw_cosine_depth_20']['p50_ms']:.1f} ms | "
            f"{whole['raw_cosine_depth_20']['p99_ms']:.1f} ms |\n\n"
            f"Added per identify of one face: {whole['added_p50_ms']:.1f} ms at p50. At {large['faces']:,} faces the "
            f"statistics are {large['in_memory_bytes_per_face']} bytes per face (two floats); the SQLite file was "
            f"{large['database_bytes_with'] - large['database_bytes_without']:,} bytes larger with them than without "
            f"(after VACUUM: they fit in the pages' free space), and computing them all when a gallery made before "
            f"them is first opened took {large['open_computing_all_seconds']:.0f} s. Measured on: {cpu_text(result)}, "
            f"model {model_text(result)}.")


def rerank_block() -> str:
    """How often the normalised best lies beyond the raw top k (`benchmarks/rerank_depth.py`)."""
    result = load("rerank_depth")
    if not result:
        return "Not measured yet: `python benchmarks/rerank_depth.py`."
    depths = [str(k) for k in result["depths"]]
    lines = ["| gallery faces | real faces | searches | " + " | ".join(f"outside raw top {k}" for k in depths)
             + " | answers changed at top 50 |", "|---|---|---|" + "---|" * len(depths) + "---|"]
    for row in result["sizes"]:
        lines.append(f"| {row['gallery_faces']:,} | {row['real_faces']:,} | {row['searches']:,} | "
                     + " | ".join(f"{100 * row['outside_raw_top_k'][k]:.2f}%" for k in depths)
                     + f" | {100 * row['answer_changed_by_top_k']['50']:.2f}% |")
    return ("\n".join(lines) + f"\n\nIdentify re-ranks the raw top {result['shipped_depth']}. Measured on: "
            f"{cpu_text(result)}, model {model_text(result)}.")


def scores_block() -> str:
    """Raw cosine and normalised score on the LFW open-set protocol, in one run (`facerec eval ... --open-set`)."""
    result = load("eval_lfw2_distractors")
    open_set = result.get("open_set", {})
    if "raw_cosine" not in open_set:
        return "Not measured yet: `facerec eval ../shared/data/lfw --max-per-identity 2 --distractors --open-set`."
    raw, normed = open_set["raw_cosine"], open_set
    full = open_set["sizes"][-1]
    return ("| LFW, 4,848 people, 779 mated + 5,627 non-mated searches | raw cosine | normalised score |\n"
            "|---|---|---|\n"
            f"| oracle DIR at 10% FPIR | {raw['dir_at_fpir_0.1']['dir']:.3f} | {normed['dir_at_fpir_0.1']['dir']:.3f} |\n"
            f"| oracle DIR at 1% FPIR | {raw['dir_at_fpir_0.01']['dir']:.3f} | **{normed['dir_at_fpir_0.01']['dir']:.3f}** |\n"
            f"| at the default policy (1%): FPIR, DIR | – | {100 * full['fpir']:.2f}%, {100 * full['dir']:.1f}% |\n\n"
            "The oracle threshold is chosen on the very searches it is scored on (a measure of the scores, not of "
            "the policy); the policy row is what identify does. The raw cosine column is computed in the same run "
            f"from the same embeddings. Measured on: {cpu_text(result)}, model {model_text(result)}.")


def peer_open_set_block() -> str:
    """facerec's and dlib's oracle DIR on the same faces, in one run (benchmarks/peer_open_set.py)."""
    result = load("open_set_peer")
    if not result:
        return "(not measured yet: `python benchmarks/peer_open_set.py --out benchmarks/results/open_set_peer.json`)"
    columns = ("facerec_normalised", "facerec_raw_cosine", "face_recognition_dlib")
    rows = ["| LFW, 4,848 people, same faces, one run | facerec, normalised score | facerec, raw cosine | "
            "face_recognition (dlib), Euclidean |", "|---|---|---|---|"]
    for fpir in ("0.1", "0.01"):
        cells = " | ".join(f"{result[c][f'dir_at_fpir_{fpir}']['dir']:.3f}" for c in columns)
        rows.append(f"| oracle DIR at {float(fpir):.0%} FPIR | {cells} |")
    return ("\n".join(rows) + f"\n\n{result['mated_searches']} mated searches; facerec's RetinaFace box of each "
            f"photo's central face handed to face_recognition. Measured on: {cpu_text(result)}, model "
            f"{model_text(result)}.")


def open_set_photos_block() -> str:
    """1, 3 and 5 photos per person (benchmarks/open_set_photos.py): the policy's rule and the face-count rule."""
    from facerec.evaluation.open_set import percent

    result = load("open_set_photos")
    rows = ["| photos per person | enrolled faces | threshold | measured FPIR (95% interval) | DIR (95% interval) | "
            "face-count rule: threshold, FPIR, DIR | point-estimate exponent: threshold, FPIR, DIR |",
            "|---|---|---|---|---|---|---|"]
    for row in result.get("rows", []):
        policy, faces, point = row["policy"], row["face_count"], row["point_estimate"]
        rows.append(f"| {row['photos_per_person']} | {row['enrolled_faces']:,} | {policy['threshold']:.4f} | "
                    f"{percent(policy['fpir'], policy['fpir_interval'])} | "
                    f"{percent(policy['dir'], policy['dir_interval'])} | {faces['threshold']:.4f}, "
                    f"{percent(faces['fpir'])}, {percent(faces['dir'])} | {point['threshold']:.4f}, "
                    f"{percent(point['fpir'])}, {percent(point['dir'])} |")
    return ("\n".join(rows) + f"\n\n{result.get('rows', [{}])[0].get('people', 0):,} people, "
            f"{result.get('rows', [{}])[0].get('non_mated_searches', 0):,} strangers; exponent used "
            f"{result.get('exponent')}, point estimate {result.get('exponent_point')}. Measured on: "
            f"{cpu_text(result)}, model {model_text(result)}.")


def enrollment_quality_block() -> str:
    """Recognition by enrollment-photo quality on LFW (benchmarks/enrollment_quality.py): the score's validity."""
    result = load("enrollment_quality")
    rows = ["| enrollment photos | enrollments | mean score | rank-1 | named at the threshold |",
            "|---|---:|---:|---:|---:|"]
    groups = [("lowest-quality tenth", result["lowest_tenth"]), ("the other nine tenths", result["the_rest"]),
              ("flagged low (refused unless allowed)", result["flagged_low"]), ("not flagged", result["not_flagged"])]
    groups += [(f"quartile {i + 1}" + (" (lowest)" if i == 0 else " (highest)" if i == 3 else ""), row)
               for i, row in enumerate(result["quartiles"])]
    for label, row in groups:
        rows.append(f"| {label} | {row['enrollments']:,} | {row['mean_score']:.3f} | **{row['rank1']:.3f}** | "
                    f"{row['named_at_threshold']:.3f} |")
    return ("\n".join(rows) + f"\n\n{result['people']} people, {result['enrollments']:,} enrollments; a face is "
            f"*low* below {result['low_score']:.3f}; the gallery's threshold {result['threshold_for_gallery']:.3f}. "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}.")


def rest_block() -> str:
    """Identify over the REST API vs in-process (benchmarks/rest_throughput.py)."""
    result = load("rest_throughput")
    rows = [f"| identify, {result['clients']} concurrent clients | requests/s | p50 | p99 | named right |",
            "|---|---|---|---|---|"]
    before = load("rest_throughput_before_scores")
    runs = [("", result)] + ([(f" — before normalised scores (`{before['provenance']['commit'][:7]}`, same session)",
                               before)] if before else [])
    for suffix, measured in runs:
        for label, key in (("in-process (`Gallery.identify`)", "in_process"),
                           ("REST (`POST /api/v1/identify`)", "rest")):
            row = measured[key]
            rows.append(f"| {label}{suffix} | {row['requests_per_s']:.1f} | {row['p50_ms']:.0f} ms | "
                        f"{row['p99_ms']:.0f} ms | {row['named_right']} of {row['requests']} |")
    machine = result.get("machine", {})
    return ("\n".join(rows) + f"\n\nREST over in-process throughput: "
            f"{result['rest_over_in_process']['throughput_ratio']:.2f}x. Load average at the start "
            f"{', '.join(str(v) for v in machine.get('load_average_at_start', []))} on {machine.get('cpus')} cores "
            f"(the ratio is the figure to read). Measured on: {cpu_text(result)}, model {model_text(result)}.")


def scale_block() -> str:
    """Search latency, recall, memory and enrollment at 1,000 to 1,000,000 people (benchmarks/scale.py)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scale import markdown_tables

    result = load("scale")
    return markdown_tables(result) + f"\n\nMeasured on: {cpu_text(result)}, model {model_text(result)}."


def replicas_block() -> str:
    """Identify latency of two replicas on one PostgreSQL while others enroll (benchmarks/replica_latency.py): one
    table per CPU it was measured on (`replica_latency.json`, `replica_latency_<cpu>.json`)."""
    tables = []
    for name in ["replica_latency", *sorted(p.stem for p in RESULTS.glob("replica_latency_*.json"))]:
        result = load(name)
        if not result:
            continue
        tables.append(
            f"| identify, {result['replicas']} replicas, {result['identify_threads']} threads | identifies | p50 | "
            f"p99 |\n|---|---|---|---|\n" + "\n".join(
                f"| {label} | {result[key]['identifies']:,} | {result[key]['p50_ms']:.0f} ms | "
                f"{result[key]['p99_ms']:.0f} ms |" for label, key in
                (("alone", "alone"), (f"while {result['enroll_threads']} threads enroll", "while_enrolling")))
            + f"\n\np99 ratio {result['p99_ratio']:.2f}; {result['enrolled']} people enrolled meanwhile, "
              f"{len(result['enrolled_missing'])} lost. Measured on: {cpu_text(result)}, model {model_text(result)}.")
    return "\n\n".join(tables)


def data_slope_block() -> str:
    """Half vs all of the training identities at the same compute (benchmarks/data_slope.py), held-out scores."""
    result = load("data_slope")
    if not result:
        return "(not measured yet: `python benchmarks/data_slope.py --out benchmarks/results/data_slope.json`)"
    rows = ["| run | training identities | epochs (same steps) | held-out one-shot rank-1 (30 draws) | "
            "TAR at FAR 1e-4 | ClosestIsPositiveAccuracy |", "|---|---|---|---|---|---|"]
    labels = {"start": ("the shipped weights (the start of both)", "–", "–")}
    for name, fraction in result["fractions"].items():
        labels[name] = (name, f"{fraction['identities']:.0%}", str(fraction["epochs"]))
    for name, (label, share, epochs) in labels.items():
        score = result["scores"][name]
        rows.append(f"| {label} | {share} | {epochs} | {score['one_shot_rank1']:.4f} | {score['tar_at_far_1e-4']:.4f} | "
                    f"{score['closest_is_positive_accuracy']:.4f} |")
    gap = result["half_minus_whole"]
    return ("\n".join(rows) + f"\n\nHalf minus all: one-shot rank-1 {100 * gap['one_shot_rank1']:+.2f} points, TAR at "
            f"FAR 1e-4 {100 * gap['tar_at_far_1e-4']:+.2f} points. Measured on: {cpu_text(result)}, warm start "
            f"{model_text(result)}.")


def utkface_block() -> str:
    """UTKFace as teacher-labelled faces: what was kept, and what decontamination dropped (scripts/data/utkface.py)."""
    result = load("utkface_decontamination")
    if not result:
        return "(not built yet: `python scripts/data/utkface.py MIRROR cache/utkface --mirror --results ...`)"
    near_lfw, near_celeba = result["within_distance_of_lfw_evaluation"], result["within_distance_of_celeba_held_out"]
    return (f"| photos | faces detected | dropped near an LFW evaluation photo | dropped near a held-out CelebA "
            f"identity | dropped | kept |\n|---|---|---|---|---|---|\n| {result['photos']:,} | {result['detected']:,} | "
            f"{result['dropped_near_lfw_evaluation']:,} | {result['dropped_near_celeba_held_out']:,} | "
            f"{result['dropped']:,} | **{result['kept']:,}** |\n\nSame-person distance "
            f"{result['same_person_distance']:.3f} (the teacher's one-to-many equivalent of dlib's "
            f"{result['dlib_tolerance']}: {result['false_hits_per_crop_allowed']} different people expected within it "
            f"among the {result['references']['lfw_evaluation_photos']:,} + "
            f"{result['references']['celeba_held_out_photos']:,} reference photos). At dlib's own "
            f"{result['dlib_tolerance']}, {near_lfw[str(result['dlib_tolerance'])]:,} of the crops would be 'near' an "
            f"LFW evaluation photo and {near_celeba[str(result['dlib_tolerance'])]:,} a held-out CelebA one. Source "
            f"{result['source']['repository']}@{result['source']['commit'][:8]}. Measured on: {cpu_text(result)}.")


def augmentation_ablation_block() -> str:
    """Stored augmentations' teacher targets vs fresh augmentations with the clean crop's target
    (benchmarks/augmentation_ablation.py), held-out scores at the same steps."""
    result = load("augmentation_ablation")
    if not result:
        return ("(not measured yet: `python benchmarks/augmentation_ablation.py --out "
                "benchmarks/results/augmentation_ablation.json`)")
    rows = ["| run | distillation target of an augmented crop | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | "
            "ClosestIsPositiveAccuracy |", "|---|---|---|---|---|"]
    labels = {"start": ("the shipped weights (the start of both)", "–"),
              "fresh": ("fresh", "the teacher's descriptor of the clean crop (or its mirror)"),
              "stored": ("stored", f"for {result['share']:.0%} of each batch: the teacher's descriptor of "
                                   + ("its stored augmentation" if result["augmentations"] == 1 else
                                      f"one of its {result['augmentations']} stored augmentations")
                                   + ", those very pixels")}
    for name, (label, target) in labels.items():
        score = result["scores"][name]
        rows.append(f"| {label} | {target} | {score['one_shot_rank1']:.4f} | {score['tar_at_far_1e-4']:.4f} | "
                    f"{score['closest_is_positive_accuracy']:.4f} |")
    gap, shift = result["stored_minus_fresh"], result["target_shift"]
    return ("\n".join(rows) + f"\n\nStored minus fresh: one-shot rank-1 {100 * gap['one_shot_rank1']:+.2f} points, TAR "
            f"at FAR 1e-4 {100 * gap['tar_at_far_1e-4']:+.2f} points, ClosestIsPositiveAccuracy "
            f"{100 * gap['closest_is_positive_accuracy']:+.2f} points ({result['identities']:,} celeba112 identities, "
            f"{result['epochs']} epochs, the same steps). How far an augmentation moves the teacher's descriptor: "
            f"cosine to the clean crop's {shift['mean']:.3f} on average (quartiles "
            f"{', '.join(f'{q:.3f}' for q in shift['quartiles'])}, {shift['augmentations']:,} augmentations). "
            f"Measured on: {cpu_text(result)}, warm start {model_text(result)}.")


def train_speed_block() -> str:
    """Training images per second by stem and precision on one CPU (benchmarks/train_speed.py)."""
    rows = ["| CPU | stem | fp32 img/s | bf16 img/s | the loop uses |", "|---|---|---|---|---|"]
    results = [json.loads(path.read_text()) for path in sorted(RESULTS.glob("train_speed*.json"))]
    for result in results:
        by_stem: dict[str, dict[str, float]] = {}
        for row in result["rows"]:
            by_stem.setdefault(row["stem"], {})[row["precision"]] = row["images_per_second"]
        for stem, speeds in by_stem.items():
            rows.append(f"| {cpu_text(result)} | {stem} | {speeds['fp32']:.0f} | {speeds['bf16']:.0f} | "
                        f"{'bf16' if result['native_bf16'] else 'fp32'} |")
    if not results:
        return "(not measured yet: `python benchmarks/train_speed.py --out benchmarks/results/train_speed_<cpu>.json`)"
    return "\n".join(rows) + (f"\n\nOne optimisation step of the embedder alone (batch {result['batch']}, every core, "
                               f"torch {result['torch']}).") + retrain_hours_text(results)


RETRAIN_STAGES = ("v4", "v5", "v6", "v7", "v8")  # the stages scripts/retrain.sh trains (from model v3)


def retrain_hours_text(speeds: list[dict]) -> str:
    """What scripts/retrain.sh's training costs on each CPU of `speeds` (the train_speed results) at the loop's
    precision (the network's steps alone), beside the training wall time it took on the CPU that made the shipped
    model (the card)."""
    training = json.loads(CARD.read_text())["training"]
    epochs = sum(stage["epochs"] for stage in training["lineage"] if stage["stage"] in RETRAIN_STAGES)
    images = training["data"]["training_images"]
    estimates = []
    for result in speeds:
        rate = next(row["images_per_second"] for row in result["rows"]
                    if row["stem"] == "high_res" and row["chosen_by_the_loop"])
        estimates.append(f"{epochs * images / rate / 3600:.1f} h on {cpu_text(result)}")
    measured = sum(training["wall_seconds"][f"train_{stage}"] for stage in RETRAIN_STAGES) / 3600
    return (f" The {epochs} epochs of {images:,} crops that scripts/retrain.sh trains (high-resolution stem) are, "
            f"at these rates, {'; '.join(estimates)} of network steps alone; on the CPU that made "
            f"the shipped model they took {measured:.1f} h, loading and the whole loop included "
            f"(`models/training/retrain_steps.json`).")


def standard_stem_block() -> str:
    """The standard-stem candidate against the shipped model on the held-out selection identities, one run
    (benchmarks/embedding_options.py --other shipped=...: benchmarks/results/standard_stem_candidate.json)."""
    result = load("standard_stem_candidate")
    if not result:
        return ("(not measured yet: `python benchmarks/embedding_options.py --model runs/v9r/model_fp32.onnx --int8 "
                "--other shipped=models/facerec-r18-arcface.onnx --out benchmarks/results/standard_stem_candidate.json`)")
    names = {"shipped": "shipped model v8 (high-resolution stem, int8)", "fp32": "standard-stem candidate, fp32",
             "int8": "standard-stem candidate, int8 (7-bit weights)"}
    rows = ["| model (test-time flip) | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | "
            "ClosestIsPositiveAccuracy | ms per face, 1 thread |", "|---|---|---|---|---|"]
    for option in result["options"]:
        if option["flip_tta"] and option["name"] in names:
            rows.append(f"| {names[option['name']]} | {option['one_shot_rank1']:.4f} | {option['tar_at_far_1e-4']:.4f} | "
                        f"{option['closest_is_positive_accuracy']:.4f} | {option['ms_per_face_1_thread']:.1f} |")
    text = "\n".join(rows) + f"\n\nMeasured in one run on: {cpu_text(result)}."
    counted, shipped = load("instruction_count_standard_stem"), load("instruction_count")
    if counted and shipped:
        text += (f" On an AVX2 CPU without VNNI, by valgrind's instruction count (an estimate, not a timing; "
                 f"`benchmarks/instruction_count.py --model ...`): dlib needs "
                 f"{counted['ratio_face_recognition_over_facerec']:.1f}x the candidate's instructions per face, "
                 f"{shipped['ratio_face_recognition_over_facerec']:.1f}x the shipped model's.")
    return text


def enrollment_views_block() -> str:
    """Enrollment templates averaged over moved views of the enrolled crop against today's single view, on the
    held-out selection identities (benchmarks/enrollment_views.py)."""
    result = load("enrollment_views")
    if not result:
        return ("(not measured yet: `python benchmarks/enrollment_views.py --out "
                "benchmarks/results/enrollment_views.json`)")
    rows = ["| enrollment template | views (each with its mirror) | held-out one-shot rank-1 (30 draws) | "
            "TAR at FAR 1e-4 | TAR at FAR 1e-3 |", "|---|---|---|---|---|"]
    for row in result["rows"]:
        rows.append(f"| {row['template']} | {len(row['views'])} | {row['one_shot_rank1']:.4f} | "
                    f"{row['tar_at_far_1e-04']:.4f} | {row['tar_at_far_1e-03']:.4f} |")
    gain = result["best_minus_today"]
    return ("\n".join(rows) + f"\n\nBest ({result['best']}) minus today: one-shot rank-1 "
            f"{100 * gain['one_shot_rank1']:+.2f} points, TAR at FAR 1e-4 {100 * gain['tar_at_far_1e-04']:+.2f} "
            f"points ({result['held_out_identities']} identities, {result['photos']:,} photos). Measured on: "
            f"{cpu_text(result)}, model {model_text(result)}.")


def growth_block() -> str:
    """The expected true-match rate at 10 / 100 / 1,000 / 10,000 enrolled faces at the default stranger-match rate,
    from the shipped model card (what the Health tab says of a gallery of that size)."""
    from facerec.openset.model_card import policy_for
    from facerec.settings import Settings

    settings = Settings()
    policy = policy_for(settings)
    rules = [(faces, policy.for_gallery(faces)) for faces in (10, 100, 1_000, 10_000)]
    card = json.loads(CARD.read_text())
    return ("| enrolled faces | " + " | ".join(f"{faces:,}" for faces, _ in rules) + " |\n|---|"
            + "---|" * len(rules) + "\n| threshold | " + " | ".join(f"{rule.threshold:.3f}" for _, rule in rules)
            + " |\n| a new photo of an enrolled person recognised | "
            + " | ".join(f"{rule.true_match_rate:.0%}" for _, rule in rules) + " |\n\n"
            f"At an accepted stranger-match rate of {settings.fpir:.0%}, from the model card of "
            f"`{card['sha256'][:12]}` (its calibration on held-out identities). More photos per person raise these "
            "figures "
            "([results](docs/results.md)).")


def asymmetric_flip_block() -> str:
    """Flip at enrollment only against flip on both sides, held-out identities (benchmarks/asymmetric_flip.py)."""
    result = load("asymmetric_flip")
    if not result:
        return ("(not measured yet: `python benchmarks/asymmetric_flip.py --out "
                "benchmarks/results/asymmetric_flip.json`)")
    rows = ["| option | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | ms per query face, 1 thread |",
            "|---|---|---|---|"]
    for label, key, speed in (("flip on both sides (shipped)", "both_flipped", "query_ms_flip"),
                              ("flip at enrollment only", "flip_at_enrollment_only", "query_ms_once")):
        rows.append(f"| {label} | {result[key]['rank1']:.4f} | {result[key]['tar_at_far_1e-4']:.4f} | "
                    f"{result['speed'][speed]:.1f} |")
    cost, budget = result["cost"], result["budget"]
    verdict = "within" if result["within_budget"] else "over"
    return ("\n".join(rows) + f"\n\nCost: {100 * cost['rank1']:.2f} points of rank-1 and "
            f"{100 * cost['tar_at_far_1e-4']:.2f} of TAR at FAR 1e-4, {verdict} the budget of "
            f"{100 * budget['rank1']:.1f} and {100 * budget['tar_at_far_1e-4']:.1f} points. {result['identities']} "
            f"held-out identities, {result['photos']:,} photos. Measured on: {cpu_text(result)}, model "
            f"{model_text(result)}.")


def flood_block() -> str:
    """A normal identify while 8 anonymous clients send the costliest inputs (benchmarks/flood.py)."""
    result = load("flood")
    if not result:
        return "(not measured yet: `python benchmarks/flood.py --out benchmarks/results/flood.json`)"
    ninth, memory, bounds = result["ninth_client"], result["app_memory"], result["bounds"]
    attacks = "; ".join(f"{kind}: " + ", ".join(f"{outcome} x{count}" for outcome, count in outcomes.items())
                        for kind, outcomes in result["attacks"].items())
    return (f"| the ninth client ({ninth['route']}) | identifies | errors | p50 | p99 | max |\n"
            "|---|---|---|---|---|---|\n"
            f"| alone, before the flood | 20 | 0 | {1000 * ninth['alone_p50_s']:.0f} ms | – | – |\n"
            f"| during {result['seconds']:.0f} s of {result['attackers']} anonymous clients | "
            f"{ninth['identifies']:,} | {len(ninth['errors'])} | {1000 * ninth['p50_s']:.0f} ms | "
            f"{1000 * ninth['p99_s']:.0f} ms | {1000 * ninth['max_s']:.0f} ms |\n\n"
            f"The app's memory: peak resident {memory['peak_rss_mb']:,.0f} MB (largest sampled "
            f"{memory['largest_sampled_rss_mb']:,.0f} MB); the bounds were p99 <= {bounds['p99_s']:g} s and "
            f"{bounds['rss_mb']:,} MB. What the attackers got: {attacks}. Gallery of {result['gallery_people']} "
            f"people. Measured on: {cpu_text(result)}, model {model_text(result)}.")


def probe_quality_block() -> str:
    """Refusing the lowest-quality probe faces against a stricter threshold (benchmarks/probe_quality.py)."""
    result = load("probe_quality")
    if not result:
        return "(not measured yet: `python benchmarks/probe_quality.py --out benchmarks/results/probe_quality.json`)"
    rows = ["| rule at the default rate | threshold | probes refused | FPIR (non-mated searches named) | DIR |",
            "|---|---|---|---|---|"]
    for name, key in (("every probe answered (shipped)", "plain"),
                      ("probes under the quality score's low mark answered \"too poor to tell\"", "refuse_low_quality"),
                      ("a stricter threshold instead, to the same FPIR", "stricter_threshold_same_fpir")):
        measured = result[key]
        threshold = measured.get("threshold", result["threshold"])
        rows.append(f"| {name} | {threshold:.3f} | {100 * measured['refused_share']:.1f}% | "
                    f"{100 * measured['fpir']:.2f}% | {100 * measured['dir']:.1f}% |")
    verdict = "wins" if result["rule_wins"] else "does not win: not shipped"
    return ("\n".join(rows) + f"\n\n{result['identities']} held-out identities, {result['probes']:,} probes "
            f"({', '.join(result['versions'])}), {result['mated_searches']:,} mated and "
            f"{result['non_mated_searches']:,} non-mated searches (leave-one-out) against a gallery of one photo per "
            f"person; score {result['score']}, low mark {result['low_score']:.3f}. The rule {verdict}. Measured on: "
            f"{cpu_text(result)}, model {model_text(result)}.")


def gpu_stage_block() -> str:
    """Model v9's arms (one GPU run, scripts/device_training.py) beside the model they started from, measured the same
    way on the held-out selection identities (benchmarks/stage_average.py; the start's row from the recipe
    diagnostic's measurement of that model)."""
    path = ROOT / "models" / "training" / "stage_average.json"
    if not path.exists():
        return "(not measured yet: `python benchmarks/stage_average.py --stage ... --out models/training/stage_average.json`)"
    result = json.loads(path.read_text())
    start = load("recipe_diagnostic").get("scores", {}).get("start")
    rows = ["| candidate | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | ClosestIsPositiveAccuracy |",
            "|---|---|---|---|"]
    if start:
        rows.append(f"| model v8, the start of both arms | {start['one_shot_rank1']:.4f} | "
                    f"{start['tar_at_far_1e-4']:.4f} | {start['closest_is_positive_accuracy']:.4f} |")
    chosen = result["chosen"]["name"]
    for candidate in result["candidates"]:
        name = candidate["name"] + (" (chosen)" if candidate["name"] == chosen else "")
        rows.append(f"| {name} | {candidate['one_shot_rank1']:.4f} | {candidate['tar_at_far_1e-4']:.4f} | "
                    f"{candidate['closest_is_positive_accuracy']:.4f} |")
    shipped = load("embedding_options").get("chosen")
    if shipped:
        rows.append(f"| shipped: the chosen weights as `{Path(shipped['model']).name}` | "
                    f"{shipped['one_shot_rank1']:.4f} | {shipped['tar_at_far_1e-4']:.4f} | "
                    f"{shipped['closest_is_positive_accuracy']:.4f} |")
    return ("\n".join(rows) + f"\n\n150 held-out identities, {result['photos']:,} photos, test-time flip. Rule: "
            f"{result['rule']}. Measured on: {cpu_text(result)}; the shipped row on {cpu_text(load('embedding_options'))}, "
            f"model {model_text(load('embedding_options'))}.")


def gpu_stage_v10_block() -> str:
    """The second GPU stage (two arms from v9 as it shipped), measured as v9's were; v9 stays when no candidate
    beats it by more than the draws differ."""
    result = load("gpu_stage_v10")
    if not result:
        return "(not measured yet: `python benchmarks/stage_average.py --stage v9=... --stage ... --out benchmarks/results/gpu_stage_v10.json`)"
    run = result["run"]
    rows = ["| candidate | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | ClosestIsPositiveAccuracy |",
            "|---|---|---|---|"]
    for candidate in result["candidates"]:
        rows.append(f"| {candidate['name']} | {candidate['one_shot_rank1']:.4f} | {candidate['tar_at_far_1e-4']:.4f} | "
                    f"{candidate['closest_is_positive_accuracy']:.4f} |")
    best, v9 = result["chosen"], result["candidates"][0]
    return ("\n".join(rows) + f"\n\nEach arm {run['epochs']} epochs of {run['train_rows']:,} crops from "
            f"{run['start']}, {run['probe_images_per_second']:,} images/s for one arm alone; 150 held-out identities, "
            f"{result['photos']:,} photos, test-time flip. Best candidate {best['name']}: "
            f"{100 * (best['one_shot_rank1'] - v9['one_shot_rank1']):+.2f} points of rank-1 and "
            f"{100 * (best['tar_at_far_1e-4'] - v9['tar_at_far_1e-4']):+.2f} of TAR over v9. Measured on: "
            f"{cpu_text(result)}.")


def recipe_diagnostic_block() -> str:
    """Model v8's stage recipe and its variants at the same steps, scored on held-out identities
    (benchmarks/recipe_diagnostic.py)."""
    result = load("recipe_diagnostic")
    if not result:
        return "(not measured yet: `python benchmarks/recipe_diagnostic.py --arms structure no_structure --out ...`)"
    rows = ["| arm | arguments beyond v8's terms | held-out one-shot rank-1 (30 draws) | TAR at FAR 1e-4 | "
            "ClosestIsPositiveAccuracy | TAR minus the control |", "|---|---|---|---|---|---|"]
    control = result["scores"].get(result["control"], {})
    for name, score in result["scores"].items():
        arguments = "the start of every arm" if name == "start" else " ".join(score.get("arguments", [])) or "–"
        gap = (f"{100 * (score['tar_at_far_1e-4'] - control['tar_at_far_1e-4']):+.1f} points"
               if control and name not in ("start", result["control"]) else "–")
        rows.append(f"| {name} | `{arguments}` | {score['one_shot_rank1']:.4f} | {score['tar_at_far_1e-4']:.4f} | "
                    f"{score['closest_is_positive_accuracy']:.4f} | {gap} |")
    settings = result["settings"]
    return ("\n".join(rows) + f"\n\nEvery arm: `{' '.join(settings['common'])}`, {settings['epochs']} epochs on "
            f"{settings['identities']:,} celeba112 training identities, from the shipped weights; the control is "
            f"`{result['control']}`. Measured on: {cpu_text(result)}, warm start {model_text(result)}.")


def identify_profile_block() -> str:
    """One identify before and after it was made one pass (benchmarks/identify_profile.py, run on each commit)."""
    runs = [(name, load(name)) for name in ("identify_profile_before", "identify_profile")]
    runs = [(name, result) for name, result in runs if result]
    if not runs:
        return "(not measured yet: `python benchmarks/identify_profile.py --out benchmarks/results/identify_profile.json`)"
    rows = ["| commit | caller | journal syncs | threshold rules | model checks | journal reads under the index lock |",
            "|---|---|---|---|---|---|"]
    for _name, result in runs:
        commit = result["provenance"].get("commit", "?")[:7]
        for caller, label in (("rest_defaults", "REST, defaults"), ("page_without_password", "page, no password")):
            work = result["per_request"][caller]
            rows.append(f"| {commit} | {label} | {work['journal_syncs']:g} | {work['threshold_rules']:g} | "
                        f"{work['model_checks']:g} | {work['journal_reads_under_index_lock']:g} |")
    latency = ["| commit | REST, one client: p50 | p99 | page, click to result: median | largest |",
               "|---|---|---|---|---|"]
    for _name, result in runs:
        rest, page = result["rest_one_client"], result["page_click_to_result"]
        latency.append(f"| {result['provenance'].get('commit', '?')[:7]} | {rest['p50_ms']:.0f} ms | "
                       f"{rest['p99_ms']:.0f} ms | {page['median_ms']:.0f} ms | {page['max_ms']:.0f} ms |")
    measured = "; ".join(f"{result['provenance'].get('commit', '?')[:7]} on {cpu_text(result)}, model "
                         f"{model_text(result)}" for _name, result in runs)
    last = runs[-1][1]
    return ("\n".join(rows) + "\n\n" + "\n".join(latency)
            + f"\n\nPer request, averaged over 20 in-process calls (a fraction of a model check: it ran once, on the first "
              f"search after the gallery last changed); {last['rest_one_client']['requests']} REST "
              f"requests and {last['page_click_to_result']['clicks']} clicks in Chromium, gallery of "
              f"{last['faces_enrolled']} people. Measured: {measured}.")


def engines_block() -> str:
    """Search engines at 100,000 and 1,000,000 faces (benchmarks/scale.py: scale_pgvector.json), and Health at
    100,000 faces (benchmarks/health_scale.py: health_scale.json)."""
    result, health = load("scale_pgvector"), load("health_scale")
    if not result:
        return "(not measured yet: `python benchmarks/scale.py --sizes 100000 1000000 --kinds flat hnsw pgvector`)"
    names = {"flat": "FAISS flat (exact)", "hnsw": "FAISS hnsw", "pgvector": "pgvector HNSW"}
    rows = ["| faces | engine | ef | build | search p50 / p99 | recall@1 | bytes per identity |",
            "|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        held = (f"{row['index_bytes_per_identity']:,.0f} B memory" if row["disk_bytes_per_identity"] is None
                else f"{row['disk_bytes_per_identity']:,.0f} B disk (table + index)")
        rows.append(f"| {row['size']:,} | {names.get(row['kind'], row['kind'])} | {row['ef_search'] or '–'} | "
                    f"{row['build_s']:,.1f} s | {row['search_ms']:.1f} / {row['search_p99_ms']:.1f} ms | "
                    f"{row['recall_at_1']:.3f} | {held} |")
    text = ("\n".join(rows) + f"\n\n`{result['command']}`: {result['note']}. Face-like synthetic vectors, so the "
            f"search engines alone are measured. Measured on: {cpu_text(result)}, model {model_text(result)}.")
    if health:
        runs = "; ".join(f"{run['backend']} + {run['index']}: median {run['health_s_median']:.1f} s of "
                         f"{len(run['health_s'])} runs" for run in health["runs"])
        sample = health["runs"][0]["sample"]
        text += (f"\n\nHealth at {health['faces']:,} faces (`python benchmarks/health_scale.py`), sampled and "
                 f"labelled as such (the metrics over {sample['faces']:,} faces of {sample['identities']:,} people, "
                 f"{sample['searched_faces']:,} faces searched against all {sample['of_faces']:,}): {runs}. "
                 f"Measured on: {cpu_text(health)}, model {model_text(health)}.")
    return text


def threshold_example_block() -> str:
    """The sentence every answer carries, for 100 people enrolled from one photo each at the default rate, from
    the shipped model card (what identify says of such a gallery)."""
    from facerec.openset.model_card import policy_for
    from facerec.settings import Settings
    from facerec.words.threshold import threshold_sentence

    return "> " + threshold_sentence(policy_for(Settings()).for_gallery(100, 100))


def reindex_online_block() -> str:
    """One client identifying while a 2,000-face gallery is reindexed, on both backends
    (benchmarks/reindex_online.py)."""
    result = load("reindex_online")
    if not result:
        return "(not measured yet: `python benchmarks/reindex_online.py --out benchmarks/results/reindex_online.json`)"
    rows = ["| backend | faces | identify alone: p50 / p99 | during the reindex: identifies, p50 / p99 | reindex |",
            "|---|---|---|---|---|"]
    for backend, label in (("sqlite", "SQLite + FAISS flat"), ("postgresql", "PostgreSQL + pgvector")):
        run = result[backend]
        alone, during = run["alone"], run["during_reindex"]
        rows.append(f"| {label} | {run['faces']:,} | {alone['p50_ms']:.0f} / {alone['p99_ms']:.0f} ms | "
                    f"{during['identifies']:,}, {during['p50_ms']:.0f} / {during['p99_ms']:.0f} ms | "
                    f"{run['reindexed']:,} faces in {run['reindex_seconds']:.1f} s |")
    return ("\n".join(rows) + f"\n\n`{result['command']}`; {result['sqlite']['people']} LFW people and synthetic "
            f"faces, one client. Measured on: {cpu_text(result)}, model {model_text(result)}.")


def replay_learning_block() -> str:
    """DIR and FPIR as confirmed faces become templates (benchmarks/replay_learning.py)."""
    result = load("replay_learning")
    if not result:
        return "(not measured yet: `python benchmarks/replay_learning.py --out benchmarks/results/replay_learning.json`)"
    honest, errs = result["honest_user"], result["user_errs"]
    rows = ["| confirmations per person | enrolled faces | threshold | DIR (mated searches named) | "
            "FPIR (strangers named) |", "|---|---|---|---|---|"]
    for count, step in sorted(honest["steps"].items(), key=lambda item: int(item[0])):
        rows.append(f"| {count} | {step['faces']:,} | {step['threshold']:.4f} | {100 * step['dir']:.1f}% "
                    f"({step['named']:,} of {step['mated_searches']:,}) | {100 * step['fpir']:.2f}% "
                    f"({step['false_matches']:,} of {step['non_mated_searches']:,}) |")
    last_honest = honest["steps"][str(max(int(k) for k in honest["steps"]))]
    last_errs = errs["steps"][str(max(int(k) for k in errs["steps"]))]
    text = ("\n".join(rows) + f"\n\n{honest['people']} LFW people, {honest['learned']:,} of "
            f"{honest['answers_labelled']:,} labelled faces learned as templates. With the user wrong "
            f"{100 * result['protocol']['user_error_rate']:.0f}% of the time ({errs['wrong_labels']} wrong labels, "
            f"{errs['wrong_labels_learned']} of them learned): DIR {100 * last_errs['dir']:.1f}% against "
            f"{100 * last_honest['dir']:.1f}%, FPIR {100 * last_errs['fpir']:.2f}%")
    after = errs.get("after_removing_wrong_templates")
    if after:
        text += (f"; with the wrongly learned templates removed, DIR {100 * after['dir']:.1f}%, FPIR "
                 f"{100 * after['fpir']:.2f}%")
    return text + f". Measured on: {cpu_text(result)}, model {model_text(result)}."


def suggestions_block() -> str:
    """Suggested people on LFW strangers seen again and again (benchmarks/suggestions.py)."""
    result = load("suggestions")
    if not result:
        return "(not measured yet: `python benchmarks/suggestions.py --out benchmarks/results/suggestions.json`)"
    protocol = result["protocol"]
    rows = ["| grouping (pairwise FAR, cosine) | hidden when it looks like an enrolled person (FAR, cosine) | "
            "suggestions | one person | people seen 3-5 times who are suggested | enrolled faces in a suggestion |",
            "|---|---|---|---|---|---|"]

    def row(name: str, grouping_far: str, near_far: str, measured: dict) -> str:
        return (f"| {name}{grouping_far}, {measured['grouping_threshold']:.4f} | {near_far}, "
                f"{measured['near_threshold']:.4f} | {measured['suggestions']:,} | {100 * measured['purity']:.1f}% "
                f"({measured['one_person']:,}) | {100 * measured['recall']:.1f}% ({measured['suggested']:,} of "
                f"{measured['repeated_strangers']:,}) | {measured['enrolled_faces_in_suggestions']} |")

    shipped = {**result["shipped"], "grouping_threshold": result["grouping_threshold"],
               "near_threshold": result["near_threshold"]}
    rows.append(row("**shipped**: ", f"{protocol['grouping_far']:g}", f"{protocol['near_far']:g}", shipped))
    for key, measured in result.get("other_rates", {}).items():
        grouping_far, near_far = (part.split()[1] for part in key.split(", "))
        rows.append(row("", grouping_far, near_far, measured))
    names = {"score and memory": "the model cohort's normalised score in place of the cosine (threshold a score): ",
             "score": "that score alone, without the memory's z-score (threshold a score): "}
    for pair_test, measured in result.get("pair_tests", {}).items():
        rows.append(row(names.get(pair_test, pair_test + ": "), f"{protocol['grouping_far']:g}",
                        f"{protocol['near_far']:g}", measured))
    return ("\n".join(rows) + f"\n\n{protocol['enrolled']} people enrolled, {protocol['photos']:,} photos identified, "
            f"{result['kept_faces']:,} unknown faces kept; a suggestion is at least {protocol['min_faces']} faces "
            f"from at least {protocol['min_photos']} photos, and two faces match when both the cosine and their "
            f"cohort z-score (at least {protocol['min_z']:g}) say so. Grouping every kept face took "
            f"{result['grouping_seconds_all_kept_faces']:.1f} s. Measured on: {cpu_text(result)}, model "
            f"{model_text(result)}.")


BLOCKS: dict[str, Callable[[], str]] = {"growth": growth_block, "accuracy": accuracy_block, "cpus": cpus_block,
                                        "peer": peer_block,
                                        "speed": speed_block, "sightings": sightings_block,
                                        "open_set": open_set_block, "open_set_photos": open_set_photos_block,
                                        "calibration": calibration_block, "speed_line": speed_line_block,
                                        "enrollment_quality": enrollment_quality_block, "rest": rest_block,
                                        "scale": scale_block, "replicas": replicas_block,
                                        "data_slope": data_slope_block, "utkface": utkface_block,
                                        "augmentation_ablation": augmentation_ablation_block,
                                        "train_speed": train_speed_block,
                                        "standard_stem": standard_stem_block,
                                        "enrollment_views": enrollment_views_block, "flood": flood_block,
                                        "identify_profile": identify_profile_block,
                                        "engines": engines_block,
                                        "threshold_example": threshold_example_block,
                                        "lookalike": lookalike_block,
                                        "reindex_online": reindex_online_block,
                                        "replay_learning": replay_learning_block,
                                        "suggestions": suggestions_block,
                                        "recipe_diagnostic": recipe_diagnostic_block, "gpu_stage": gpu_stage_block, "gpu_stage_v10": gpu_stage_v10_block,
                                        "probe_quality": probe_quality_block,
                                        "asymmetric_flip": asymmetric_flip_block,
                                        "cohort_sweep": cohort_sweep_block, "rerank": rerank_block, "score_cost": score_cost_block,
                                        "scores": scores_block, "peer_open_set": peer_open_set_block}


def generated(text: str, names: tuple[str, ...], page: str) -> str:
    for name in names:
        pattern = re.compile(rf"(<!-- results:{name} -->\n).*?(\n<!-- /results:{name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{page} has no generated block '{name}'")
        block = BLOCKS[name]()
        text = pattern.sub(lambda match, block=block: match.group(1) + block + match.group(2), text)
    return text


def main() -> int:
    stale = []
    for page, names in PAGES.items():
        current = page.read_text()
        wanted = generated(current, names, page.name)
        if "--write" in sys.argv[1:]:
            page.write_text(wanted)
        elif wanted != current:
            stale.append(str(page.relative_to(ROOT)))
    if stale:
        print(f"{', '.join(stale)}: the results tables differ from benchmarks/results: run python "
              "scripts/results_tables.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
