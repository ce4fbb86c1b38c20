"""What the operator should know about the server a search engine runs on, in one sentence."""

from __future__ import annotations

from facerec.words.phrasing import size_text


def index_outgrows_buffers(memory: dict | None) -> str | None:
    """The warning when PostgreSQL's `shared_buffers` cannot hold the faces' HNSW index (`VectorIndex.memory`),
    else None: every search then copies the graph's pages in again from the operating system's cache."""
    if not memory or memory["index_bytes"] <= memory["shared_buffers_bytes"]:
        return None
    return (f"PostgreSQL's shared_buffers ({size_text(memory['shared_buffers_bytes'])}) is smaller than the faces' "
            f"search index ({size_text(memory['index_bytes'])}), so every search reads the index from the operating "
            f"system's cache, several times slower; set shared_buffers to at least "
            f"{size_text(memory['index_bytes'])} and restart PostgreSQL (docs/deployment.md)")
