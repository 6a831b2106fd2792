"""PageOutputMiddleware: tells a distributed worker when a page's requests have all been yielded,
so its outlinks go to Redis in one script call (``focuscrawl.distributed.outlinks``).

``PageCompletionMiddleware``'s counting, on the worker's :attr:`Outlinks.pages`, for requests
only (items do not add links): one hold for the output stream while the callback runs, one per
request it yields (marked with the page's lease in ``meta[FROM]`` and released when the
scheduler has it).  At zero every outlink of the page is kept and the worker writes them.
Without this middleware the outlinks still reach Redis before anything depends on them, in
more, smaller calls.  Order 2: outside every middleware that filters requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request

from focuscrawl.seam.meta import FROM
from focuscrawl.seam.middlewares.journal import PageCompletionMiddleware

from .connection import RedisServices

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class PageOutputMiddleware(PageCompletionMiddleware):
    """``SPIDER_MIDDLEWARES`` of a distributed worker (``settings.distributed``, the add-on)."""

    marks_pages_done = False  # pages are not journaled: only their outlinks are counted

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageOutputMiddleware:
        return cls(RedisServices.of(crawler, cls).redis_worker.outlinks.pages)

    def _track(self, lease: int, out: Any) -> None:
        if isinstance(out, Request):
            out.meta[FROM] = lease
            self.completion.hold(lease)
