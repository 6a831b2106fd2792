"""How a request FocusScheduler handed out ends, when nothing else tells it.

* :class:`SignalPoliteness` -- the scheduler set alone as ``SCHEDULER`` (another project, none
  of focuscrawl's middlewares): per-server politeness from Scrapy's public signals
  (``request_reached_downloader``, ``response_downloaded``, ``request_left_downloader``), in
  ``PolitenessMiddleware``'s place.  It tells the lifecycle when a request starts, what came
  back and when it left, and sends focuscrawl's ``request_finished`` as the middleware does.
* :class:`FetchFailures` -- the errback of every handed-out request that has none of its own:
  it counts the drops Scrapy makes silently and settles the page's lease (with JOBDIR), and,
  standalone, frees the server of a request refused on its way to the downloader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError

from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.meta import LEASE, SERVER
from focuscrawl.seam.records import is_html

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from focuscrawl.core.frontier import HostPolicy
    from focuscrawl.seam.lifecycle import Lifecycle

# Scrapy drops these responses on the way back (IgnoreRequest) without a stat: counted here
_DROPPED = (("max redirections", "max_redirections"),
            ("during decompression", "decompressed_too_large"))


class SignalPoliteness:
    """Politeness without focuscrawl's middlewares (module docstring).  Scrapy's signals carry
    every request (robots.txt ones too): only leases are ours."""

    def __init__(self, crawler: Crawler, lifecycle: Lifecycle, policy: HostPolicy) -> None:
        self.crawler = crawler
        self.lifecycle = lifecycle
        self.policy = policy
        connect = crawler.signals.connect
        connect(self.reached, signal=signals.request_reached_downloader)
        connect(self.downloaded, signal=signals.response_downloaded)
        connect(self.left, signal=signals.request_left_downloader)

    def reached(self, request: Request) -> None:
        meta = request.meta
        if LEASE in meta and self.lifecycle.started(meta[SERVER], meta[LEASE]):
            self.crawler.stats.inc_value("focus/politeness/started")

    def downloaded(self, response: Any, request: Request) -> None:
        self.lifecycle.answered(request.meta.get(LEASE), response.status, is_html(response))

    def left(self, request: Request) -> None:
        meta = request.meta
        answer = self.lifecycle.left(meta[SERVER], meta[LEASE]) if LEASE in meta else None
        if answer is not None:
            status, html = answer
            self._finished(request, status, html)

    def dropped(self, request: Request) -> None:
        """A request refused on its way to the downloader (Scrapy's robots.txt or offsite
        middleware) frees its server's reservation and its share of the budget."""
        meta = request.meta
        if LEASE in meta and self.lifecycle.dropped(meta[SERVER], meta[LEASE]):
            self._finished(request, None)

    def _finished(self, request: Request, status: int | None, html: bool = True) -> None:
        self.crawler.signals.send_catch_log(
            focus_signals.request_finished, request=request, status=status, html=html)

    def close(self) -> None:
        """The politeness state's summary, as ``PolitenessMiddleware`` gives it."""
        for name, value in self.policy.describe().items():
            self.crawler.stats.set_value(f"focus/politeness/{name}", value)


class FetchFailures:
    """The errback of handed-out requests: a page that failed or was dropped ends here."""

    def __init__(self, crawler: Crawler, lifecycle: Lifecycle,
                 standalone: SignalPoliteness | None) -> None:
        self.stats = crawler.stats
        self.lifecycle = lifecycle
        self.standalone = standalone

    def ours(self, request: Request) -> bool:
        """Whether ``request``'s errback is this one (a redirect or retry copies it)."""
        return request.errback == self.errback

    def errback(self, failure: Any) -> Any:
        """Counts the drops Scrapy makes silently (``focus/fetch/dropped/<reason>``: a redirect
        chain too long, a body inflating past DOWNLOAD_MAXSIZE) and, with JOBDIR, settles the
        page's lease.  Returns the failure: Scrapy then logs it as without an errback."""
        exc = failure.value
        if isinstance(exc, IgnoreRequest) and not isinstance(exc, HttpError):
            text = str(exc)
            for needle, reason in _DROPPED:
                if needle in text:
                    self.stats.inc_value(f"focus/fetch/dropped/{reason}")
        request = getattr(failure, "request", None)
        if request is not None and self.standalone is not None:
            self.standalone.dropped(request)
        if request is not None:
            self.lifecycle.finish(request.meta.get(LEASE))
        return failure
