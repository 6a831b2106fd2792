"""A page's completion, shared by FocusScheduler and PageCompletionMiddleware.

What each handed-out request (lease) still owes before its page is done: see
``focuscrawl.seam.middlewares.journal`` for why.  Here so that the scheduler and the middleware
meet in a module of their own instead of importing each other; the crawl's one Completion is
``focuscrawl.seam.services.FocusServices.completion``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from focuscrawl.seam.meta import FROM, LEASE

FROM_KEY = FROM  # meta of an outlink: the lease of the page that yielded it


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


def lease_of(response: Any) -> int | None:
    request = getattr(response, "request", None)
    return None if request is None else request.meta.get(LEASE)
