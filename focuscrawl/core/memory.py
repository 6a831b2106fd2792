"""Giving freed memory back to the operating system (no Scrapy).

A frontier with ``FOCUS_FRONTIER_MEMORY`` spills and reloads batches of tens of thousands of
URLs, and the learned order compacts its feature arrays: each builds megabytes of temporaries
(pickled batches, key columns, the arrays' new copies) and frees them.  glibc's allocator keeps
what is freed inside its heap for reuse, and once a large block was freed it raises its mmap
threshold, so later temporaries of that size come from the heap too: over a long crawl the
heap's free space grows and the RSS with it (``bench/scale.py``; figures in
docs/benchmarks.md).  :func:`trim_heap` hands the free pages back (``malloc_trim``: it also
releases whole free pages inside the heap, not only at its top); where the C library has no
such call it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

_libc: Any = None  # the C library once loaded; False where it cannot be


def libc() -> Any:
    """The C library (ctypes), loaded once; None where it cannot be (also for the benchmarks'
    view of the heap, ``mallinfo2``)."""
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            _libc = ctypes.CDLL(name) if name else False
        except OSError:
            _libc = False
        trim = getattr(_libc, "malloc_trim", None)
        if trim is not None:
            trim.argtypes = [ctypes.c_size_t]
            trim.restype = ctypes.c_int
    return _libc or None


def trim_heap() -> bool:
    """Release the C heap's free pages to the OS; False where the C library cannot."""
    trim = getattr(libc(), "malloc_trim", None)
    if trim is None:
        return False
    trim(0)
    return True
