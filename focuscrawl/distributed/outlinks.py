"""Outlinks: a worker's page scores and discovered links, written to Redis a page at a time.

One script call per outlink made a page of 100 links cost 100 Redis round trips.  The scheduler
keeps what it would have written (``RedisFrontier``'s ADD and CRAWLED, encoded at once so a
request that cannot be stored fails where it is enqueued) and :meth:`Outlinks.flush` sends it
in one ``ADD_MANY`` call, in order:

* when a page's output is done: :attr:`Outlinks.pages` counts, per lease, the output stream
  still running and the requests it yielded that have not reached the scheduler
  (``focuscrawl.distributed.pagemw.PageOutputMiddleware`` holds, the scheduler releases); Scrapy
  hands a callback's requests to the scheduler from a queue, so "the callback returned" is not
  enough;
* and before anything that depends on them: settling a lease (its outlinks must be in Redis
  first, or a worker killed after the settle would lose them: a lease to settle is kept
  after them and written in the same call), handing out a URL, saying whether work is
  pending, closing; at :attr:`limit` operations; on the worker's tick.

A flush goes through the worker's ``RedisLink``: while Redis is away the call is kept there, in
order before the settle that follows it.  Any other Redis error keeps the operations here for
the next flush (one WARNING), and the scheduler settles nothing meanwhile.  Plain Python and
redis-py, no Scrapy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from redis.exceptions import RedisError

from focuscrawl import config
from focuscrawl.seam.completion import Completion

from .frontier import Op, add_op, crawled_op, settle_op

if TYPE_CHECKING:
    from ..core.frontier import Link
    from .protocol import SharedFrontier

logger = logging.getLogger(__name__)

#: operations kept at most before a flush (``FOCUS_REDIS_BATCH``): a bigger script call holds
#: Redis longer (every worker waits meanwhile)
DEFAULT_LIMIT: int = config.default("FOCUS_REDIS_BATCH")


class Writer(Protocol):
    """What Outlinks needs of the worker's ``connection.RedisLink`` (named here, not imported:
    connection builds the Outlinks, so importing it back would be a cycle)."""

    def write(self, fn: Callable[..., Any], *args: Any,
              then: Callable[[Any], None] | None = None) -> Any: ...


class Outlinks:
    """The operations one worker has not written to Redis yet, and the pages still adding."""

    def __init__(self, frontier: SharedFrontier, link: Writer, limit: int = DEFAULT_LIMIT
                 ) -> None:
        self.frontier = frontier
        self.link = link
        self.limit = max(1, limit)
        #: pages whose output is still coming (lease -> what it still owes); batching per page
        #: only when there is something to batch
        self.pages = Completion()
        self.pages.enabled = self.limit > 1
        self.pages.on_done = self._page_done
        self.calls = 0  # ADD_MANY calls made (or kept by RedisLink)
        self.written = 0  # operations in them
        self._ops: list[Op] = []
        self._thens: list[Callable[[bool], Any] | None] = []
        self._settles = 0  # settle operations among them
        self._failing = False

    def __len__(self) -> int:
        return len(self._ops)

    def add(self, link: Link, then: Callable[[bool], Any] | None = None) -> None:
        """Keep ``link`` for the next flush; ``then`` gets its answer (queued or not) then."""
        self._keep(add_op(link), then)

    def scored(self, url: str, score: float, hot: bool) -> None:
        """Keep a fetched page's score; it goes before the page's outlinks, as it did alone."""
        self._keep(crawled_op(url, score, hot), None)

    def settle(self, lease: int, then: Callable[[bool], Any]) -> None:
        """Keep a lease to settle, after everything kept so far (its page's outlinks among
        them); ``then`` once it is written.  It rides with the next flush (a page's outlinks,
        a hand-out, the tick) instead of a call of its own."""
        self._ops.append(settle_op(self.frontier.worker, lease))
        self._thens.append(then)
        self._settles += 1

    @property
    def links(self) -> bool:
        """Whether anything but leases to settle is kept (a hand-out waits for links only)."""
        return len(self._ops) > self._settles

    def arrived(self, source: int | None) -> None:
        """One request yielded by the page leased as ``source`` reached the scheduler."""
        self.pages.release(source)

    def forget(self, lease: int) -> None:
        """The lease is settled: stop waiting for requests of its page that never came (a
        request dropped between the spider and the scheduler)."""
        self.pages.pending.pop(lease, None)

    def flush(self) -> bool:
        """Write what is kept, in one script call; False if a Redis error kept it here.

        While Redis is unreachable the call waits in ``RedisLink`` (written first when Redis is
        back): nothing is kept here then, and True.
        """
        if not self._ops:
            return True
        ops, thens, settles = self._ops, self._thens, self._settles
        self._ops, self._thens, self._settles = [], [], 0

        def answer(results: list[bool]) -> None:
            for then, result in zip(thens, results, strict=True):
                if then is not None:
                    then(result)

        try:
            self.link.write(self.frontier.apply, ops, then=answer)
        except BaseException as e:
            self._ops[:0], self._thens[:0] = ops, thens  # nothing lost: the next flush retries
            self._settles += settles
            if not isinstance(e, RedisError):
                raise
            if not self._failing:
                logger.warning("Redis refused %d link(s) and page score(s) of this worker (%s); "
                               "they are kept and sent again, and no page is settled until "
                               "they are written", len(self._ops), e)
            self._failing = True
            return False
        if self._failing:
            logger.info("Redis took the kept links and page scores")
            self._failing = False
        self.calls += 1
        self.written += len(ops)
        return True

    def clear(self) -> None:
        """Forget the pages still adding (the worker closes)."""
        self.pages.pending.clear()

    def _keep(self, op: Op, then: Callable[[bool], Any] | None) -> None:
        self._ops.append(op)
        self._thens.append(then)
        if len(self._ops) >= self.limit:
            self.flush()

    def _page_done(self, lease: int) -> None:
        self.flush()
