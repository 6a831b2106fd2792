"""Replay a recorded WARC as the web: the virtual crawler of Cho et al. and Pant et al.

Register for both schemes and point ``FOCUS_REPLAY`` at a WARC (e.g. one written with
``FOCUS_WARC``)::

    DOWNLOAD_HANDLERS = {"http": "focuscrawl.seam.replay.ReplayDownloadHandler",
                         "https": "focuscrawl.seam.replay.ReplayDownloadHandler"}
    FOCUS_REPLAY = "repo.warc.gz"

Every request is then answered from the WARC, never from the network: the recorded status,
headers and body (compressed bodies stay compressed, Scrapy's HttpCompressionMiddleware undoes
them as for a live answer); a recorded redirect replays as the 3xx with its ``Location``, so
RedirectMiddleware follows it; a download that failed without a response (recorded by
``focuscrawl.seam.output.warc`` as ``WARC-Focus-Error``) fails again at once with the same kind of
exception
(no timeout is waited for); a URL that is not recorded, robots.txt included, answers 404.
URLs are matched after w3lib canonicalisation (fragment dropped, query sorted).  Which record
answers a URL fetched more than once is decided in ``focuscrawl.evaluation.warcindex``.

The WARC is indexed once, when the crawler starts (``lazy = False``): status lines, headers and
file offsets in memory, bodies read back by offset, so a replay is fast, deterministic and
offline.  The http and https handlers of one crawler share that index.

With ``FOCUS_REPLAY`` unset the handler hands every request to Scrapy's own handler for the
scheme (``DOWNLOAD_HANDLERS_BASE``), so registering it permanently is harmless.
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.http import Headers
from scrapy.responsetypes import responsetypes
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object

from focuscrawl import config
from focuscrawl.evaluation.warcindex import WarcIndex
from focuscrawl.seam.engine import download_error, download_errors

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

REPLAY_FLAG = "replay"
_MISSING_BODY = b"<html><head><title>404 Not Found</title></head><body>Not recorded</body></html>"
# Failures a replay may raise again, by the class name recorded; anything else -> DownloadFailed.
_REPLAYABLE: dict[str, type[Exception]] = {
    **download_errors(), f"{TunnelError.__module__}.{TunnelError.__qualname__}": TunnelError}
_FAILED = download_error("DownloadFailedError")
_indexes: weakref.WeakKeyDictionary[Any, WarcIndex] = weakref.WeakKeyDictionary()


def _index_for(crawler: Crawler, path: str) -> WarcIndex:
    idx = _indexes.get(crawler)
    if idx is None or idx.path != path:
        t0 = time.monotonic()
        idx = WarcIndex(path)
        _indexes[crawler] = idx
        logger.info(
            "Replaying %s: %d URLs from %d records, indexed in %.1f s%s",
            path, len(idx), idx.records, time.monotonic() - t0,
            " (truncated file)" if idx.truncated else "",
        )
    return idx


HANDLER = "focuscrawl.seam.replay.ReplayDownloadHandler"


def configure_replay(settings: Any) -> bool:
    """With FOCUS_REPLAY set, answer http(s) from the WARC; no delays, no network guard.

    Called while settings are still mutable (the topic spider's ``update_settings``, the
    add-on); settings given on the command line keep their value.
    """
    if not config.get(settings, "FOCUS_REPLAY"):
        return False
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    handlers.update({"http": HANDLER, "https": HANDLER})
    settings.set("DOWNLOAD_HANDLERS", handlers, priority="spider")
    settings.set("FOCUS_DELAY", 0, priority="spider")  # a WARC needs no politeness ...
    # ... nor the private-address guard, whose DNS lookups of offline hosts would stall it
    settings.set("FOCUS_BLOCK_PRIVATE", False, priority="spider")
    return True


class ReplayDownloadHandler:
    """Download handler answering http(s) requests from a WARC (``FOCUS_REPLAY``)."""

    lazy = False  # index the WARC at start-up, not inside the first request

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        path = config.get(crawler.settings, "FOCUS_REPLAY")
        self.index: WarcIndex | None = _index_for(crawler, str(path)) if path else None
        self._fallback: dict[str, Any] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReplayDownloadHandler:
        return cls(crawler)

    async def download_request(self, request: Request) -> Response:
        if self.index is None:
            return await self._live(request)
        t0 = time.monotonic()
        stats = self.crawler.stats
        entry = self.index.get(request.url)
        if entry is None and (error := self.index.error(request.url)) is not None:
            if stats is not None:
                stats.inc_value("replay/failure")
            cls = _REPLAYABLE.get(error, _FAILED)
            raise cls(f"replayed failure ({error}) for {request.url}")
        if entry is None:
            if stats is not None:
                stats.inc_value("replay/miss")
            headers = Headers({"Content-Type": "text/html"})
            response = responsetypes.from_args(headers=headers, url=request.url)(
                url=request.url, status=404, headers=headers, body=_MISSING_BODY,
                flags=[REPLAY_FLAG, "replay-miss"], request=request,
            )
        else:
            if stats is not None:
                stats.inc_value("replay/hit")
            body = self.index.body(entry)
            headers = Headers()
            for k, v in entry.headers:
                headers.appendlist(k, v)
            respcls = responsetypes.from_args(headers=headers, url=request.url, body=body)
            response = respcls(
                url=request.url, status=entry.status, headers=headers, body=body,
                flags=[REPLAY_FLAG], request=request, protocol=entry.protocol,
            )
        request.meta["download_latency"] = time.monotonic() - t0
        return response

    async def _live(self, request: Request) -> Response:
        """No FOCUS_REPLAY: Scrapy's own handler for this scheme answers."""
        scheme = urlparse_cached(request).scheme
        handler = self._fallback.get(scheme)
        if handler is None:
            path = self.crawler.settings.getdict("DOWNLOAD_HANDLERS_BASE")[scheme]
            handler = self._fallback[scheme] = build_from_crawler(load_object(path), self.crawler)
        return await handler.download_request(request)

    async def close(self) -> None:
        for handler in self._fallback.values():
            await handler.close()
        if self.index is not None:
            self.index.close()
