"""Scale tables: is the synthetic yardstick of benchmarks/scale.py fair to the approximate indexes?"""

from __future__ import annotations

from result_blocks.common import cpu_text, load, model_text


def yardstick_block() -> str:
    """Recall@1 against ef_search on a gallery of real faces only, beside the same gallery padded as scale.py pads
    (benchmarks/yardstick.py)."""
    result = load("yardstick")
    if not result:
        return "(not measured yet: `python benchmarks/yardstick.py --out benchmarks/results/yardstick.json`)"
    found: dict[tuple[str, int], dict[str, float]] = {}
    for row in result["rows"]:
        if row["kind"] != "flat":
            found.setdefault((row["kind"], row["ef_search"]), {})[row["distribution"]] = row["recall_at_1"]
    names = {"hnsw": "FAISS `hnsw`", "pgvector": "pgvector HNSW"}
    lines = ["| index | ef_search | recall@1, real faces only | recall@1, face-like padding |", "|---|---|---|---|"]
    for (kind, ef), recall in sorted(found.items()):
        lines.append(f"| {names.get(kind, kind)} | {ef} | {recall.get('real', float('nan')):.4f} | "
                     f"{recall.get('face-like', float('nan')):.4f} |")
    harder = sum(r.get("face-like", 1) < r.get("real", 0) for r in found.values())
    easier = sum(r.get("face-like", 0) > r.get("real", 1) for r in found.values())
    return ("\n".join(lines) + f"\n\n{result['gallery']:,} faces, {result['queries']} queries (each a held-out photo "
            f"of one of {result['people_to_find']} celeba112 people whose other photos are in the gallery). The "
            f"padding gives the lower recall at {harder} of {len(found)} settings and the higher at {easier}. "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}.")


