"""Re-ranking the learned order's queue with today's model (no Scrapy): the whole of it while
it is small, a bounded batch of it past that, so the work per page does not grow with the
frontier."""

from __future__ import annotations

from typing import Any

import numpy as np

from .slots import QueuedSlots


class Reranker:
    """The per-slot index of queued links (:class:`QueuedSlots`) and the re-rank over it."""

    def __init__(self, order: Any, *, rerank_max: int, rerank_batch: int) -> None:
        self.order = order
        self.rerank_max = max(0, rerank_max)  # 0: every re-rank re-scores the whole frontier
        self.rerank_batch = max(1, rerank_batch)
        self.queued = QueuedSlots()  # slot -> queued entry, score

    def rerank(self) -> None:
        """Re-score the queued links with today's model (vectorised) and re-queue them.

        All of them while there are at most ``rerank_max`` (or ``rerank_max`` is 0): the
        queue is rebuilt, O(frontier) Python work, the order as it always was.  Past that,
        ``rerank_batch`` of them, so that the work per page does not grow with the frontier:
        the best quarter of the batch (what is handed out next: a link the new model likes
        less drops back before it is fetched) and the rest of it from the other queued links
        in slot order, from a cursor that moves on each time (every link is re-scored in turn,
        once in frontier / window re-ranks), each re-keyed in its heap.  Links found since the
        last re-rank were scored by a model at most ``learn_every`` pages old.
        """
        order = self.order
        order.flush()
        frontier = order.frontier
        if not len(frontier.queues):
            return
        bound = self.rerank_max
        if bound and len(frontier.queues) > bound:
            batch = min(self.rerank_batch, bound)
            self.rerank_some(batch // 4, batch - batch // 4)
            return
        # the queued links from the slot index, not a scan of the entries (the order they
        # come in does not matter: keys are unique)
        index = self.queued
        slots = np.flatnonzero(index.live)
        live = index.owner[slots].tolist()
        values = order.scorer.values(slots)
        index.score[slots] = values
        # the whole queue from the values: heap items made only for each server's best
        frontier.revalue_all(live, values)

    def rerank_some(self, best: int, window: int) -> None:
        """Re-score and re-key the ``best`` highest-valued queued links and ``window`` more
        from the cursor on (see :meth:`rerank`); O(best + window) Python work."""
        order = self.order
        index = self.queued
        slots = index.choose(order.scorer.store.rows, best, window)
        entries = index.owner[slots].tolist()
        values = order.scorer.values(slots)
        index.score[slots] = values
        live, moved = [], []
        for slot, entry, value in zip(slots.tolist(), entries, values.tolist(), strict=True):
            if entry is None or not entry.queued or entry.extra != slot:
                index.clear(slot)  # cannot happen: every path off the queue clears its slot
                continue
            live.append(entry)
            moved.append(value)
        order.frontier.revalue_some(live, moved)
        order.stats["partial_reranks"] += 1
