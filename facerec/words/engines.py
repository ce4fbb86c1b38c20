"""What the operator should know about the server a search engine runs on, in one sentence."""

from __future__ import annotations


def size_text(count: int) -> str:
    """Bytes as a person reads them, in PostgreSQL's units: '128 MB', '2.6 GB', '900 kB'."""
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("kB", 1024)):
        if count >= scale:
            value = count / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{count:,} bytes"


def index_outgrows_buffers(memory: dict | None) -> str | None:
    """The warning when PostgreSQL's `shared_buffers` cannot hold the faces' HNSW index (`VectorIndex.memory`),
    else None: every search then copies the graph's pages in again from the operating system's cache."""
    if not memory or memory["index_bytes"] <= memory["shared_buffers_bytes"]:
        return None
    return (f"PostgreSQL's shared_buffers ({size_text(memory['shared_buffers_bytes'])}) is smaller than the faces' "
            f"search index ({size_text(memory['index_bytes'])}), so every search reads the index from the operating "
            f"system's cache, several times slower; set shared_buffers to at least "
            f"{size_text(memory['index_bytes'])} and restart PostgreSQL (docs/deployment.md)")
