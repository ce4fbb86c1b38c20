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
