"""scrapy-playwright's download handler, without Twisted's silent re-send.

With rendering on it is the http(s) handler: the pages it does not render (hosts outside
``FOCUS_RENDER_DOMAINS``, robots.txt) it downloads as Scrapy's HTTP/1.1 handler does, over a
Twisted pool that would send a GET again behind the politeness middleware's back when its
kept-alive connection drops (:mod:`focuscrawl.seam.http`).  Its own module: it imports
playwright, which a crawl that renders nothing never loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class RenderingDownloadHandler(ScrapyPlaywrightDownloadHandler):
    """``DOWNLOAD_HANDLERS`` for http and https while rendering (``render.PLAYWRIGHT_HANDLER``)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._pool.retryAutomatically = False
