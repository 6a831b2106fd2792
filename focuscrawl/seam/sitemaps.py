"""A continuous crawl's sitemap hints: ``<lastmod>`` where sites publish it.

Every ``every`` seconds, for each server whose pages the crawl keeps and whose robots.txt (as
the robots.txt middleware read it) names sitemaps in ``Sitemap:`` lines, the sitemaps are
fetched again through the engine, as robots.txt is (the politeness middleware spaces them like
any request of the server), a sitemap index one level deep, gzipped files unpacked within
``DOWNLOAD_MAXSIZE``.  Scrapy's own parser reads them (``scrapy.utils.sitemap``, the one
``SitemapSpider`` uses; ultimate-sitemap-parser fetches with its own HTTP client, outside the
crawl's politeness).  A kept page whose ``<lastmod>`` is later than its last visit is due at once
and worth its whole weight (``RevisitSchedule.hint``).  Only ever earlier: a sitemap that says
nothing changed moves no revisit back, since many sites' lastmod is stale.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap
from twisted.internet.task import LoopingCall

from focuscrawl.core.urls import canonical
from focuscrawl.seam.meta import SITEMAP
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focuscrawl.seam.revisit import Revisits

logger = logging.getLogger(__name__)

#: how often a server's sitemaps are read again (seconds)
SITEMAP_EVERY = 300.0
#: the most sitemaps a server's index leads to, per reading
MAX_SITEMAPS = 10


def lastmod_epoch(value: str) -> float | None:
    """A W3C datetime (``2024-05-01``, ``2024-05-01T10:00:00.5+02:00``, ``...Z``) as epoch
    seconds; None if it is not one.  A date or a time without a zone is UTC."""
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


class SitemapHints:
    """Reads the kept servers' sitemaps now and then (module docstring)."""

    def __init__(self, crawler: Crawler, revisits: Revisits, every: float | None = None,
                 ) -> None:
        self.crawler = crawler
        self.revisits = revisits
        self.every = SITEMAP_EVERY if every is None else every
        self.max_size = crawler.settings.getint("DOWNLOAD_MAXSIZE", 0)
        self._read: dict[str, float] = {}  # sitemap URL -> when it was last read
        self._loop: LoopingCall | None = None

    def start(self) -> None:
        self._loop = LoopingCall(self._tick)
        self._loop.start(min(self.every, 30.0), now=False)

    def stop(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def _tick(self) -> Any:
        # a Deferred over the coroutine (an asyncio task under the asyncio reactor): the loop
        # waits for one reading to end before it starts the next
        return deferred_from_coro(self.read_due())

    def _sitemaps(self) -> list[str]:
        """The sitemaps named by the robots.txt of each server the crawl keeps pages of."""
        services = FocusServices.find(self.crawler)
        robots = services.robots if services is not None else None
        if robots is None:
            return []
        one_url: dict[str, str] = {}
        for page in self.revisits.frontier.schedule.live():
            one_url.setdefault(page.url.split("/", 3)[2], page.url)
        found: list[str] = []
        for url in one_url.values():
            found.extend(u for u in robots.sitemaps(url) if u not in found)
        return found

    async def read_due(self) -> int:
        """Read every sitemap not read for ``every`` seconds; the pages it made due."""
        now = self.revisits.clock()
        hinted = 0
        for url in self._sitemaps():
            if now - self._read.get(url, float("-inf")) < self.every:
                continue
            self._read[url] = now
            hinted += await self._read_one(url, depth=0)
        return hinted

    async def _read_one(self, url: str, depth: int) -> int:
        stats = self.crawler.stats
        try:
            response = await self.crawler.engine.download_async(Request(
                url, callback=NO_CALLBACK, dont_filter=True,
                meta={"dont_retry": True, SITEMAP: True}))
        except Exception as e:  # noqa: BLE001 - a sitemap that fails says nothing
            stats.inc_value("focus/revisit/sitemap_errors")
            logger.debug("sitemap %s: %s", url, e)
            return 0
        stats.inc_value("focus/revisit/sitemap_fetches")
        if response.status != 200:
            return 0
        body = response.body
        if body[:2] == b"\x1f\x8b":  # a .xml.gz file (not a Content-Encoding)
            try:
                body = gunzip(body, max_size=self.max_size)
            except Exception:  # noqa: BLE001 - corrupt or over the size limit
                stats.inc_value("focus/revisit/sitemap_errors")
                return 0
        try:
            sitemap = Sitemap(body)
            entries: list[dict[str, Any]] = list(sitemap)
        except Exception:  # noqa: BLE001 - not XML
            stats.inc_value("focus/revisit/sitemap_errors")
            return 0
        if sitemap.type == "sitemapindex":
            hinted = 0
            if depth == 0:
                for entry in entries[:MAX_SITEMAPS]:
                    hinted += await self._read_one(entry["loc"], depth=1)
            return hinted
        hinted = 0
        frontier = self.revisits.frontier
        for entry in entries:
            when = lastmod_epoch(entry.get("lastmod", "") or "")
            if when is None:
                continue
            try:
                page = canonical(entry["loc"])
            except ValueError:
                continue
            hinted += bool(frontier.hint(page, when))
        if hinted:
            stats.inc_value("focus/revisit/sitemap_hints", hinted)
        return hinted