def pgvector_choices_block() -> str:
    """pgvector's engine choices at a million faces against the shipped default, on identify's final answer
    (benchmarks/pgvector_choices.py)."""
    result = load("pgvector_choices")
    if not result:
        return ("(not measured yet: `python benchmarks/pgvector_choices.py --out "
                "benchmarks/results/pgvector_choices.json`)")
    names = {"shipped": "full `vector(512)`", "binary": "sign bits (`binary_quantize`)",
             "projected-m16": f"{result['dims']}-d projection (`halfvec`)",
             "projected-m32": f"{result['dims']}-d projection (`halfvec`)"}
    lines = ["| HNSW over | m, ef_construction | build (cores) | index per face | shared_buffers | ef_search | "
             "candidates re-scored | identify's answer = exact | raw top-1 = exact | search p50 / p99 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        cores = row.get("maintenance_workers", 1) + 1  # the leader and its parallel maintenance workers
        lines.append(f"| {names[row['variant']]} | {row['m']}, {row['ef_construction']} | {row['build_s']:,.0f} s "
                     f"({cores}) | {row['index_bytes'] / result['size']:,.0f} B | {row['shared_buffers']} | "
                     f"{row['ef_search']} | {row.get('re_scored', result['candidates'])} | "
                     f"{row['final_answer_agreement']:.3f} | {row['raw_recall_at_1']:.3f} | "
                     f"{row['search_p50_ms']:.1f} / {row['search_p99_ms']:.1f} ms |")
    return ("\n".join(lines) + f"\n\n{result['size']:,} faces, {result['queries']} queries (a held-out photo of each "
            f"of {result['queries']} celeba112 people whose other photos are enrolled); exact search names "
            f"{result['exact_named']} of them at the threshold the model card gives this gallery "
            f"({result['threshold']:.2f}); the others are unknown, as a photo of a stranger is. The table with the "
            f"embedding and the projection: {result['rows'][0]['table_bytes'] / result['size']:,.0f} B per face. "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}.")


def pgvector_million_block() -> str:
    """The shipped PostgreSQL gallery at a million faces: identify's answers against exact search, latency, disk
    and memory per face, two replicas with a writer (benchmarks/pgvector_million.py)."""
    result = load("pgvector_million")
    if not result:
        return ("(not measured yet: `python benchmarks/pgvector_million.py --out "
                "benchmarks/results/pgvector_million.json`)")
    lines = ["| shared_buffers | ef_search | candidates re-scored | identify's answer = exact | search p50 / p99 | "
             "whole decision p50 / p99 |", "|---|---|---|---|---|---|"]
    for row in result["rows"]:
        lines.append(f"| {row['shared_buffers']} | {row['ef_search']} | "
                     f"{result['candidates'] * row.get('refine_factor', 1)} | {row['final_answer_agreement']:.3f} | "
                     f"{row['search_p50_ms']:.1f} / {row['search_p99_ms']:.1f} ms | "
                     f"{row['decision_p50_ms']:.1f} / {row['decision_p99_ms']:.1f} ms |")
    relations = ", ".join(f"{name} {size:,.0f} B" for name, size in result["relations_bytes_per_face"].items())
    text = (f"\n\nidentify asks for the {result['candidates']} nearest faces; the graph proposes that many, or two or "
            f"four times as many, and the whole stored embeddings re-score them. {result['size']:,} faces loaded through the product in {result['load_s']:,.0f} s; the index built "
            f"in {result['build_s']:,.0f} s (one parallel worker). **Disk: {result['disk_bytes_per_face']:,.0f} B per "
            f"face** (the whole database; by relation: {relations}); memory a search walks: the index, "
            f"{result['index_bytes_per_face']:,.0f} B per face. {result['queries']} queries, each a held-out photo of "
            f"a celeba112 person whose other photos are enrolled; exact search decided at the threshold in force "
            f"({result['rows'][0]['threshold']:.2f}).")
    replicas = result.get("replicas")
    if replicas:
        each = "; ".join(f"{r['decisions']:,} decisions, p50 / p99 {r['decision_p50_ms']:.1f} / "
                         f"{r['decision_p99_ms']:.1f} ms" for r in replicas["replicas"])
        text += (f" **Two replicas and a writer** (shared_buffers {replicas['shared_buffers']}, "
                 f"{result['candidates'] * replicas.get('refine_factor', 1)} candidates re-scored, "
                 f"{replicas['seconds']:.0f} s, every process on the same two cores): {each}; the writer enrolled "
                 f"{replicas['enrolled']:,} faces, p50 / p99 {replicas['enroll_p50_ms']:.1f} / "
                 f"{replicas['enroll_p99_ms']:.1f} ms each.")
    return "\n".join(lines) + text + f" Measured on: {cpu_text(result)}, model {model_text(result)}."


def faiss_million_block() -> str:
    """The embedded default (`auto`) at a million faces: the switch to the graph, its recall and identify's answers
    against exact search (benchmarks/faiss_million.py)."""
    result = load("faiss_million")
    if not result:
        return ("(not measured yet: `python benchmarks/faiss_million.py --out "
                "benchmarks/results/faiss_million.json`)")
    exact, graph = result["exact"], result["graph"]
    lines = ["| index serving | ready after | memory per face | search p50 / p99 (50 candidates) | raw top-1 = exact | "
             "identify's answer = exact |", "|---|---|---|---|---|---|",
             f"| exact (`flat`) | {exact['ready_s']:,.1f} s | {exact['bytes_per_face']:,.0f} B | "
             f"{exact['search_p50_ms']:.1f} / {exact['search_p99_ms']:.1f} ms | 1.000 | 1.000 |",
             f"| graph (`hnsw`, m {result['hnsw_m']}, ef_search {result['ef_search']}) | {graph['ready_s']:,.0f} s | "
             f"{graph['bytes_per_face']:,.0f} B | {graph['search_p50_ms']:.1f} / {graph['search_p99_ms']:.1f} ms | "
             f"{graph['raw_recall_at_1']:.3f} | {graph['final_answer_agreement']:.3f} |"]
    return ("\n".join(lines) + f"\n\n{result['size']:,} faces given to the index at once, as a gallery opened on them "
            f"gives them: exact search answers from the first time above, the graph (built in the background) from "
            f"the second. The recall the graph measured on {graph['recall_sample']} of its own faces when it was "
            f"built, which Health shows: {graph['recall_measured_at_build']:.3f}. {result['queries']} queries, each a "
            f"held-out photo of a celeba112 person whose other photos are enrolled; exact search names "
            f"{result['exact_named']} of them at the card's threshold for this gallery ({result['threshold']:.2f}). "
            f"Measured on: {cpu_text(result)}, model {model_text(result)}.")
