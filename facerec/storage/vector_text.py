"""pgvector's `vector` as Python sees it: the driver hands back an array (with facerec's loader registered) or,
without it, the text form `[1,2,3]`. One function both the schema's column type and the PostgreSQL backend use."""

from __future__ import annotations

import numpy as np


def vector_from_db(value) -> np.ndarray:
    """A `vector` as the driver gives it (an array, or its text form `[1,2,3]` without the loader) as float32."""
    if isinstance(value, (str, bytes)):
        text_form = value.encode() if isinstance(value, str) else value
        return np.array(text_form[1:-1].split(b","), dtype=np.float32)
    return np.asarray(value, dtype=np.float32)
