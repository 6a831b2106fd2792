"""Servers by IP address (``FOCUS_SERVER_KEY = "ip"``): each host resolved before its request is
scheduled, by the reactor's resolver, never on the reactor thread (``focuscrawl.seam.servers``).

:class:`ServerAddressMiddleware` (a spider middleware) resolves the host of every seed and every
outlink before it goes on towards the scheduler, waiting for the lookup only there: the reactor
keeps running meanwhile.  Order 960: on the spider's output before the link filter (950), whose
per-server cap asks for the server.  :class:`RedirectAddressMiddleware` (a downloader
middleware, 610: on the way back just before RedirectMiddleware at 600 turns a 3xx response into
a request) resolves the host of a ``Location`` redirect target.  A request reaching the
scheduler another way (a meta refresh, a request an extension schedules) keys its host by name
(``ServerKeys.key``), counted in ``focus/servers/unresolved``.

Both are off (``NotConfigured``) unless ``FOCUS_SERVER_KEY = "ip"``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached
from w3lib.url import safe_url_string

from focuscrawl import config
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from focuscrawl.seam.servers import ServerKeys


def _servers(crawler: Crawler, component: Any) -> ServerKeys:
    if config.get(crawler.settings, "FOCUS_SERVER_KEY") != "ip":
        raise NotConfigured
    return FocusServices.of(crawler, component).servers


class ServerAddressMiddleware:
    """``SPIDER_MIDDLEWARES``: seeds and outlinks leave with their host resolved."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.servers = _servers(crawler, self)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ServerAddressMiddleware:
        return cls(crawler)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for out in start:
            if isinstance(out, Request):
                await self.servers.resolve(out.url)
            yield out

    async def process_spider_output(self, response: Response,
                                    result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for out in result:
            if isinstance(out, Request):
                await self.servers.resolve(out.url)
            yield out

    def _spider_closed(self) -> None:
        if self.servers.unresolved:
            self.crawler.stats.set_value("focus/servers/unresolved", self.servers.unresolved)


class RedirectAddressMiddleware:
    """``DOWNLOADER_MIDDLEWARES``: a ``Location`` redirect's target host, resolved before
    RedirectMiddleware schedules it."""

    def __init__(self, crawler: Crawler) -> None:
        self.servers = _servers(crawler, self)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedirectAddressMiddleware:
        return cls(crawler)

    async def process_response(self, request: Request, response: Response) -> Response:
        location = response.headers.get(b"Location")
        if location and 300 <= response.status < 400:
            # the target as RedirectMiddleware builds it
            target = safe_url_string(location)
            if location.startswith(b"//"):
                target = f"{urlparse_cached(request).scheme}://{target.lstrip('/')}"
            await self.servers.resolve(urljoin(request.url, target))
        return response
