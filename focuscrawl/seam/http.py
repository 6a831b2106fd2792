"""Scrapy's HTTP/1.1 download handler, without Twisted's silent re-send.

Twisted's connection pool sends a GET again, at once and on a new connection, when the kept-alive
connection it went out on closes before the response.  Scrapy never learns of it, so the server
gets the request twice within milliseconds, outside the per-server delay (a test that kills a
Redis master mid-crawl caught it).  Here the failure reaches Scrapy instead: RetryMiddleware's
retry goes back through the scheduler and waits its turn at the server like any request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class HTTPDownloadHandler(HTTP11DownloadHandler):
    """``DOWNLOAD_HANDLERS`` for http and https (``config.HTTP_HANDLER``)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._pool.retryAutomatically = False
