"""trim_heap gives the C heap's free pages back: the RSS falls, as a long spilling crawl needs."""

from __future__ import annotations

import os

from focuscrawl.core.memory import trim_heap


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_trim_heap_returns_freed_heap_pages() -> None:
    """200 MB of 1 KB blocks (glibc's heap, not pymalloc's arenas, not mmap), freed but for
    the last one, which pins the heap's top: the free space stays in the process until
    trimmed (a spill's temporaries leave such holes)."""
    assert trim_heap(), "this test needs glibc's malloc_trim (Linux)"
    blocks = [bytearray(1024) for _ in range(200_000)]
    for b in blocks:
        b[0] = 1  # touched: resident
    pin = blocks.pop()
    before = _rss()
    del blocks
    held = _rss()
    trim_heap()
    after = _rss()
    assert held > before - 50 * 2**20, "the allocator already gave the blocks back"
    assert after < held - 100 * 2**20, (before, held, after)
    assert pin[0] == 1
