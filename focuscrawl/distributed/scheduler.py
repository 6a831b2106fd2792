"""RedisFocusScheduler: FocusScheduler's contract over the Redis frontier shared by all workers.

A thin adapter, like ``focuscrawl.seam.scheduler.FocusScheduler``, built from the same parts (no
inheritance): requests <-> frontier records (``focuscrawl.seam.records``), the engine's wake-ups
(``focuscrawl.seam.engine.Waker``), the crawl-order options (``focuscrawl.seam.options``); what it
adds is
the life of a worker in a cluster:

* **leases**: ``next_request`` leases a URL from the crawl (``RedisFrontier.pop``); the
  politeness middleware reports the end of its download (MAX_PAGES counts it cluster-wide, or
  frees its budget); the lease is *settled* only once Scrapy's engine is done with the request,
  i.e. after the page's outlinks are queued and its item exported (the settle rides with the
  next call that writes outlinks, or the tick's).  A worker killed before that leaves the
  lease in Redis, and the survivors put the URL back (``RedisFrontier.reap``);
* **a page at a time**: a page's score and outlinks are kept (``outlinks.Outlinks``) and
  written in one script call when its output is done (``pagemw.PageOutputMiddleware``), and
  always before a lease is settled, a URL handed out, pending work reported or the worker
  closed (``FOCUS_REDIS_BATCH``);
* **links Redis would ignore** are dropped by the spider unbuilt, as in the single process: the
  worker registers what it knows (``known.KnownLinks``: URLs it was handed or sent a link to)
  in ``FocusServices.known_urls``;
* **heartbeats**: every ``FOCUS_REDIS_WORKER_TTL / 4`` seconds the worker renews its alive key
  and reaps dead workers;
* **waking up**: another worker may free a server or queue URLs at any time, so every
  ``FOCUS_REDIS_POLL`` seconds the engine is asked to try again (unless it asked Redis for a
  URL less than that ago: a busy worker's own downloads wake it often enough);
* **the end**: when this worker is idle it stays open (``DontCloseSpider``) while the crawl has
  URLs to hand out or any worker has a lease; when nothing is queued (or the budget is spent)
  and no lease is left anywhere, every worker closes with reason ``finished``;
* **Redis going away**: every call goes through the worker's ``RedisLink``
  (``connection.py``).  While Redis is unreachable the worker hands out nothing, keeps the
  changes it must write (outlinks, scores, ends of downloads, settled leases) for when Redis is
  back, and stays open; it reaps nobody for one TTL after Redis returns (the other workers
  renew their heartbeats first).  If Redis comes back without the crawl's keys (no
  persistence) the worker stops with reason ``redis_crawl_lost``; down longer than
  ``FOCUS_REDIS_OUTAGE_TIMEOUT``, with ``redis_unavailable``.

Scrapy's engine internals come from ``focuscrawl.seam.engine`` (the requests the engine holds: a
request leaves them once its output is processed; the wake-up trigger).  Without them leases
settle at download end and the engine wakes on its own heartbeat.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from redis import RedisError
from scrapy import signals as scrapy_signals
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.utils.request import request_from_dict
from twisted.internet.task import LoopingCall

from focuscrawl import config
from focuscrawl.core.refresh import Split
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.engine import Waker, close, in_progress, stopping, warn_if_missing
from focuscrawl.seam.meta import FROM, LEASE, LEASE_LOST, ORDER, SERVER, TRANSIENT
from focuscrawl.seam.options import frontier_options, politeness_options
from focuscrawl.seam.outcome import watch
from focuscrawl.seam.records import Records, is_page, server_by
from focuscrawl.seam.revisit import Revisits
from focuscrawl.seam.services import missing_message
from focuscrawl.seam.signals import START_ERROR_STAT
from focuscrawl.seam.sitemaps import SitemapHints

from .connection import RedisLink, RedisServices, Unavailable, Worker
from .outlinks import Outlinks
from .revisits import RevisitStore, SharedRevisits

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from .hosts import SlotEnd
    from .known import KnownLinks
    from .protocol import SharedFrontier

logger = logging.getLogger(__name__)

#: finish reasons of a worker stopped by Redis: the crawl's keys vanished; Redis stayed away
CRAWL_LOST = "redis_crawl_lost"
REDIS_UNAVAILABLE = "redis_unavailable"
#: the stat set to one of them (``scrapy crawl`` exits 1)
STOPPED_STAT = "focus/cluster/stopped"


class RedisFocusScheduler:
    """``SCHEDULER = "focuscrawl.distributed.scheduler.RedisFocusScheduler"``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.settings = s = crawler.settings
        self.stats = crawler.stats
        self.server_by = server_by(s)
        # the shared parts and this process's worker; None: open() refuses to start
        self.services: RedisServices | None = crawler.get_extension(RedisServices)
        self.worker: Worker | None = (self.services.redis_worker if self.services is not None
                                      else None)
        self.records: Records | None = None  # requests <-> frontier records, made at open
        self.stopped: str | None = None  # stopped by Redis: CRAWL_LOST or REDIS_UNAVAILABLE
        self.spider: Spider | None = None
        self.max_pages = 0
        self.pages = 0  # pages this worker fetched
        self.ttl = config.get(s, "FOCUS_REDIS_WORKER_TTL")
        self.poll = config.get(s, "FOCUS_REDIS_POLL")
        self.error: str | None = None  # this worker cannot join the crawl (its settings differ)
        self._error_reason = ""  # the spider's close reason then
        self._requests: dict[int, Request] = {}  # lease -> request, until settled
        self._downloaded: set[int] = set()  # leases whose download ended
        self._settling: set[int] = set()  # leases whose settle is kept in outlinks
        self._loop: LoopingCall | None = None
        self._next_beat = 0.0
        self._asked = 0.0  # monotonic time of the last POP (the tick wakes the engine a poll on)
        self._reconciled: float | None = None  # Redis's return whose orphan leases were freed
        self._scored = 0
        self.waker = Waker(crawler)  # wakes the engine when a server is due
        self.revisits: Revisits | None = None  # a continuous crawl's (FOCUS_REVISIT), at open
        self.sitemaps: SitemapHints | None = None  # its sitemaps' lastmod hints
        crawler.signals.connect(self._page_scored, signal=focus_signals.page_scored)
        crawler.signals.connect(self._request_finished, signal=focus_signals.request_finished)
        crawler.signals.connect(self._spider_idle, signal=scrapy_signals.spider_idle)
        watch(crawler)  # scrapy crawl exits 1 when Redis stops the crawl, in any project

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisFocusScheduler:
        return cls(crawler)

    # -- the worker's parts (open() refuses to start without them: no call reaches these) ----
    def _worker(self) -> Worker:
        assert self.worker is not None, "a worker without RedisServices never starts"
        return self.worker

    @property
    def frontier(self) -> SharedFrontier:
        return self._worker().frontier

    @property
    def link(self) -> RedisLink:
        return self._worker().link

    @property
    def outlinks(self) -> Outlinks:
        return self._worker().outlinks

    @property
    def known(self) -> KnownLinks:
        return self._worker().known

    # -- Scrapy's scheduler contract --------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        warn_if_missing(self.crawler)
        s = self.settings
        options = frontier_options(s, spider)
        revisit = options.pop("revisit")
        options.update(
            politeness_options(s),
            bloom_capacity=config.get(s, "FOCUS_REDIS_BLOOM_CAPACITY"),
            bloom_error=config.get(s, "FOCUS_REDIS_BLOOM_ERROR"),
            start_log=config.get(s, "FOCUS_REDIS_START_LOG"),
            hold=s.getfloat("DOWNLOAD_TIMEOUT", 180.0),
        )
        if config.get(s, "FOCUS_STRICT_ORDER"):
            logger.warning("FOCUS_STRICT_ORDER is ignored in distributed mode")
        differ: dict[str, Any] = {}
        if self.worker is None:
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
        assert self.services is not None
        # no Redis order reads a link's nearby text
        self.records = Records(self.stats, self.services.servers, spider, learns=False)
        self.max_pages = self.frontier.max_pages
        # the spider drops the outlinks Redis would ignore (those this worker knows of)
        self.services.known_urls.register(self.known.configure(self.frontier.config))
        if revisit:  # a continuous crawl: the revisit schedule in Redis beside the frontier
            self._keep_going()
        try:
            self.frontier.heartbeat(self.ttl)
            self.frontier.reap()
            st = self.frontier.status()
        except RedisError as e:  # gone between two calls: as if it had been gone at the first
            st = None
            logger.warning("Redis: %s", e)
        self._next_beat = time.monotonic() + self.ttl / 4
        self._loop = LoopingCall(self._tick)
        self._loop.start(self.poll, now=False)
        if st is None:
            return
        worker = self._worker()
        logger.info(
            "Focus frontier in Redis (%s): %s, MAX_PAGES=%d, worker %s; %d queued, %d fetched, "
            "%d other worker(s)", worker.prefix, self.frontier.config["strategy"],
            self.max_pages, worker.worker_id, st["entries"], st["fetched"],
            max(0, st["workers"] - 1),
        )

    def progress(self) -> dict[str, int] | None:
        """The cluster's figures for the focus log line (one Redis round trip)."""
        if self.error is not None:
            return None
        try:
            st = self.link.call(self.frontier.status)
        except Unavailable:
            return None
        return {"pages": st["fetched"], "max_pages": self.max_pages, "queued": st["entries"],
                "hot": st["pages_hot"], "workers": st["workers"]}

    def close(self, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self.sitemaps is not None:
            self.sitemaps.stop()
        self.waker.cancel()
        if self.services is not None:
            self.services.known_urls.register(None)
        if self.error is not None or self.link.lost is not None:
            self._flush_records()
            return
        settled = [lease for lease in self._requests if lease in self._downloaded]
        unfetched = [lease for lease in self._requests if lease not in self._downloaded]
        held = len(self._requests)
        self._requests.clear()
        self._downloaded.clear()
        self.outlinks.clear()
        if not self.outlinks.flush():  # never settle a page whose outlinks are not written:
            settled = []  # LEAVE below puts it back, and its outlinks are found again
        try:
            self.link.call(self.frontier.settle, settled)
            if unfetched:
                logger.info("putting %d URL(s) this worker never fetched back in the frontier",
                            self.link.call(self.frontier.release, unfetched))
            self._update_stats()
            self.link.call(self.frontier.leave)
        except Unavailable:
            logger.warning("Redis unreachable at close: this worker's %d URL(s) and %d change(s) "
                           "not written stay leased to it in Redis; the other workers queue its "
                           "URLs again once its heartbeat expires", held, self.link.pending)
        self._flush_records()

    def _flush_records(self) -> None:
        """The outlinks not taken, counted by ``records.queued``, into the stats."""
        if self.records is not None:
            self.records.flush_stats()

    def has_pending_requests(self) -> bool:
        if self.error is not None or self.stopped is not None:
            return False
        if self.revisits is not None:
            return True  # a continuous crawl goes on until it is stopped
        if not self.outlinks.flush():
            return True  # links to write: the tick tries again
        try:
            return self.link.call(self.frontier.status).has_work
        except Unavailable:
            return False

    def __len__(self) -> int:
        if self.error is not None:
            return 0
        self.outlinks.flush()
        try:
            return self.link.call(len, self.frontier)
        except Unavailable:
            return 0

    def enqueue_request(self, request: Request) -> bool:
        if self.error is not None:
            return False
        meta = request.meta
        source = meta.get(FROM)  # the lease of the page that yielded it (PageOutputMiddleware)
        for key in TRANSIENT:
            meta.pop(key, None)
        records, known = self.records, self.known
        assert records is not None and known is not None
        try:
            url = records.url(request)
            if url is None:
                return False
            # kept, and written with the rest of its page; counted (records.queued) then
            link = records.link(request, url)
            self.outlinks.add(link, then=records.queued)
            known.linked(url, link.parent_score)
            return self.link.lost is None
        finally:
            self.outlinks.arrived(source)  # the page's last one: its outlinks are written

    def next_request(self) -> Request | None:
        if self.error is not None or self.spider is None or self.stopped is not None:
            return None
        if self.outlinks.links and not self.outlinks.flush():
            return None  # the links found so far first: the tick tries again
        can_wake = self.waker.can_wake()
        revisit = self._revisit(prefer=False)  # a due revisit worth more than a new page
        if revisit is not None:
            return revisit
        try:
            seeding = self.services is not None and self.services.seeds_pending
            got = self.link.call(lambda: self.frontier.pop(late=can_wake, seeding=seeding))
        except Unavailable:
            return None
        self._asked = time.monotonic()
        if got is None:
            revisit = self._revisit(prefer=True)  # no new page now: any due revisit
            if revisit is not None:
                return revisit
            if self.frontier.wait is not None and can_wake:
                now = time.monotonic()
                self.waker.at(now + self.frontier.wait, now)
            return None
        lease, entry = got
        assert self.records is not None and self.known is not None
        self.known.handed_out(entry.url)
        request = self.records.request(entry, lease)
        self._requests[lease] = request
        return request

    # -- a continuous crawl -------------------------------------------------------------------
    def _keep_going(self) -> None:
        """The revisits of a continuous crawl, in Redis (``focuscrawl.distributed.revisits``)."""
        assert self.services is not None
        worker = self._worker()
        router = getattr(self.frontier, "router", None)
        revisits = Revisits(settings=self.settings, policy=self.services.policy,
                            servers=self.services.servers)
        revisits.frontier = SharedRevisits(
            RevisitStore(worker.client, worker.prefix, router.count if router else 1),
            revisits.new_schedule(), Split(revisits.share), clock=revisits.clock,
            capacity=revisits.capacity)
        self.revisits = self.services.revisits = revisits
        self.sitemaps = SitemapHints(self.crawler, revisits)
        self.sitemaps.start()

    def _revisit(self, *, prefer: bool) -> Request | None:
        """The request of a due revisit (``prefer``: even if a new page is worth more)."""
        revisits = self.revisits
        if revisits is None:
            return None
        try:
            page = self.link.call(lambda: revisits.frontier.take(prefer=prefer))
        except Unavailable:
            return None
        if page is None:
            return None
        request = request_from_dict(revisits.request_of(page), spider=self.spider)
        request.meta[SERVER] = page.host
        self.stats.inc_value("focus/revisit/handed_out")
        return request

    # -- signals ----------------------------------------------------------------------------
    def _page_scored(self, url: str, score: float, hot: bool, **kwargs: Any) -> None:
        if self.error is None:
            self.outlinks.scored(url, score, hot)  # written with the page's outlinks
            self._scored += 1
            if self._scored % 20 == 0:
                self._update_stats()

    def _request_finished(self, request: Request, status: int | None, html: bool = True,
                          slot: SlotEnd | None = None, **kwargs: Any) -> None:
        """The download of a leased request ended: count the page, or free its budget; and
        free its server ``slot`` in the same call (taken: the middleware sends nothing)."""
        lease = request.meta.get(LEASE)
        if lease is None or lease not in self._requests or lease in self._downloaded:
            return
        if status is None and stopping(self.crawler):
            return  # cancelled by a stop, not failed: close() puts the URL back
        counted = is_page(status, html)

        def done(number: int) -> None:
            if number > 0:
                self.pages += 1
                self.stats.set_value("focus/pages_fetched", self.pages)
            elif number < 0:
                # reaped meanwhile (this worker was frozen past its heartbeat TTL): another
                # worker has the URL; the response is dropped (RedisPolitenessMiddleware)
                self.stats.inc_value("focus/cluster/lease_lost")
                request.meta[LEASE_LOST] = True

        # kept while Redis is down: the page is counted when it is back (and has no order)
        number = self.link.write(self.frontier.downloaded, lease, counted, slot, then=done)
        if slot is not None:
            slot.taken = True
        if number is not None and number > 0:
            request.meta[ORDER] = number
        self._downloaded.add(lease)
        if in_progress(self.crawler) is None:
            self._settle_leases([lease])

    def _spider_idle(self) -> None:
        if self.error is not None:
            raise CloseSpider(self._error_reason)
        if self.stopped is not None:
            raise CloseSpider(self.stopped)
        if self.revisits is not None:
            raise DontCloseSpider  # a continuous crawl goes on until it is stopped
        self._sweep(idle=True)
        flushed = self.outlinks.flush()
        try:
            self._reap()
            st = self.link.call(self.frontier.status)
        except Unavailable:
            if self._check_link():
                assert self.stopped is not None
                raise CloseSpider(self.stopped) from None
            raise DontCloseSpider from None
        if not st.done or self.link.pending or not flushed:
            raise DontCloseSpider
        logger.info("The crawl is over for every worker: %d page(s) fetched, %d by this one",
                    st["fetched"], self.pages)

    # -- the worker's loop ----------------------------------------------------------------------
    def _tick(self) -> None:
        try:
            self.outlinks.flush()  # a page whose requests did not all reach the scheduler
            if self.revisits is not None:
                self.link.call(self.revisits.frontier.tick)
            if time.monotonic() >= self._next_beat:
                self._beat()
            self._sweep(idle=False)
        except Unavailable:
            pass  # RedisLink said it once; the next tick tries again
        except RedisError as e:
            logger.warning("Redis: %s", e)
        if self._check_link():
            return
        if time.monotonic() - self._asked >= self.poll:
            self.waker.now()  # else the engine asked Redis for a URL less than a poll ago

    def _check_link(self) -> bool:
        """Stop this worker if its crawl is lost or Redis stayed away too long; True if so."""
        if self.stopped is not None:
            return True
        if self.link.lost is not None:
            self._stop(CRAWL_LOST)
        elif self.link.gave_up:
            logger.error("focuscrawl distributed: Redis at %s unreachable for %.0f s "
                         "(FOCUS_REDIS_OUTAGE_TIMEOUT): this worker stops (%s); its URLs stay "
                         "leased in Redis and go back to the frontier when it is back",
                         self.link.url, self.link.give_up, REDIS_UNAVAILABLE)
            self._stop(REDIS_UNAVAILABLE)
        return self.stopped is not None

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        self.stats.set_value(STOPPED_STAT, reason)
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        close(self.crawler, reason)

    def _reap(self) -> int:
        """Requeue dead workers' leases, except for one TTL after Redis came back: a restart
        longer than the TTL let every heartbeat key expire, and the live workers renew theirs
        at their next beat."""
        back = self.link.recovered_at
        if back is not None and time.monotonic() < back + self.ttl:
            return 0
        return self.link.call(self.frontier.reap)

    def _reconcile(self) -> None:
        """Once after Redis came back: a lease handed to this worker by a POP whose reply the
        broken connection lost goes back to the frontier (``RedisFrontier.orphans``)."""
        back = self.link.recovered_at
        if back is None or back == self._reconciled:
            return
        orphans = self.link.call(self.frontier.orphans, list(self._requests))
        self._reconciled = back
        if orphans:
            self.stats.inc_value("focus/cluster/orphan_leases", orphans)
            logger.info("%d URL(s) leased to this worker by a call whose answer was lost when "
                        "Redis went away are queued again", orphans)

    def _beat(self) -> None:
        self._next_beat = time.monotonic() + self.ttl / 4
        if not self.link.call(self.frontier.heartbeat, self.ttl):
            assert self.known is not None
            self.known.clear()  # its leases went back to the frontier: what it knew is stale
            self.stats.inc_value("focus/cluster/declared_dead")
            logger.warning("this worker's heartbeat key had expired (frozen, or Redis away, past "
                           "FOCUS_REDIS_WORKER_TTL): URLs reaped meanwhile went to other workers")
        self._reconcile()
        dead = self._reap()
        if dead:
            self.stats.inc_value("focus/cluster/workers_reaped", dead)
            logger.warning("%d worker(s) stopped sending heartbeats; their URLs are queued again",
                           dead)
        self._update_stats()

    def _sweep(self, *, idle: bool) -> None:
        """Settle the leases the engine is done with (outlinks queued, item exported)."""
        inprogress = in_progress(self.crawler) or ()
        settling = self._settling
        done = [lease for lease in self._downloaded
                if lease not in settling and self._requests[lease] not in inprogress]
        if idle:  # nothing left in the engine: a lease never downloaded was dropped on the way
            dropped = [lease for lease, r in self._requests.items()
                       if lease not in self._downloaded and lease not in settling
                       and r not in inprogress]
            if dropped:
                self.stats.inc_value("focus/cluster/dropped_leases", len(dropped))
                done += dropped
        if done:
            self._settle_leases(done)

    def _settle_leases(self, leases: list[int]) -> None:
        """Settle after the pages' outlinks are written (or kept, in order, by RedisLink): a
        lease settled first would lose them if this worker died in between.  Settles are
        kept after the outlinks and ride with their call; with no outlinks kept, with the next
        one (a page's outlinks, a hand-out, the tick: one round trip fewer a page)."""
        for lease in leases:
            if lease not in self._settling:
                self._settling.add(lease)
                self.outlinks.settle(lease, partial(self._after_settle, lease))
        if self.outlinks.links:
            self.outlinks.flush()  # a Redis error keeps them all: the next flush settles them

    def _after_settle(self, lease: int, _answer: bool) -> None:
        self._settled(lease)

    def _settled(self, lease: int) -> None:
        """The lease's settle reached Redis (or RedisLink keeps it, in order)."""
        self._settling.discard(lease)
        self._requests.pop(lease, None)
        self._downloaded.discard(lease)
        self.outlinks.forget(lease)

    def _update_stats(self) -> None:
        self._flush_records()
        if self.error is not None:
            return
        try:
            described = self.link.call(self.frontier.describe)
        except (Unavailable, RedisError):
            return
        for name, value in described.items():
            self.stats.set_value(f"focus/cluster/{name}", value)
        self.stats.set_value("focus/pages_fetched", self.pages)
        self.stats.set_value("focus/cluster/add_calls", self.outlinks.calls)
        self.stats.set_value("focus/cluster/add_ops", self.outlinks.written)
