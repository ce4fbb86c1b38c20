"""What the operator should know about the server a search engine runs on, in one sentence."""

from __future__ import annotations

from facerec.words.phrasing import plural, size_text


def index_outgrows_buffers(memory: dict | None) -> str | None:
    """The warning when PostgreSQL's `shared_buffers` cannot hold the faces' HNSW index (`VectorIndex.memory`),
    else None: every search then copies the graph's pages in again from the operating system's cache."""
    if not memory or memory["index_bytes"] <= memory["shared_buffers_bytes"]:
        return None
    return (f"PostgreSQL's shared_buffers ({size_text(memory['shared_buffers_bytes'])}) is smaller than the faces' "
            f"search index ({size_text(memory['index_bytes'])}), so every search reads the index from the operating "
            f"system's cache, several times slower; set shared_buffers to at least "
            f"{size_text(memory['index_bytes'])} and restart PostgreSQL (docs/deployment.md)")


def search_index_text(described: dict) -> str:
    """Which index answers the gallery's searches (`VectorIndex.describe`), in one or two sentences for Health."""
    if described.get("engine") == "pgvector":
        return ("Search: approximate (pgvector on the PostgreSQL server: an HNSW graph over each face's projection, "
                "its candidates re-scored with the whole embedding); its answers against exact search at a million "
                "faces are measured in docs/deployment.md.")
    engine = "FAISS in this process"  # every other engine
    if described.get("index") == "exact":
        text = f"Search: exact ({engine}): every query is compared with all {plural(described['faces'], 'face')}."
        declined = described.get("declined")
        if described.get("building"):
            text += " A graph index is being built in the background; exact search answers until it is ready."
        elif declined:
            text += " " + declined_graph_text(declined, described)
        elif described.get("approximate_from"):
            text += (f" From {described['approximate_from']:,} faces a graph index is built in the background and "
                     "takes over (exact search slows as the gallery grows).")
        return text
    recall = described.get("recall")
    text = f"Search: approximate ({engine}: an HNSW graph, its candidates re-scored exactly)."
    if recall is not None:
        text += (f" When it was built, its nearest other face was the exact one for {recall:.1%} of "
                 f"{described.get('recall_sample', 'a sample of')} of its own faces.")
    if described.get("building"):
        text += " A fresh graph is being built in the background; this one answers until it is ready."
    return text


def declined_graph_text(declined: dict, described: dict) -> str:
    """Why a graph index built for a large gallery is not the one answering (`AutoVectors.declined`)."""
    again = f"another is tried at {declined['retry_at']:,} faces"
    if declined.get("recall") is None:
        return (f"Building a graph index at {declined['faces']:,} faces failed (most likely for want of memory); "
                f"exact search goes on answering, and {again}.")
    return (f"A graph index built at {declined['faces']:,} faces found the exact nearest face for "
            f"{declined['recall']:.1%} of {described['recall_sample']} of its own faces, short "
            f"of the {described['recall_target']:.0%} it must reach; exact search goes on answering, and "
            f"{again}.")
