"""Giving freed memory back to the operating system (no Scrapy).

A frontier with ``FOCUS_FRONTIER_MEMORY`` spills and reloads batches of tens of thousands of
URLs, and the learned order compacts its feature arrays: each builds megabytes of temporaries
(pickled batches, key columns, the arrays' new copies) and frees them.  glibc's allocator keeps
what is freed inside its heap for reuse, and once a large block was freed it raises its mmap
threshold, so later temporaries of that size come from the heap too: over a long crawl the
heap's free space grows and the RSS with it (bench/scale.py, 100,000,000-page web: 40-160 MB
free inside the heap up to 6 million URLs queued, 190-213 MB after, most of the RSS growth
there).  :func:`trim_heap` hands the free pages back (``malloc_trim``: it also releases whole
free pages inside the heap, not only at its top); where the C library has no such call it does
nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

_trim: Any = None  # the C function once looked up; False where there is none


def trim_heap() -> bool:
    """Release the C heap's free pages to the OS; False where the C library cannot."""
    global _trim
    if _trim is None:
        _trim = False
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name) if name else None
        except OSError:
            libc = None
        function = getattr(libc, "malloc_trim", None)
        if function is not None:
            function.argtypes = [ctypes.c_size_t]
            function.restype = ctypes.c_int
            _trim = function
    if _trim is False:
        return False
    _trim(0)
    return True
