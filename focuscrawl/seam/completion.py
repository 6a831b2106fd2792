"""A tally of what each lease's page output still owes, for a distributed worker's outlinks
(``focuscrawl.distributed.outlinks``).

The single-process crawl keeps the same count on each lease of its
``focuscrawl.seam.lifecycle.Lifecycle``; both answer ``PageCompletionMiddleware``'s
``enabled`` / ``hold`` / ``release``.
"""

from __future__ import annotations

from collections.abc import Callable


class Completion:
    """What each handed-out request (lease) still owes before it is done.  Plain Python."""

    def __init__(self) -> None:
        self.enabled = False
        self.pending: dict[int, int] = {}
        self.on_done: Callable[[int], None] | None = None

    def hold(self, lease: int) -> None:
        self.pending[lease] = self.pending.get(lease, 0) + 1

    def release(self, lease: int | None) -> None:
        if lease is None:
            return
        left = self.pending.get(lease)
        if left is None:
            return
        if left > 1:
            self.pending[lease] = left - 1
        else:
            del self.pending[lease]
            if self.on_done is not None:
                self.on_done(lease)

    def finish(self, lease: int | None) -> None:
        """The request produced nothing more (download error, redirect, retry): done now."""
        if lease is None:
            return
        self.pending.pop(lease, None)
        if self.on_done is not None:
            self.on_done(lease)

