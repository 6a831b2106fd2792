"""The ``Dashboard`` extension: serves the live dashboard from the crawl's own reactor.

    -s FOCUS_DASHBOARD=127.0.0.1:8050        # port 0: a free port; the log says which

Off when ``FOCUS_DASHBOARD`` is empty.  It keeps its figures up to date from two signals,
focuscrawl's ``page_scored`` and Scrapy's ``response_received`` (O(1) a page,
:mod:`.tracker`), and builds the rest only when asked (:mod:`.status`).  An address outside
loopback needs ``FOCUS_DASHBOARD_TOKEN``: without one the crawl refuses to start (one line,
``scrapy crawl`` exits 1, as for any start error).  ``FOCUS_DASHBOARD_LINGER`` keeps serving
the final figures that many seconds after the crawl ended (a Prometheus scrape every 15 s
would otherwise miss them); the process exits only then.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import task
from twisted.internet.error import CannotListenError

from focuscrawl import config
from focuscrawl.core.urls import host as host_of
from focuscrawl.seam import engine as scrapy_engine
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.services import FocusServices
from focuscrawl.seam.signals import START_ERROR_STAT
from focuscrawl.seam.watch.dashboard.metrics import exposition, registry_for
from focuscrawl.seam.watch.dashboard.status import StatusBuilder
from focuscrawl.seam.watch.dashboard.tracker import Tracker
from focuscrawl.seam.watch.dashboard.web import DashboardResource, QuietSite, loopback

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.interfaces import IListeningPort

logger = logging.getLogger(__name__)


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[v6]:PORT`` or ``PORT`` (loopback) -> (host, port); ValueError."""
    value = value.strip()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":")
    elif value.count(":") == 1:
        host, port = value.split(":")
    elif value.isdigit():
        host, port = "127.0.0.1", value
    else:
        raise ValueError(f"FOCUS_DASHBOARD must be HOST:PORT, not {value!r}")
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"FOCUS_DASHBOARD must be HOST:PORT with a port number, not {value!r}")
    return host or "127.0.0.1", int(port)


