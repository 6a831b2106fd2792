"""RedisFocusScheduler: FocusScheduler's contract over the Redis frontier shared by all workers.

A thin adapter, like ``focuscrawl.scheduler.FocusScheduler`` (whose request <-> record helpers
it reuses); what it adds is the life of a worker in a cluster:

* **leases**: ``next_request`` leases a URL from the crawl (``RedisFrontier.pop``); the
  politeness middleware reports the end of its download (MAX_PAGES counts it cluster-wide, or
  frees its budget); the lease is *settled* only once Scrapy's engine is done with the request,
  i.e. after the page's outlinks are queued and its item exported.  A worker killed before that
  leaves the lease in Redis, and the survivors put the URL back (``RedisFrontier.reap``);
* **heartbeats**: every ``FOCUS_REDIS_WORKER_TTL / 4`` seconds the worker renews its alive key
  and reaps dead workers;
* **waking up**: another worker may free a server or queue URLs at any time, so every
  ``FOCUS_REDIS_POLL`` seconds the engine is asked to try again;
* **the end**: when this worker is idle it stays open (``DontCloseSpider``) while the crawl has
  URLs to hand out or any worker has a lease; when nothing is queued (or the budget is spent)
  and no lease is left anywhere, every worker closes with reason ``finished``.

Scrapy's engine internals come from ``focuscrawl.engine`` (the requests the engine holds: a
request leaves them once its output is processed; the wake-up trigger).  Without them leases
settle at download end and the engine wakes on its own heartbeat.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from redis import RedisError
from scrapy import signals as scrapy_signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from twisted.internet.task import LoopingCall

from .. import signals as focus_signals
from ..engine import Waker, in_progress, stopping, warn_if_missing
from ..options import politeness_options
from ..scheduler import FocusScheduler
from ..services import missing_message
from ..signals import START_ERROR_STAT
from ..urls import canonical
from .connection import RedisServices, Worker

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: meta keys of the request that produced a copy (redirect, retry) that must not travel with it
_TRANSIENT_META = ("focus_lease", "focus_started", "focus_finished", "focus_token", "focus_from")


class RedisFocusScheduler(FocusScheduler):
    """``SCHEDULER = "focuscrawl.distributed.scheduler.RedisFocusScheduler"``."""

    def __init__(self, crawler: Crawler) -> None:
        # Not FocusScheduler.__init__: it builds the single-process frontier, its HostPolicy and
        # the JOBDIR journal, which the crawl's state in Redis replaces.
        self.crawler = crawler
        self.settings = s = crawler.settings
        self.stats = crawler.stats
        self.server_by = s.get("FOCUS_SERVER_KEY", "host")
        if self.server_by not in ("host", "ip"):
            raise NotConfigured(f"FOCUS_SERVER_KEY must be 'host' or 'ip', not {self.server_by!r}")
        # the shared parts and this process's worker; None: open() refuses to start
        self.services: RedisServices | None = crawler.get_extension(RedisServices)
        self.worker: Worker | None = None
        self.frontier = None
        if self.services is not None:
            self.worker = self.services.redis_worker
            self.frontier = self.worker.frontier  # type: ignore[assignment]
        self.spider: Spider | None = None
        self.max_pages = 0
        self.pages = 0  # pages this worker fetched
        self.ttl = s.getfloat("FOCUS_REDIS_WORKER_TTL", 10.0)
        self.poll = s.getfloat("FOCUS_REDIS_POLL", 0.1)
        self.error: str | None = None  # this worker cannot join the crawl (its settings differ)
        self._error_reason = ""  # the spider's close reason then
        self._requests: dict[int, Request] = {}  # lease -> request, until settled
        self._downloaded: set[int] = set()  # leases whose download ended
        self._loop: LoopingCall | None = None
        self._next_beat = 0.0
        self._scored = 0
        self.waker = Waker(crawler)  # wakes the engine when a server is due
        crawler.signals.connect(self._page_scored, signal=focus_signals.page_scored)
        crawler.signals.connect(self._request_finished, signal=focus_signals.request_finished)
        crawler.signals.connect(self._spider_idle, signal=scrapy_signals.spider_idle)

    # -- Scrapy's scheduler contract --------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        warn_if_missing(self.crawler)
        s = self.settings
        options = self._options(spider)
        options.update(
            politeness_options(s),
            bloom_capacity=s.getint("FOCUS_REDIS_BLOOM_CAPACITY", 0),
            bloom_error=s.getfloat("FOCUS_REDIS_BLOOM_ERROR", 0.001),
            start_log=s.getint("FOCUS_REDIS_START_LOG", 0),
        )
        if s.getbool("FOCUS_STRICT_ORDER"):
            logger.warning("FOCUS_STRICT_ORDER is ignored in distributed mode")
        differ: dict[str, Any] = {}
        if self.frontier is None:
            self.error = missing_message(type(self).__name__, RedisServices)
            self._error_reason = "missing_component"
        else:
            try:
                differ = self.frontier.configure(options)
            except ValueError as e:
                self.error = str(e)
                self._error_reason = "redis_settings_differ"
            except RedisError as e:
                self.error = f"cannot use Redis at REDIS_URL ({e})"
                self._error_reason = "redis_unavailable"
        if self.error is not None:
            logger.error("focuscrawl distributed: %s", self.error)
            self.stats.set_value("focus/cluster/error", self.error)
            self.stats.set_value(START_ERROR_STAT, self.error)
            return
        for name, value in differ.items():
            logger.warning("this worker's %s differs; the crawl's value %s applies", name, value)
        self.max_pages = self.frontier.max_pages
        self.frontier.heartbeat(self.ttl)
        self.frontier.reap()
        self._next_beat = time.monotonic() + self.ttl / 4
        self._loop = LoopingCall(self._tick)
        self._loop.start(self.poll, now=False)
        st = self.frontier.status()
        logger.info(
            "Focus frontier in Redis (%s): %s, MAX_PAGES=%d, worker %s; %d queued, %d fetched, "
            "%d other worker(s)", self.worker.prefix, self.frontier.config["strategy"],
            self.max_pages, self.worker.worker_id, st["entries"], st["fetched"],
            max(0, st["workers"] - 1),
        )

    def progress(self) -> dict[str, int] | None:
        """The cluster's figures for the focus log line (one Redis round trip)."""
        if self.error is not None:
            return None
        st = self.frontier.status()
        return {"pages": st["fetched"], "max_pages": self.max_pages, "queued": st["entries"],
                "hot": st["pages_hot"], "workers": st["workers"]}

    def close(self, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self.waker.cancel()
        if self.error is not None:
            return
        settled = [lease for lease in self._requests if lease in self._downloaded]
        unfetched = [lease for lease in self._requests if lease not in self._downloaded]
        self.frontier.settle(settled)
        if unfetched:
            logger.info("putting %d URL(s) this worker never fetched back in the frontier",
                        self.frontier.release(unfetched))
        self._requests.clear()
        self._downloaded.clear()
        self._update_stats()
        self.frontier.leave()

    def has_pending_requests(self) -> bool:
        return self.error is None and self.frontier.status().has_work

    def __len__(self) -> int:
        return 0 if self.error is not None else len(self.frontier)

    def enqueue_request(self, request: Request) -> bool:
        if self.error is not None:
            return False
        meta = request.meta
        for key in _TRANSIENT_META:
            meta.pop(key, None)
        try:
            url = canonical(request.url)
        except ValueError:
            self.stats.inc_value("focus/rejected/bad_url")
            return False
        link = self._link(request, url)
        queued = self.frontier.add(link)
        if not queued:
            self.stats.inc_value("focus/duplicates_or_dropped")
        return queued

    def next_request(self) -> Request | None:
        if self.error is not None or self.spider is None:
            return None
        can_wake = self.waker.can_wake()
        got = self.frontier.pop(late=can_wake)
        if got is None:
            if self.frontier.wait is not None and can_wake:
                now = time.monotonic()
                self.waker.at(now + self.frontier.wait, now)
            return None
        lease, entry = got
        request = self._request(entry)
        request.meta["focus_lease"] = lease
        request.meta["focus_server"] = entry.host
        self._requests[lease] = request
        self.stats.inc_value("focus/requests_handed_out")
        return request

    # -- signals ----------------------------------------------------------------------------
    def _page_scored(self, url: str, score: float, hot: bool, **kwargs: Any) -> None:
        if self.error is None:
            self.frontier.crawled(url, score, hot)
            self._scored += 1
            if self._scored % 20 == 0:
                self._update_stats()

    def _request_finished(self, request: Request, status: int | None, **kwargs: Any) -> None:
        """The download of a leased request ended: count the page, or free its budget."""
        lease = request.meta.get("focus_lease")
        if lease is None or lease not in self._requests or lease in self._downloaded:
            return
        if status is None and stopping(self.crawler):
            return  # cancelled by a stop, not failed: close() puts the URL back
        counted = status is not None and not 300 <= status < 400
        number = self.frontier.downloaded(lease, counted)
        self._downloaded.add(lease)
        if number > 0:
            self.pages += 1
            request.meta["focus_order"] = number
            self.stats.set_value("focus/pages_fetched", self.pages)
        elif number < 0:
            # reaped meanwhile (this worker missed its heartbeats): another worker has the URL
            self.stats.inc_value("focus/cluster/lease_lost")
        if in_progress(self.crawler) is None:
            self._settle_leases([lease])

    def _spider_idle(self) -> None:
        if self.error is not None:
            raise CloseSpider(self._error_reason)
        self._sweep(idle=True)
        self.frontier.reap()
        st = self.frontier.status()
        if not st.done:
            raise DontCloseSpider
        logger.info("The crawl is over for every worker: %d page(s) fetched, %d by this one",
                    st["fetched"], self.pages)

    # -- the worker's loop ----------------------------------------------------------------------
    def _tick(self) -> None:
        try:
            if time.monotonic() >= self._next_beat:
                self._beat()
            self._sweep(idle=False)
        except RedisError as e:
            logger.warning("Redis: %s", e)
        self.waker.now()

    def _beat(self) -> None:
        self._next_beat = time.monotonic() + self.ttl / 4
        if not self.frontier.heartbeat(self.ttl):
            self.stats.inc_value("focus/cluster/declared_dead")
            logger.warning("this worker missed its heartbeats and was declared dead: its leases "
                           "went back to the frontier")
        dead = self.frontier.reap()
        if dead:
            self.stats.inc_value("focus/cluster/workers_reaped", dead)
            logger.warning("%d worker(s) stopped sending heartbeats; their URLs are queued again",
                           dead)
        self._update_stats()

    def _sweep(self, *, idle: bool) -> None:
        """Settle the leases the engine is done with (outlinks queued, item exported)."""
        inprogress = in_progress(self.crawler) or ()
        done = [lease for lease in self._downloaded if self._requests[lease] not in inprogress]
        if idle:  # nothing left in the engine: a lease never downloaded was dropped on the way
            dropped = [lease for lease, r in self._requests.items()
                       if lease not in self._downloaded and r not in inprogress]
            if dropped:
                self.stats.inc_value("focus/cluster/dropped_leases", len(dropped))
                done += dropped
        if done:
            self._settle_leases(done)

    def _settle_leases(self, leases: list[int]) -> None:
        self.frontier.settle(leases)
        for lease in leases:
            self._requests.pop(lease, None)
            self._downloaded.discard(lease)

    def _update_stats(self) -> None:
        if self.error is not None:
            return
        try:
            described = self.frontier.describe()
        except RedisError:
            return
        for name, value in described.items():
            self.stats.set_value(f"focus/cluster/{name}", value)
        self.stats.set_value("focus/pages_fetched", self.pages)
