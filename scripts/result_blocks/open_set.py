"""Open-set tables: the threshold calibration, the cohort and its cost, the re-rank depth, scores beside the peer."""

from __future__ import annotations

import json
import math

from result_blocks.common import CARD, cpu_text, load, model_text


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


def threshold_example_block() -> str:
    """The sentence every answer carries, for 100 people enrolled from one photo each at the default rate, from
    the shipped model card (what identify says of such a gallery)."""
    from facerec.openset.model_card import policy_for
    from facerec.settings import Settings
    from facerec.words.threshold import threshold_sentence

    return "> " + threshold_sentence(policy_for(Settings()).for_gallery(100, 100))
