"""The Scrapy engine internals focuscrawl reads, all in this one module (Scrapy 2.13 to 2.19).

Scrapy has no public API for what a polite scheduler needs to know, so these are read here
and nowhere else:

* ``engine._slot.nextcall``: the engine's "ask the scheduler again" trigger.  A scheduler that
  returned None while a server waits out its delay wakes the engine when the server is due
  (otherwise it waits for the engine's 5 s heartbeat).  ``CallLaterOnce.schedule(delay)``
  does nothing while a call is pending, so a wake-up is our own ``callLater`` that then calls
  ``schedule()``.
* ``engine.scraper.slot.active``: responses still in the spider (their outlinks not all
  queued yet): the strict order waits for them.
* ``engine.downloader.active``: requests being downloaded.
* ``engine._slot.inprogress``: requests the engine still holds (downloading or in the spider).
* ``engine._slot.closing``: the spider is closing.
* ``crawler.spider`` left empty once the spider closed (:func:`report_failure`): the one way a
  component can make Scrapy's own ``crawl`` command (and ``CrawlerProcess`` /
  ``CrawlerRunner`` scripts, Scrapyd) count a crawl as failed -- exit status 1 -- without a
  traceback.  Scrapy's runners set ``bootstrap_failed`` when a crawl raised or when its crawler
  has no spider once the crawl is over (``CrawlerRunner._crawl``, ``AsyncCrawlerRunner._done``);
  raising would print a traceback.  The spider is unset at ``spider_closed``, the last signal
  of a crawl that never started (``engine_stopped`` is not sent then); the engine keeps its
  own reference for the rest of the close.  ``tests/integration/test_third_party.py`` pins the
  rule (exit 1).

What differs between the supported Scrapy releases is decided here too, so no other module
learns which release it runs on: the classes a failed download raises (:func:`download_error`;
Scrapy 2.15 gave each kind its own, older releases raise Twisted's), and how a component ends a
crawl that cannot start (:func:`refuse_at_open`; 2.18 closes the spider when a
``spider_opened`` handler raises ``CloseSpider``, older releases log a traceback and crawl on).

Every accessor is guarded and returns a neutral value when the internal is gone;
:func:`missing` names the ones the installed Scrapy lacks, the schedulers log it once at open,
and ``tests/integration/test_engine.py`` pins each one, so a Scrapy upgrade that moves them
breaks a test, not a crawl's speed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import exceptions as scrapy_exceptions
from scrapy import signals
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.defer import CancelledError
from twisted.internet.error import ConnectionRefusedError as TxConnectionRefusedError
from twisted.internet.error import DNSLookupError
from twisted.internet.error import TimeoutError as TxTimeoutError
from twisted.web.client import ResponseFailed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

INTERNALS = ("engine._slot.nextcall", "engine.scraper.slot.active", "engine.downloader.active",
             "engine._slot.inprogress", "engine._slot.closing")


#: Scrapy 2.15's download failures and the Twisted ones its handlers raised before (the mapping
#: of Scrapy's own ``wrap_twisted_exceptions``)
_TWISTED_DOWNLOAD_ERRORS: dict[str, type[Exception]] = {
    "CannotResolveHostError": DNSLookupError,
    "DownloadConnectionRefusedError": TxConnectionRefusedError,
    "DownloadFailedError": ResponseFailed,
    "DownloadTimeoutError": TxTimeoutError,
    "DownloadCancelledError": CancelledError,
    "ResponseDataLossError": ResponseFailed,
}


def download_error(name: str) -> type[Exception]:
    """The class this Scrapy raises for the download failure Scrapy 2.15+ names ``name``."""
    found = getattr(scrapy_exceptions, name, None)
    return found if isinstance(found, type) else _TWISTED_DOWNLOAD_ERRORS[name]


def download_errors() -> dict[str, type[Exception]]:
    """Each kind of download failure by its qualified name, Scrapy's and Twisted's alike, as
    the class this Scrapy raises for it (a record of one release replays on another)."""
    found: dict[str, type[Exception]] = {}
    for name, twisted in _TWISTED_DOWNLOAD_ERRORS.items():
        cls = download_error(name)
        for known in (f"scrapy.exceptions.{name}", f"{twisted.__module__}.{twisted.__qualname__}",
                      f"{cls.__module__}.{cls.__qualname__}"):
            found.setdefault(known, cls)
    return found


#: what a download that timed out raises (some code paths raise Twisted's on any release)
TIMEOUT_ERRORS: tuple[type[Exception], ...] = (download_error("DownloadTimeoutError"),
                                                TxTimeoutError)


def _engine(crawler: Crawler) -> Any:
    try:
        return getattr(crawler, "engine", None)
    except RuntimeError:  # a crawler whose engine is not there (yet)
        return None


def has_engine(crawler: Crawler) -> bool:
    return _engine(crawler) is not None


def scheduler_of(crawler: Crawler) -> Any:
    """The crawl's scheduler (whatever its class), or None before the engine has one."""
    return getattr(_engine(crawler), "scheduler", None)


def _slot(crawler: Crawler) -> Any:
    return getattr(_engine(crawler), "_slot", None)


