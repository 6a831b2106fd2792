"""PageCompletionMiddleware: tells the scheduler when a fetched page is completely processed.

With JOBDIR the scheduler journals the crawl (``focuscrawl.frontier.stores``) and may mark a
handed-out URL *done* only once everything its response produced is safe: every outlink queued
(and so journaled) and every item through the pipelines and the feed.  A URL not done when the
crawler is killed is fetched again on resume; one marked done too early would lose its outlinks.

Scrapy processes a callback's output concurrently (items wait in pipelines while later requests
are queued), so "the callback returned" is not enough.  Each handed-out request therefore owes a
count, kept in :class:`Completion`: one for the output stream while the callback runs, one per
request it yields (paid when the scheduler queues it) and one per item (paid by the
``item_scraped`` / ``item_dropped`` / ``item_error`` signals, after the feed wrote it).  At zero
the page is done.  Download failures never reach a callback: the scheduler's errback pays them.

Order 1, the outermost spider middleware: it sees the output after every other middleware
filtered it, so each request it counts does reach the scheduler.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

FROM_KEY = "focus_from"  # meta of an outlink: the lease of the page that yielded it


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


def completion_for(crawler: Crawler) -> Completion:
    """The crawl's one Completion, shared by the scheduler and the spider middleware."""
    completion = getattr(crawler, "_focus_completion", None)
    if completion is None:
        completion = crawler._focus_completion = Completion()  # type: ignore[attr-defined]
    return completion


def lease_of(response: Any) -> int | None:
    request = getattr(response, "request", None)
    return None if request is None else request.meta.get("focus_lease")


class PageCompletionMiddleware:
    #: FocusScheduler with JOBDIR needs it: a page not marked done is fetched again on resume
    marks_pages_done = True

    def __init__(self, completion: Completion) -> None:
        self.completion = completion

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageCompletionMiddleware:
        if not crawler.settings.get("JOBDIR"):
            raise NotConfigured  # nothing is journaled without JOBDIR
        return cls(completion_for(crawler))

    def _track(self, lease: int, out: Any) -> None:
        if isinstance(out, Request):
            out.meta[FROM_KEY] = lease
            self.completion.hold(lease)
        elif out is not None:
            self.completion.hold(lease)

    def process_spider_output(
        self, response: Response, result: Iterable[Any]
    ) -> Iterable[Any]:
        lease = lease_of(response)
        if lease is None or not self.completion.enabled:
            yield from result
            return
        self.completion.hold(lease)
        try:
            for out in result:
                self._track(lease, out)
                yield out
        except GeneratorExit:  # abandoned: what was never produced may be produced on refetch
            raise
        except BaseException:
            self.completion.release(lease)
            raise
        self.completion.release(lease)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        lease = lease_of(response)
        if lease is None or not self.completion.enabled:
            async for out in result:
                yield out
            return
        self.completion.hold(lease)
        try:
            async for out in result:
                self._track(lease, out)
                yield out
        except GeneratorExit:
            raise
        except BaseException:
            self.completion.release(lease)
            raise
        self.completion.release(lease)
