"""The process's memory allocator, told to give freed memory back: what keeps the app's resident size bounded.

Why: glibc gives each thread that allocates its own arena (up to 8 per core) and grows a threshold below which
big blocks come from those arenas instead of their own mappings. A web server runs each request in whichever of
dozens of worker threads is free, so the large buffers of photos decoded in turn stayed behind in many arenas:
under a flood of 16-bit scans of 40 MP the app's resident size reached 4.9 GB although each request, alone, needs
~250 MB (benchmarks/flood.py). With two arenas and every block of 1 MiB or more in its own mapping (returned to
the system when freed), it stays within the bound SECURITY.md states. Elsewhere than glibc Linux: nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_ARENA_MAX, M_MMAP_THRESHOLD = -8, -3  # glibc's mallopt parameters (malloc.h)
ARENAS = 2
OWN_MAPPING_BYTES = 1 << 20


def return_freed_memory() -> bool:
    """Limit glibc's arenas and map every large block on its own; True when the allocator took both settings.
    Call it before the server starts its threads."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_ARENA_MAX, ARENAS)) and bool(mallopt(M_MMAP_THRESHOLD, OWN_MAPPING_BYTES))