def nextcall(crawler: Crawler) -> Any:
    """The engine's trigger to ask the scheduler again, or None."""
    return getattr(_slot(crawler), "nextcall", None)


def pages_in_spider(crawler: Crawler) -> bool:
    """True while a fetched page is still in the spider, its outlinks not all queued."""
    slot = getattr(getattr(_engine(crawler), "scraper", None), "slot", None)
    return bool(slot is not None and slot.active)


def downloading(crawler: Crawler) -> bool:
    """True while the downloader holds a request."""
    return bool(getattr(getattr(_engine(crawler), "downloader", None), "active", None))


def in_progress(crawler: Crawler) -> set[Any] | None:
    """The requests the engine holds (downloading or in the spider), or None if unknown."""
    return getattr(_slot(crawler), "inprogress", None)


def stopping(crawler: Crawler) -> bool:
    """True once the engine stops or the spider is closing."""
    engine = _engine(crawler)
    if engine is None:
        return False
    return (not getattr(engine, "running", True)
            or getattr(_slot(crawler), "closing", None) is not None)


def close(crawler: Crawler, reason: str) -> None:
    """Close the running spider with ``reason`` (public engine API: ``close_spider_async``),
    unless there is no engine or spider yet or it is closing already."""
    engine = _engine(crawler)
    if engine is None or getattr(engine, "spider", None) is None or stopping(crawler):
        return
    deferred_from_coro(engine.close_spider_async(reason=reason))


#: a ``spider_opened`` handler may raise ``CloseSpider`` (Scrapy 2.18+)
_CLOSES_AT_OPEN = scrapy.version_info >= (2, 18)


def refuse_at_open(crawler: Crawler, refusal: scrapy_exceptions.CloseSpider) -> None:
    """From a ``spider_opened`` handler: close the spider with ``refusal.reason`` before it
    fetches anything.  Older Scrapy closes it when the engine starts, before the engine reads
    a start request (it does not once the spider is closed)."""
    if _CLOSES_AT_OPEN:
        raise refusal
    engine = _engine(crawler)
    if engine is None:
        return

    def close_once_started() -> Any:
        crawler.signals.disconnect(close_once_started, signal=signals.engine_started)
        return deferred_from_coro(engine.close_spider_async(reason=refusal.reason))

    # a strong reference: the signal holds the only one to this closure
    crawler.signals.connect(close_once_started, signal=signals.engine_started, weak=False)


def report_failure(crawler: Crawler) -> None:
    """Make ``scrapy crawl`` (any project's) exit 1: call at ``spider_closed`` (see above)."""
    crawler.spider = None


def missing(crawler: Crawler, *, at_open: bool = False) -> list[str]:
    """The internals this Scrapy lacks, asked while a crawl runs.  ``at_open`` (the scheduler
    opens before the scraper's slot exists): the scraper only needs a ``slot`` attribute."""
    engine = _engine(crawler)
    slot = _slot(crawler)
    scraper = getattr(engine, "scraper", None)
    scraper_slot = getattr(scraper, "slot", None)
    found = {
        "engine._slot.nextcall": callable(getattr(nextcall(crawler), "schedule", None)),
        "engine.scraper.slot.active": (hasattr(scraper, "slot") if at_open and scraper_slot is None
                                       else hasattr(scraper_slot, "active")),
        "engine.downloader.active": hasattr(getattr(engine, "downloader", None), "active"),
        "engine._slot.inprogress": hasattr(slot, "inprogress"),
        "engine._slot.closing": hasattr(slot, "closing"),
    }
    return [name for name in INTERNALS if not found[name]]


def warn_if_missing(crawler: Crawler) -> None:
    """Once, at open: what a crawl loses when this Scrapy moved an internal."""
    if _slot(crawler) is None:
        return  # no engine (a scheduler driven by hand, as tests do)
    gone = missing(crawler, at_open=True)
    if gone:
        logger.warning("focuscrawl: this Scrapy lacks %s; crawls work but wait for the "
                       "engine's heartbeat instead of being woken (tested with Scrapy 2.19)",
                       ", ".join(gone))


class Waker:
    """At most one pending wake-up of the engine, at the earliest time asked for."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._call: Any = None
        self._due = 0.0

    def can_wake(self) -> bool:
        return nextcall(self.crawler) is not None

    def now(self) -> None:
        trigger = nextcall(self.crawler)
        if trigger is not None:
            trigger.schedule()

    def at(self, due: float, now: float) -> bool:
        """Wake the engine at monotonic time ``due``; False if it cannot be woken."""
        trigger = nextcall(self.crawler)
        if trigger is None:
            return False
        if self._call is not None and self._call.active():
            if self._due <= due:
                return True
            self._call.cancel()
        from twisted.internet import reactor

        self._due = due
        # zope interface methods have no self: without the mypy-zope plugin mypy reads
        # IReactorTime.callLater's delay as self and the delay given as the callable
        self._call = reactor.callLater(max(0.0, due - now), trigger.schedule)  # type: ignore[arg-type]
        return True

    def cancel(self) -> None:
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
