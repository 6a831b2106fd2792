"""Indexes over the learned order's queued links, kept in step with its queues (no Scrapy):
per feature-store slot, the link queued there (the bounded re-rank's choice), and per host,
its best link (the host bandit's)."""

from __future__ import annotations

import heapq

import numpy as np

from ..frontier.queues import Entry


class QueuedSlots:
    """Per feature-store slot, numpy arrays of the queued link that owns it: the entry, its
    score and whether it is queued.  The bounded re-rank chooses the links to re-score with
    numpy over these (no Python loop over the frontier) and gets back to their entries by slot.

    Slot order is the store's, which a snapshot keeps and a compaction keeps (it renumbers,
    in order): the choice never depends on a dict's order, which a restore could change.
    """

    def __init__(self, size: int = 256) -> None:
        self.owner, self.score, self.live = self._arrays(size)
        self.cursor = 0  # the rotating window's next slot

    @staticmethod
    def _arrays(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.empty(size, dtype=object), np.zeros(size), np.zeros(size, dtype=bool)

    def _grow(self, slot: int) -> None:
        owner, score, live = self._arrays(max(slot + 1, len(self.live) + len(self.live) // 2))
        n = len(self.live)
        owner[:n], score[:n], live[:n] = self.owner, self.score, self.live
        self.owner, self.score, self.live = owner, score, live

    def set(self, slot: int, entry: Entry, score: float) -> None:
        """``entry`` is queued in ``slot`` with ``score``."""
        if slot >= len(self.live):
            self._grow(slot)
        self.owner[slot] = entry
        self.score[slot] = score
        self.live[slot] = True

    def clear(self, slot: int | None) -> None:
        """``slot``'s link left the queue (handed out, spilled, evicted or moved)."""
        if slot is not None and slot < len(self.live):
            self.owner[slot] = None  # no reference kept to an entry handed out
            self.live[slot] = False

    def remap(self, old: np.ndarray, rows: int) -> None:
        """The store compacted: live slot ``old[i]`` is now slot ``i``; the window goes on
        from the same link."""
        owner, score, live = self._arrays(max(256, rows + rows // 4))
        keep = old[old < len(self.live)]  # a prefix: slots past the arrays were never queued
        owner[:len(keep)] = self.owner[keep]
        score[:len(keep)] = self.score[keep]
        live[:len(keep)] = self.live[keep]
        self.cursor = int(np.searchsorted(old, self.cursor))
        self.owner, self.score, self.live = owner, score, live

    def choose(self, rows: int, best: int, window: int) -> np.ndarray:
        """The queued slots to re-score, ascending: the ``best`` highest scores (ties to the
        lower slot) and the next ``window`` other queued slots from the cursor on, wrapping
        round; the cursor moves past them."""
        n = min(rows, len(self.live))  # slots past the arrays were never queued
        live = self.live[:n]
        scores = np.where(live, self.score[:n], -np.inf)
        if best >= np.count_nonzero(live):
            top = np.flatnonzero(live)
        elif best > 0:
            kth = np.partition(scores, n - best)[n - best]
            above = np.flatnonzero(scores > kth)
            ties = np.flatnonzero(scores == kth)[:best - len(above)]
            top = np.concatenate([above, ties])
        else:
            top = np.zeros(0, dtype=np.int64)
        others = live.copy()
        others[top] = False
        cursor = min(self.cursor, n)
        ahead = np.flatnonzero(others[cursor:])[:window] + cursor
        if len(ahead) < window:
            ahead = np.concatenate([ahead,
                                    np.flatnonzero(others[:cursor])[:window - len(ahead)]])
        if len(ahead):
            self.cursor = int(ahead[-1]) + 1
        return np.sort(np.concatenate([top, ahead]))


class HostTops:
    """The host bandit's index: per host, its best queued link as a heap item
    ``(-(value + bonus), seq, host, entry)``, so that a bandit turn looks at the few best
    hosts, not at every host with queued links (O(hosts) a turn, and a long crawl meets
    tens of thousands of hosts).

    Lazy: a host's item (the one in ``filed``) is never better than its true key, because
    every way a host's key can rise is reported (a new best link: :meth:`ServerQueues.risen`;
    a host that answered at last: :meth:`HostBandit.answered`) and filed again at once or at the
    next turn; a key that fell (the best taken or re-scored lower, more pages fetched there)
    is found when its item comes out on top and is filed again.
    """

    __slots__ = ("heap", "filed", "shut")

    def __init__(self) -> None:
        self.heap: list[tuple] = []
        self.filed: dict[str, tuple] = {}  # host -> its current heap item
        self.shut: dict[int, str] = {}  # host id -> host, left out as never reached

    def file(self, bucket: str, item: tuple | None) -> None:
        """``bucket``'s item is now ``item`` (None: the host has no link to offer)."""
        if item is None:
            self.filed.pop(bucket, None)
            return
        old = self.filed.get(bucket)
        if old is not None and old[3] is item[3] and old[:2] == item[:2]:
            return  # unchanged: no duplicate item
        self.filed[bucket] = item
        heapq.heappush(self.heap, item)

    def reset(self, items: list[tuple]) -> None:
        self.filed = {item[2]: item for item in items}
        self.heap = items
        heapq.heapify(items)

    def compact(self) -> None:
        """Drop the superseded items once they outnumber the current ones."""
        if len(self.heap) > 2 * len(self.filed) + 1024:
            self.reset(list(self.filed.values()))

