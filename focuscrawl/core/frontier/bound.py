"""MAX_BUFFER's bound on a frontier (Pant et al.): the queued entries by score, to evict the
lowest-scored (no Scrapy)."""

from __future__ import annotations

import heapq
from typing import Any

from .queues import Entry


class Bound:
    """MAX_BUFFER: the queued entries by (score, -seq), lowest first, to evict the worst;
    items of entries re-scored or gone stay behind and are skipped."""

    __slots__ = ("limit", "heap")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.heap: list[tuple[float, int, Entry]] = []

    def push(self, entry: Entry) -> None:
        heapq.heappush(self.heap, (entry.score, -entry.seq, entry))

    def rebuild(self, entries: Any) -> None:
        self.heap = [(e.score, -e.seq, e) for e in entries]
        heapq.heapify(self.heap)

    def prune(self) -> None:
        """Drop the items of entries no longer queued (after a spill)."""
        self.heap = [item for item in self.heap if item[2].queued]
        heapq.heapify(self.heap)

    def compact(self, live: int) -> None:
        """Drop stale items once they outnumber the live ones (a re-rank re-keys many)."""
        if len(self.heap) > 2 * live + 1024:
            self.heap = [item for item in self.heap
                         if item[2].queued and item[2].score == item[0]]
            heapq.heapify(self.heap)
