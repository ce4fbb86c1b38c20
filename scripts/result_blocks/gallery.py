"""Gallery and server tables: sightings, enrollment quality, REST, scale, replicas, engines, floods, learning."""

from __future__ import annotations

import sys

from result_blocks.common import RESULTS, ROOT, cpu_text, defined, load, model_text


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
        rows.append(f"| {name} | {defined(alone[key])} | {defined(seen[key])} |")
    if "health_s" in result:
        rows += ["", f"The report took {result['health_s']:.2f} s here, and "
                     f"{result['health_s_with_10000_sightings_median_of_3']:.2f} s with the memory full (10,000 "
                     "sightings, median of 3)."]
    return "\n".join(rows)


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
            f"{bounds['rss_mb']:,} MB. What the attackers got: {attacks}.{_input_sizes(result)} Gallery of "
            f"{result['gallery_people']} people. Measured on: {cpu_text(result)}, model {model_text(result)}.")


def _input_sizes(result: dict) -> str:
    """' The inputs' sizes: mosaic 532 kB, ...' (results before the sizes were recorded have none)."""
    sizes = result.get("input_bytes")
    if not sizes:
        return ""
    said = [f"{kind} {size / 1000:,.0f} kB" if size >= 1000 else f"{kind} {size} bytes" for kind, size in sizes.items()]
    return " The inputs' sizes: " + ", ".join(said) + "."


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


def strangers_memory_block() -> str:
    """The admin's list and an anonymous identify while 20,000 kept faces are grouped
    (benchmarks/strangers_memory.py)."""
    result = load("strangers_memory")
    if not result:
        return ("(not measured yet: `python benchmarks/strangers_memory.py --out "
                "benchmarks/results/strangers_memory.json`)")
    identify, listing, memory, before = (result["anonymous_identify"], result["admin_list"], result["memory"],
                                         result["before"])

    def row(name: str, measured: dict) -> str:
        if not measured.get("count"):
            return f"| {name} | 0 | – | – | – |"
        return (f"| {name} | {measured['count']:,} | {1000 * measured['p50_s']:,.0f} ms | "
                f"{1000 * measured['p99_s']:,.0f} ms | {1000 * measured['max_s']:,.0f} ms |")

    grouping = result["grouping_seconds"]
    took = "did not end" if grouping is None else f"took {grouping:.0f} s"
    rows = ["| request | answered | p50 | p99 | max |", "|---|---|---|---|---|",
            row("anonymous identify (the page's, its face kept), before any grouping", identify["alone"]),
            row("anonymous identify while the kept faces were grouped", identify["during"]),
            row("anonymous identify after", identify["after"]),
            row(f"admin's list ({listing['route']}) while they were grouped", listing["during"]),
            row("admin's list after", listing["after"])]
    return ("\n".join(rows) + f"\n\n{memory['kept_faces']:,} kept faces ({memory['planted_people']:,} people seen "
            f"{memory['faces_per_person']} times among strangers seen once), grouped on the background thread "
            f"into {result['suggestions']:,} suggestions: the grouping {took}, while both kept being answered. A "
            f"list's answer: {listing['answer_bytes']:,} bytes over REST (a page of 20), "
            f"{listing['page_answer_bytes'] / 1000:,.0f} kB on the page (20 faces as pictures). The strangers table "
            f"held {memory['stored_bytes_per_face']:,.0f} bytes per face (the aligned crop {memory['crop_bytes']:,} "
            f"bytes); the app's peak resident memory {result['app_memory']['peak_rss_mb']:,.0f} MB. Before (issue "
            f"#48, {before['source'].split(', ')[-1]}): the list grouped inside the write transaction, "
            f"{before['admin_list_cpu_s']} s of CPU, an identify held {before['identify_held_s']} s, the page's "
            f"answer {before['page_answer_mb']} MB. Measured on: {cpu_text(result)}, model {model_text(result)}.")


def quality_agreement_block() -> str:
    """The enrollment quality score against later recognition, per kind of photo, read out of fold on held-out
    CelebA identities, beside the calibration shipped before (the `agreement` scripts/calibrate_quality.py records
    in the shipped calibration file)."""
    import json

    from result_blocks.common import ROOT

    path = ROOT / "models" / "facerec-r18-arcface.quality.json"
    found = json.loads(path.read_text())["source"].get("agreement")
    if not found:
        return "(not measured yet: `python scripts/calibrate_quality.py`)"
    readings = {name: table for name, table in found.items() if isinstance(table, dict)}
    versions = [v for v in next(iter(readings.values())) if v != "all"]
    rows = ["| calibration | " + " | ".join(versions) + " | all: squared error |",
            "|---|" + "---|" * (len(versions) + 1)]
    for name, table in readings.items():
        cells = [f"{table[v]['mean_score']:.3f} vs {table[v]['observed']:.3f} ({table[v]['squared_error']:.4f})"
                 for v in versions]
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {table['all']['squared_error']:.4f} |")
    return ("\n".join(rows) + "\n\nEach cell: the mean score vs the share of the person's other photos ranked first "
            "(the squared error of score against that share, per enrollment); " + found["rule"] + ". Each kind "
            f"{next(iter(readings.values()))[versions[0]]['enrollments']:,} enrollments of the 150 held-out "
            "identities' photos.")
