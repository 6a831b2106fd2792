"""The host bandit's pick on a server whose pages have all proved off the topic (no Scrapy):
the queued link most linked to (Cho et al.'s backlink count), not the best-valued one.  On such
a server the model's values only rank off-topic pages against each other, while its most-linked
pages are its lists and indexes, the likeliest way out to the servers the topic is on."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from ..frontier.queues import Entry, ServerQueues
from .defaults import HUB_SET


class _Set:
    """A server's ``size`` most-linked queued entries when it was scanned, as a heap of
    ``(-in-links, seq, entry)`` items (most linked, then found first, on top), and ``floor``:
    the key of the last of them (None: the scan took every entry in).  Any entry of the server
    whose key comes before the floor is in the heap (it was then, or arrived since, or its
    count rose since: the queues and the order tell both), so while a live item is left, the
    top is the server's most-linked entry, exactly as a scan would find it."""

    __slots__ = ("items", "floor")

    def __init__(self, items: list[tuple], floor: tuple | None) -> None:
        self.items = items
        self.floor = floor

    def takes(self, key: tuple) -> bool:
        return self.floor is None or key <= self.floor


class BacklinkPicks:
    """Per server, its most-linked queued link, for the servers the bandit asks about: a
    bounded set of each server's most-linked entries, kept by the arrivals the queues report
    and the in-link counts the order reports, scanned again when it runs out (or holds many
    stale items): a pick costs O(log n), and a scan of the server's queue every ``size``
    picks there at most."""

    def __init__(self, queues: ServerQueues, inlinks: Callable[[Entry], float],
                 size: int = HUB_SET) -> None:
        self.queues = queues
        self.inlinks = inlinks  # an entry's in-link count now
        self.size = max(1, size)
        self._sets: dict[Any, _Set] = {}

    def reset(self) -> None:
        """Forget every set (after a restore: scanned again when asked)."""
        self._sets = {}
        self.queues.unfollow()

    def forget(self, bucket: Any) -> None:
        """``bucket`` is no longer asked about (its server is not off the topic after all)."""
        if self._sets.pop(bucket, None) is not None:
            self.queues.unfollow(bucket)

    def linked(self, entry: Entry) -> None:
        """A queued entry arrived, or its in-link count rose (its server's set is its host's:
        the bandit runs on per-server queues only)."""
        found = self._sets.get(entry.host)
        if found is not None and entry.extra is not None:
            key = (-self.inlinks(entry), entry.seq)
            if found.takes(key):
                heapq.heappush(found.items, (*key, entry))

    def best(self, bucket: Any) -> Entry | None:
        """``bucket``'s queued entry with the most in-links (found first among equals), or None
        if it has none with a feature row."""
        found = self._sets.get(bucket)
        if found is None or len(found.items) > 4 * self.size:
            found = self._scan(bucket)  # new, or many stale items
        top = self._top(found)
        if top is None and found.floor is not None:
            top = self._top(self._scan(bucket))  # the set ran out: the server's other entries
        return top

    def _top(self, found: _Set) -> Entry | None:
        items = found.items
        while items:
            neg, seq, entry = items[0]
            if entry.queued and entry.extra is not None:
                key = (-self.inlinks(entry), seq)
                if key == (neg, seq):
                    return entry
                if found.takes(key):  # counted higher since: its item in its new place
                    heapq.heapreplace(items, (*key, entry))
                    continue
            heapq.heappop(items)
        return None

    def _scan(self, bucket: Any) -> _Set:
        entries = [entry for entry in self.queues.entries_of(bucket) if entry.extra is not None]
        inlinks = self.inlinks
        items = heapq.nsmallest(self.size, ((-inlinks(e), e.seq, e) for e in entries))
        floor = None if len(items) == len(entries) else items[-1][:2]
        heapq.heapify(items)
        found = self._sets[bucket] = _Set(items, floor)
        self.queues.follow(bucket, self.linked)
        return found