class Dashboard:
    """``EXTENSIONS``: the live dashboard (module docstring)."""

    def __init__(self, crawler: Crawler, host: str, port: int, token: str = "",
                 linger: float = 0.0) -> None:
        self.crawler = crawler
        self.host, self.port, self.token, self.linger = host, port, token, linger
        self.error: str | None = None
        if not token and not loopback(host):
            self.error = (f"FOCUS_DASHBOARD={host}:{port} is not a loopback address: set "
                          "FOCUS_DASHBOARD_TOKEN to serve it there (every request then needs "
                          "the token), or listen on 127.0.0.1")
        s = crawler.settings
        self.tracker = Tracker(config.get(s, "FOCUS_RELEVANT_SCORE"))
        self.status = StatusBuilder(crawler, self.tracker, cluster=self._cluster)
        self.registry = registry_for(self.status.get)
        self.listening: IListeningPort | None = None
        self._servers: Any = None  # the crawl's ServerKeys, found at open
        self._cluster_relevant = 0  # this worker's relevant pages already added in Redis
        self._cluster_loop: task.LoopingCall | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)
        crawler.signals.connect(self.page_scored, signal=focus_signals.page_scored)
        crawler.signals.connect(self.response_received, signal=signals.response_received)
        crawler.signals.connect(self.request_finished, signal=focus_signals.request_finished)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Dashboard:
        s = crawler.settings
        address = config.get(s, "FOCUS_DASHBOARD").strip()
        if not address:
            raise NotConfigured
        token = config.get(s, "FOCUS_DASHBOARD_TOKEN")
        linger = config.get(s, "FOCUS_DASHBOARD_LINGER")
        try:
            host, port = parse_address(address)
        except ValueError as e:
            ext = cls(crawler, "127.0.0.1", 0, token, linger)
            ext.error = str(e)
            return ext
        return cls(crawler, host, port, token, linger)

    # -- the crawl's life -------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        from twisted.internet import reactor  # the one Scrapy installed (not at import time)

        if self.error is None:
            resource = DashboardResource(self.status.get, lambda: exposition(self.registry),
                                         self.token)
            try:
                # zope interface methods have no self: without the mypy-zope plugin mypy
                # reads IReactorTCP.listenTCP's port as self and the factory as the port
                self.listening = reactor.listenTCP(self.port, QuietSite(resource),  # type: ignore[arg-type]
                                                   interface=self.host)
            except CannotListenError as e:
                self.error = (f"the dashboard cannot listen on {self.host}:{self.port} "
                              f"({e.socketError})")
        if self.error is not None:
            self._refuse(self.error)
            return
        services = self.crawler.get_extension(FocusServices)
        self._servers = services.servers if services is not None else None
        assert self.listening is not None
        port = self.listening.getHost().port  # type: ignore[misc]  # zope: no self (above)
        shown = f"[{self.host}]" if ":" in self.host else self.host
        logger.info("Dashboard: http://%s:%d/", shown, port)
        if self._redis() is not None:
            self._cluster_loop = task.LoopingCall(self._push_relevant)
            self._cluster_loop.start(5.0, now=False)

    def _refuse(self, message: str) -> None:
        """One line, the start-error stat (``scrapy crawl`` exits 1), and the crawl closes."""
        from twisted.internet import reactor

        logger.error("focuscrawl: %s", message)
        self.crawler.stats.set_value(START_ERROR_STAT, message)
        # zope interface methods have no self: mypy reads callLater's delay as self
        reactor.callLater(0, scrapy_engine.close, self.crawler, "dashboard_refused")  # type: ignore[arg-type]

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._cluster_loop is not None and self._cluster_loop.running:
            self._cluster_loop.stop()
            self._push_relevant()
        if self.listening is not None:
            self.status.finish(reason)

    async def engine_stopped(self) -> None:
        """Stop listening, after ``FOCUS_DASHBOARD_LINGER`` seconds of final figures."""
        if self.listening is None:
            return
        listening, self.listening = self.listening, None
        if self.linger > 0:
            from twisted.internet import reactor

            logger.info("Dashboard: serving the final figures for %gs", self.linger)
            await maybe_deferred_to_future(task.deferLater(reactor, self.linger, lambda: None))
        stopped = listening.stopListening()  # type: ignore[misc]  # zope: no self
        if stopped is not None:
            await maybe_deferred_to_future(stopped)

    # -- the figures, O(1) a page -------------------------------------------------------------
    def _server(self, url: str) -> str:
        servers = self._servers
        if servers is not None and servers.resolved(url):
            return servers.key(url)
        return host_of(url)

    def page_scored(self, url: str, score: float, title: str = "",
                    duplicate_of: str | None = None, **kwargs: Any) -> None:
        self.tracker.page(self._server(url), url, score, title, duplicate_of is not None)

    def response_received(self, response: Response, request: Request, **kwargs: Any) -> None:
        self.tracker.download(self._server(request.url), request.url, response.status)

    def request_finished(self, request: Request, status: int | None, **kwargs: Any) -> None:
        if status is None:
            self.tracker.failure(self._server(request.url))

    # -- distributed mode: the cluster's figures beside this worker's -------------------------
    def _redis(self) -> tuple[Any, str] | None:
        """(client, key) of the crawl's dashboard counters when the scheduler is Redis's."""
        engine = getattr(self.crawler, "engine", None)
        frontier = getattr(getattr(engine, "scheduler", None), "frontier", None)
        client, prefix = getattr(frontier, "client", None), getattr(frontier, "prefix", None)
        if client is None or not isinstance(prefix, str):
            return None
        return client, f"{prefix}dashboard"

    def _push_relevant(self) -> None:
        """Add this worker's new relevant pages to the cluster's count (every 5 s)."""
        redis = self._redis()
        delta = self.tracker.relevant - self._cluster_relevant
        if redis is None or not delta:
            return
        try:
            redis[0].hincrby(redis[1], "relevant", delta)
        except Exception as e:  # noqa: BLE001 - Redis away: the next tick adds it
            logger.debug("dashboard: cannot count relevant pages in Redis: %s", e)
            return
        self._cluster_relevant += delta

    def _cluster(self) -> dict[str, Any] | None:
        engine = getattr(self.crawler, "engine", None)
        scheduler = getattr(engine, "scheduler", None)
        redis = self._redis()
        progress_of = getattr(scheduler, "progress", None)
        if redis is None or progress_of is None:
            return None
        progress = progress_of() or {}
        try:
            relevant = int(redis[0].hget(redis[1], "relevant") or 0)
        except Exception:  # noqa: BLE001 - Redis away: what this worker knows
            relevant = self._cluster_relevant
        relevant += self.tracker.relevant - self._cluster_relevant  # not pushed yet
        return {"pages": progress.get("pages", 0), "queued": progress.get("queued", 0),
                "workers": progress.get("workers", 0), "max_pages": progress.get("max_pages", 0),
                "relevant": relevant}
