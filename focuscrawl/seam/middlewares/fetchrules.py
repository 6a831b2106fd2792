"""FetchRulesMiddleware: Pant et al.'s fetch rules, with Scrapy's public download signals.

* **Only the first ``FOCUS_MAX_PAGE_BYTES`` (100 KB) of a page are kept; a longer page is
  truncated, not dropped.**  Scrapy's DOWNLOAD_MAXSIZE cancels the download instead.  A
  ``bytes_received`` handler raises ``StopDownload(fail=False)`` once the limit is passed, so the
  download handler closes the connection and returns what it has (flag ``download_stopped``);
  ``process_response`` then cuts the body to exactly the limit (after decompression) and adds
  the flag ``truncated``, which the spider exports.  Signals rather than a subclass of the
  HTTP/1.1 handler: they are public API and every Scrapy HTTP handler sends them.
* **A crawl that exports content downloads its pages whole** (up to the content's bound,
  ``FOCUS_CONTENT_MAX_CHARS`` bytes, and DOWNLOAD_MAXSIZE): the response every component sees
  is still cut at ``FOCUS_MAX_PAGE_BYTES`` (the score, the hotness, the links, the crawl order:
  Pant's rule, unchanged), and the whole body waits in ``meta[WHOLE_BODY]`` for the content
  extraction alone (None: longer than the content's bound).  A news page's article often
  starts or ends past its first 100 KB.
* **Only HTML is downloaded.**  A ``headers_received`` handler stops a response whose
  Content-Type is present and not HTML before its body is read (``focus/fetch/not_html``); the
  spider then skips the empty response as not HTML.  robots.txt requests are exempt, and so
  are a continuous crawl's sitemaps (``meta[SITEMAP]``: XML, cut at ``SITEMAP_MAX_BYTES``, the
  sitemap protocol's own bound, not at a page's).
* **Error pages are counted** (``focus/fetch/error_status/<code>``) after retries, then dropped
  by Scrapy's HttpErrorMiddleware; download errors likewise (``focus/fetch/failed/<error>``).
* The 10 s timeout is ``DOWNLOAD_TIMEOUT``, redirects are Scrapy's RedirectMiddleware.

Order 540: after RetryMiddleware (550) and HttpCompressionMiddleware (590) on the way back, so
it sees final outcomes and decompressed bodies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured, StopDownload

from focuscrawl.config import FetchOptions
from focuscrawl.seam.content import download_bound
from focuscrawl.seam.meta import ROBOTS, SITEMAP, TRUNCATED, WHOLE_BODY
from focuscrawl.seam.middlewares.robots import ROBOTS_MAX_BYTES

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Headers, Response

_BYTES = "_focus_bytes"
#: the most a sitemap may be, uncompressed (the sitemap protocol's limit)
SITEMAP_MAX_BYTES = 50 * 1024 * 1024


class FetchRulesMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        o = FetchOptions.from_settings(crawler.settings)
        self.max_bytes = o.max_page_bytes
        self.html_only = o.html_only
        self.types = tuple(t.lower() for t in o.types)
        if not self.max_bytes and not self.html_only:
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        # the bytes a page is downloaded to for its content, when more than max_bytes: known
        # once the spider has published its arguments (spider_opened)
        self.whole_bytes = 0
        if self.max_bytes:
            crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
            crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        if self.html_only:
            crawler.signals.connect(self._headers_received, signal=signals.headers_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FetchRulesMiddleware:
        return cls(crawler)

    def _spider_opened(self, spider: Any) -> None:
        bound = download_bound(self.crawler.settings, spider)
        self.whole_bytes = bound if bound > self.max_bytes else 0

    def _limit(self, request: Request) -> int:
        """Where the body every component sees is cut."""
        if request.meta.get(ROBOTS):
            return max(self.max_bytes, ROBOTS_MAX_BYTES)
        if request.meta.get(SITEMAP):
            return max(self.max_bytes, SITEMAP_MAX_BYTES)
        return self.max_bytes

    def _whole(self, request: Request) -> int:
        """How far the page is downloaded for its content (a page, not robots.txt or a sitemap,
        of a crawl that exports content; never past a request's own download_maxsize, which
        Scrapy would drop it at); 0: not whole."""
        meta = request.meta
        if not self.whole_bytes or meta.get(ROBOTS) or meta.get(SITEMAP):
            return 0
        maxsize = meta.get("download_maxsize")
        whole = min(self.whole_bytes, int(maxsize)) if maxsize else self.whole_bytes
        return whole if whole > self.max_bytes else 0

    # -- signal handlers, called by the download handler ------------------------------------
    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        meta = request.meta
        received = meta.get(_BYTES, 0) + len(data)
        meta[_BYTES] = received
        if received > (self._whole(request) or self._limit(request)):
            meta[TRUNCATED] = True
            raise StopDownload(fail=False)

    def _headers_received(self, headers: Headers, request: Request, **kwargs: Any) -> None:
        meta = request.meta
        if meta.get(ROBOTS) or meta.get(SITEMAP) or meta.get("dont_obey_robotstxt"):
            return
        raw = headers.get(b"Content-Type")
        if not raw:
            return  # unknown: let the spider sniff it
        ctype = raw.decode("latin-1").split(";", 1)[0].strip().lower()
        if ctype and ctype not in self.types:
            self.stats.inc_value("focus/fetch/not_html")
            raise StopDownload(fail=False)

    # -- the downloader middleware ---------------------------------------------------------
    def process_request(self, request: Request) -> None:
        request.meta.pop(_BYTES, None)  # a retry or redirect copies the meta
        request.meta.pop(TRUNCATED, None)
        request.meta.pop(WHOLE_BODY, None)
        return None

    def process_response(self, request: Request, response: Response) -> Response:
        status = response.status
        if status >= 400:
            self.stats.inc_value("focus/fetch/errors")
            self.stats.inc_value(f"focus/fetch/error_status/{status}")
            return response
        limit = self._limit(request) if self.max_bytes else 0
        body = response.body
        stopped = request.meta.get(TRUNCATED)
        if limit and (stopped or len(body) > limit):
            whole = self._whole(request)
            if whole:  # for the content alone; None: past its bound
                request.meta[WHOLE_BODY] = None if stopped or len(body) > whole else body
            self.stats.inc_value("focus/fetch/truncated")
            flags = [*response.flags, "truncated"] if "truncated" not in response.flags else None
            response = response.replace(body=body[:limit], flags=flags or response.flags)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        if isinstance(exception, IgnoreRequest):  # robots.txt or a filter: counted there
            return None
        self.stats.inc_value("focus/fetch/failed")
        self.stats.inc_value(f"focus/fetch/failed/{type(exception).__name__}")
        return None
