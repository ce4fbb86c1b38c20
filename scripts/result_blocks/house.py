"""The house's measures before and after a round of it (benchmarks/house.py), and REST identify's latency on the
two commits (benchmarks/rest_before_after.py)."""

from __future__ import annotations

from result_blocks.common import cpu_text, load


def _count(value) -> int:
    return len(value) if isinstance(value, list) else value


def house_block() -> str:
    before, after = load("house_before"), load("house")
    if not before or not after:
        return "(not measured yet: `python benchmarks/house.py --out benchmarks/results/house.json`)"
    commits = [(r.get("provenance") or {}).get("commit", "")[:8] for r in (before, after)]
    rows = [f"| measure | `{commits[0]}` | `{commits[1]}` |", "|---|---:|---:|"]
    for key, label in (("rooms", "rooms (folders of facerec/, and its top modules)"), ("floors", "floors"),
                       ("arrows", "arrows between rooms"), ("arrows_back", "arrows back up"),
                       ("circles", "circles"), ("functions_over_60_lines", "functions over sixty lines"),
                       ("functions_with_8_or_more_parameters", "functions with 8 or more parameters"),
                       ("methods", "methods reachable through `services()`"),
                       ("attributes", "attributes reachable through `services()`")):
        rows.append(f"| {label} | {_count(before[key])} | {_count(after[key])} |")
    rows.append(f"| admin password checks written in ui/ | {before['admin_checks_in_ui']['calls']} | "
                f"{after['admin_checks_in_ui']['calls']} |")
    text = "\n".join(rows) + f"\n\nMeasured from the source (`python benchmarks/house.py`) on {cpu_text(after)}."
    latency = load("rest_before_after")
    if latency:
        b, a = latency["before"], latency["after"]
        text += (f" REST identify over {latency['people']} people, {latency['clients']} clients, both commits' apps "
                 f"running and taking turns (`benchmarks/rest_before_after.py`, {cpu_text(latency)}): p50 "
                 f"{b['p50_ms']:.1f} ms before, {a['p50_ms']:.1f} ms after "
                 f"({latency['after_over_before']['p50_ratio']:.3f}x); p99 {b['p99_ms']:.1f} ms before, "
                 f"{a['p99_ms']:.1f} ms after ({latency['after_over_before']['p99_ratio']:.3f}x).")
    return text
