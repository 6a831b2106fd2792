"""SeedsPendingMiddleware: tells the crawl while the spider's start requests may still come.

A server whose robots.txt answered 5xx or 429 is held only while the crawl has something else
to do (``FocusScheduler``): once held servers are all that is left, their holds end and their
URLs are refused.  Seeds the spider has not yielded yet are something else to do: a long seed
file, a slow source, or ``FOCUS_SERVER_KEY = "ip"`` resolving each seed's host before it
leaves.  Scrapy sends no signal when ``Spider.start()`` is exhausted; a spider middleware's
``process_start`` sees it.  Near the engine (order 2), so the last seed is queued before the
flag drops.  Without this middleware the flag stays down: holds end as they did before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class SeedsPendingMiddleware:
    """``SPIDER_MIDDLEWARES``: ``FocusServices.seeds_pending`` while start() yields."""

    def __init__(self, services: FocusServices) -> None:
        self.services = services

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SeedsPendingMiddleware:
        return cls(FocusServices.of(crawler, cls))

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        self.services.seeds_pending = True
        try:
            async for out in start:
                yield out
        finally:  # exhausted, failed or abandoned: no seed is coming any more
            self.services.seeds_pending = False
