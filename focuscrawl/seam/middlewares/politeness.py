"""PolitenessMiddleware: per-server concurrency and delay, enforced right before the download.

Runs last among downloader middlewares on the way out (order 950, after robots.txt) and first on
the way back, so it sees every response and every error — including a response another
middleware turned into a redirect or retry — and frees the server slot exactly once.
A slot is reserved when the scheduler hands a request out, and a reserved request started or
dropped here, through the crawl's ``focuscrawl.seam.lifecycle.Lifecycle`` (see also
``focuscrawl.core.frontier.hosts``);
requests it never saw, such as robots.txt, are held here until their server is free.

A request leaves on a later turn of the event loop than the one that started it; anything that
stalls the loop in between makes it reach the server late, and the *next* request to that server
then arrives less than a delay after it.  Two defences: the delay is counted again from the
first loop turn after the start (``HostPolicy.sent``), and with ``FOCUS_GC_FREEZE`` the objects
alive when the spider opens are moved out of the cyclic garbage collector's reach (``gc.freeze``,
undone at close): full collections over them took 60-170 ms in a test process, long enough to
shrink a 0.1 s gap by half as the server saw it.  ``FOCUS_GC_THRESHOLD`` (also undone at
close) collects the youngest objects every that many allocations instead of Python's 700: a
crawl makes thousands of objects a page that live past one such collection (requests, link
records, a re-rank's heap items) and were traversed again and again.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import TYPE_CHECKING

from scrapy import signals

from focuscrawl import config
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.engine import TIMEOUT_ERRORS
from focuscrawl.seam.meta import FINISHED, LEASE, SERVER, STARTED
from focuscrawl.seam.records import is_html
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from focuscrawl.core.frontier import HostPolicy


class PolitenessMiddleware:
    #: FocusScheduler needs a downloader middleware that sends ``request_finished``: it frees
    #: the server's slot and the MAX_PAGES budget (without one a crawl would wait forever)
    sends_request_finished = True

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        services = FocusServices.of(crawler, self)
        self.policy = services.policy
        self.lifecycle = services.lifecycle  # a handed-out request's reservation is its own
        self.servers = services.servers
        self._waiters: dict[str, list[asyncio.Future]] = {}
        self.gc = GcTuning(crawler)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PolitenessMiddleware:
        return cls(crawler)

    def _server(self, request: Request) -> str:
        return request.meta.get(SERVER) or self.servers.key(request.url)

    async def process_request(self, request: Request) -> None:
        meta = request.meta
        meta.pop(FINISHED, None)
        server = self._server(request)
        policy = self.policy
        while True:
            wait = policy.wait_time(server)
            if wait == 0:
                break
            if wait is None:  # the server is busy: wait until a request to it ends
                future = asyncio.get_running_loop().create_future()
                self._waiters.setdefault(server, []).append(future)
                await future
            else:
                await asyncio.sleep(wait)
        if LEASE in meta:
            self.lifecycle.started(server)
        else:
            policy.start(server, reserved=False)
        # The request is written to its socket on a later turn of the event loop; a long
        # callback or a GC pause in between delays it.  Count the next delay from then.
        asyncio.get_running_loop().call_soon(policy.sent, server)
        meta[STARTED] = time.monotonic()
        self.crawler.stats.inc_value("focus/politeness/started")
        return None

    def process_response(self, request: Request, response: Response) -> Response:
        self._finish(request, response.status, timed_out=False, html=is_html(response))
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self._finish(request, None, timed_out=is_timeout(exception))
        return None

    def _spider_closed(self) -> None:
        record_stats(self.policy, self.crawler.stats)

    def _finish(self, request: Request, status: int | None, *, timed_out: bool,
                html: bool = True) -> None:
        meta = request.meta
        if meta.get(FINISHED):
            return
        meta[FINISHED] = True
        server = self._server(request)
        started = meta.pop(STARTED, None)
        if started is not None:
            self.policy.finish(server, time.monotonic() - started, timed_out=timed_out)
            for future in self._waiters.pop(server, []):
                if not future.done():
                    future.set_result(None)
        elif LEASE in meta:
            self.lifecycle.dropped(server)
        if LEASE in meta:
            self.crawler.signals.send_catch_log(
                focus_signals.request_finished, request=request, status=status, html=html,
            )


def is_timeout(exception: Exception) -> bool:
    """Whether a download failed by timing out (the server is slow)."""
    return isinstance(exception, TIMEOUT_ERRORS)


def record_stats(policy: HostPolicy, stats: StatsCollector) -> None:
    """The politeness state's summary as ``focus/politeness/*`` stats (at the crawl's end)."""
    for name, value in policy.describe().items():
        stats.set_value(f"focus/politeness/{name}", value)


class GcTuning:
    """FOCUS_GC_FREEZE and FOCUS_GC_THRESHOLD from the spider's opening to its closing (both
    politeness middlewares, single-process and distributed, use one)."""

    def __init__(self, crawler: Crawler) -> None:
        self._frozen = False
        self._freeze = config.get(crawler.settings, "FOCUS_GC_FREEZE")
        self._threshold = config.get(crawler.settings, "FOCUS_GC_THRESHOLD")
        self._thresholds: tuple[int, ...] | None = None  # the collector's, to restore at close
        if self._freeze or self._threshold > 0:
            crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    def spider_opened(self) -> None:
        if self._threshold > 0:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(self._threshold, *self._thresholds[1:])
        if self._freeze:
            gc.collect()
            gc.freeze()
            self._frozen = True

    def spider_closed(self) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
