"""PageCompletionMiddleware: tells the crawl's lifecycle when a fetched page is fully processed.

With JOBDIR the scheduler journals the crawl (``focuscrawl.core.frontier.stores``) and may mark a
handed-out URL *done* only once everything its response produced is safe: every outlink queued
(and so journaled) and every item through the pipelines and the feed.  A URL not done when the
crawler is killed is fetched again on resume; one marked done too early would lose its outlinks.

Scrapy processes a callback's output concurrently (items wait in pipelines while later requests
are queued), so "the callback returned" is not enough.  Each handed-out request therefore owes a
count, kept on its lease by ``focuscrawl.seam.lifecycle.Lifecycle``: one for the output stream
while the callback runs, one per request it yields (paid when the scheduler queues it) and one
per item (paid by the ``item_scraped`` / ``item_dropped`` / ``item_error`` signals, after the
feed wrote it).  At zero
the page is done.  Download failures never reach a callback: the scheduler's errback pays them.

Order 1, the outermost spider middleware: it sees the output after every other middleware
filtered it, so each request it counts does reach the scheduler.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from scrapy import Request
from scrapy.exceptions import NotConfigured

from focuscrawl.seam.meta import FROM, lease_of
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class OutputTally(Protocol):
    """What a page's output owes, per lease: the crawl's ``Lifecycle`` (or a distributed
    worker's ``Completion``)."""

    @property
    def enabled(self) -> bool: ...

    def hold(self, lease: int) -> None: ...

    def release(self, lease: int | None) -> None: ...


class PageCompletionMiddleware:
    #: FocusScheduler with JOBDIR needs it: a page not marked done is fetched again on resume
    marks_pages_done = True

    def __init__(self, completion: OutputTally) -> None:
        self.completion = completion

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageCompletionMiddleware:
        if not crawler.settings.get("JOBDIR"):
            raise NotConfigured  # nothing is journaled without JOBDIR
        return cls(FocusServices.of(crawler, cls).lifecycle)

    def _track(self, lease: int, out: Any) -> None:
        if isinstance(out, Request):
            out.meta[FROM] = lease
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
