"""FocusScheduler: Scrapy's scheduler contract over a focuscrawl frontier.

A thin adapter.  The frontier (``focuscrawl.core.frontier``) decides the crawl order; this class

* turns requests into compact frontier records and back (``focuscrawl.seam.records``, shared with
  the distributed scheduler),
* owns the seen-set, so a rediscovered URL is a link to learn from (a better score, a shorter
  distance from a hot page), not a duplicate to drop,
* hands out only requests whose server can take one now (``HostPolicy``), best order first,
* reports each request's life to the crawl's ``focuscrawl.seam.lifecycle.Lifecycle``, which
  counts pages and keeps the MAX_PAGES budget, exactly: a request counts against it from the
  moment it is handed out until its download ends, and after if it gave a page (a 2xx HTML
  response, ``records.is_page``),
* reports every frontier operation to its crawl state (``focuscrawl.seam.persistence``): with
  JOBDIR a journal in SQLite, so that the same command resumes after a clean stop *or* a
  kill -9; without, nothing.  The journal observes the lifecycle's transitions and the
  frontier's own changes itself.

Its parts: the frontier (any ``LocalFrontier``, built by ``focuscrawl.core.orders``), the slack
(``focuscrawl.seam.slack``), the errback of the requests it hands out
(``focuscrawl.seam.standalone.FetchFailures``).  Set alone as ``SCHEDULER`` in another project
(no add-on, none of focuscrawl's middlewares), it still crawls in its order with per-server
politeness: without a downloader middleware that sends ``request_finished``
(``PolitenessMiddleware``), ``focuscrawl.seam.standalone.SignalPoliteness`` takes its place
from Scrapy's public signals, and the scheduler hands out only requests whose server is due.
robots.txt is then Scrapy's own ``ROBOTSTXT_OBEY``.  What cannot start ends the crawl with one
line and a close reason naming the cause (``focuscrawl.seam.outcome``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured
from scrapy.utils.conf import build_component_list
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object

from focuscrawl import config
from focuscrawl.core.frontier import HostPolicy, LocalFrontier
from focuscrawl.core.frontier.stores import StoreError
from focuscrawl.core.orders import make_frontier
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.engine import (
    Waker,
    downloading,
    pages_in_spider,
    refuse_at_open,
    warn_if_missing,
)
from focuscrawl.seam.lifecycle import Lifecycle
from focuscrawl.seam.meta import FROM, LEASE, LINK, ORDER, ROBOTS_WAIT, TRANSIENT
from focuscrawl.seam.options import frontier_options, strategy_without_keywords
from focuscrawl.seam.outcome import (
    BAD_JOBDIR,
    BAD_SETTINGS,
    MISSING_COMPONENT,
    refuse_start,
    watch,
)
from focuscrawl.seam.persistence.ops import Op
from focuscrawl.seam.persistence.state import CrawlState, NullState, crawl_state
from focuscrawl.seam.records import Records, is_page
from focuscrawl.seam.revisit import Revisits
from focuscrawl.seam.services import FocusServices, missing_message
from focuscrawl.seam.sitemaps import SitemapHints
from focuscrawl.seam.slack import crawl_slack, fixed_slack
from focuscrawl.seam.standalone import FetchFailures, SignalPoliteness
from focuscrawl.seam.watch.frontierstats import record_frontier_stats

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class FocusScheduler:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self.stats = crawler.stats
        # the shared parts (politeness state, page completion), found at open: a scheduler
        # built by hand comes from a crawler that has no extension manager yet
        self.services: FocusServices | None = None
        #: no PolitenessMiddleware: this scheduler keeps politeness from Scrapy's signals
        self.standalone = False
        self.signal_politeness: SignalPoliteness | None = None  # standalone, made at open
        self.failures: FetchFailures | None = None  # handed-out requests' errback, at open
        self._refusal: CloseSpider | None = None  # the crawl cannot start: ends at spider_opened
        self.jobdir_path = job_dir(self.settings)
        #: what is kept of the crawl: a journal with JOBDIR (made at open), else nothing
        self.state: CrawlState = NullState()
        self.frontier: LocalFrontier | None = None
        self.records: Records | None = None  # requests <-> frontier records, made at open
        self.revisits: Revisits | None = None  # a continuous crawl's (FOCUS_REVISIT), at open
        self.sitemaps: SitemapHints | None = None  # its sitemaps' lastmod hints
        self.spider: Spider | None = None
        self.strict = config.get(self.settings, "FOCUS_STRICT_ORDER")
        self.explain = config.get(self.settings, "FOCUS_EXPLAIN")
        # None: the crawl order's own default (LocalFrontier.default_slack), known at open
        self.slack: float | None = None
        self.waker = Waker(crawler)  # wakes the engine when a waiting server is due
        self.error: str | None = None  # the crawl could not start (see open)
        self.order_options: dict[str, Any] = {}  # what fixes the crawl order (kept in JOBDIR)
        # an order still deciding whether the seeds are examples (-a examples=auto): asked
        # after each page until it has said, then never again
        self._judging = False
        crawler.signals.connect(self._page_scored, signal=focus_signals.page_scored)
        crawler.signals.connect(self._request_finished, signal=focus_signals.request_finished)
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        watch(crawler)  # scrapy crawl exits 1 if the crawl cannot start or stops short

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusScheduler:
        return cls(crawler)

    @property
    def policy(self) -> HostPolicy:
        assert self.services is not None, "a FocusScheduler that did not start has no policy"
        return self.services.policy

    @property
    def lifecycle(self) -> Lifecycle:
        """The handed-out requests' lives: leases, pages fetched, the MAX_PAGES budget."""
        assert self.services is not None, "a FocusScheduler that did not start has no pages"
        return self.services.lifecycle

    # -- Scrapy's scheduler contract --------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        warn_if_missing(self.crawler)
        reason = BAD_SETTINGS
        try:
            options = self._options(spider)
            max_pages = options.pop("max_pages")
            strategy = options.pop("strategy")
            revisit = options.pop("revisit")
            fixed_slack(self.settings)  # a bad FOCUS_SLACK stops the crawl before anything
            self.services = FocusServices.of(self.crawler, self)
            reason = MISSING_COMPONENT
            self._check_components()
            reason = BAD_SETTINGS
            if strategy == "learned" and not options.get("keywords"):
                strategy = strategy_without_keywords(self.settings, spider)
            self.order_options = {"strategy": strategy, **options}
            self.frontier = make_frontier(strategy, **options)
            assert self.services is not None  # _check_components
            if revisit:  # a continuous crawl: revisits are a second kind of frontier entry
                self.order_options["revisit"] = True
                self._keep_going()
            self.records = Records(self.stats, self.services.servers, spider,
                                   learns=self.frontier.capabilities.learns)
            self.slack = crawl_slack(self.settings, self.frontier, self.policy, self.lifecycle)
            # a URL whose robots.txt is unreachable waits here (next_request keeps its server
            # back), not refused and lost
            self.services.policy.holding = True
            self.lifecycle.max_pages = max_pages
            reason = BAD_JOBDIR  # only a journaled state can fail to load
            self.state = crawl_state(self.crawler, self.jobdir_path, self.lifecycle)
            self.state.load(self.frontier, self.order_options)
            self._judging = getattr(self.frontier.valuation, "examples", False) is None
            # the spider drops the outlinks the order would ignore (a URL handed out) or only
            # count as an in-link (a URL queued, in the learned order)
            self.services.known_urls.register(
                None if not self.frontier.may_ignore()
                else self._drops if self.frontier.counts_inlinks else self.frontier.ignores)
        except (NotConfigured, StoreError, ValueError) as e:
            # a setting the crawl order refuses raises ValueError: the same
            # one line, a close reason naming the cause and a non-zero exit, not a traceback:
            # the crawl ends once the spider has opened, every request it is given is dropped
            self.error = str(e)
            self.frontier = None
            self.state.close()  # a JOBDIR of another crawl: left as it was
            self.state = NullState()
            self._refusal = refuse_start(self.crawler, logger, reason, self.error)
            return
        if self.standalone:
            self.signal_politeness = SignalPoliteness(self.crawler, self.lifecycle, self.policy)
        self.failures = FetchFailures(self.crawler, self.lifecycle, self.signal_politeness)
        pages = self.lifecycle.pages
        logger.info(
            "Focus frontier: %s, MAX_PAGES=%d%s", self.frontier.name, max_pages,
            f", resumed with {len(self.frontier)} queued and {pages} fetched" if pages else "",
        )

    def _spider_opened(self) -> None:
        if self._refusal is not None:
            refuse_at_open(self.crawler, self._refusal)

    def close(self, reason: str) -> None:
        self.waker.cancel()
        if self.sitemaps is not None:
            self.sitemaps.stop()
        if self.signal_politeness is not None:
            self.signal_politeness.close()
        if self.services is not None and self.frontier is not None:
            self.services.known_urls.register(None)
        self._update_stats()
        if self.frontier is not None:
            self.state.save()
            self.frontier.close()  # its spill file (FOCUS_FRONTIER_MEMORY), if any

    def has_pending_requests(self) -> bool:
        return self.frontier is not None and (
            self.revisits is not None  # a continuous crawl goes on until it is stopped
            or (len(self.frontier) > 0 and self.lifecycle.budget() > 0))

    def __len__(self) -> int:
        return len(self.frontier) if self.frontier is not None else 0

    def enqueue_request(self, request: Request) -> bool:
        if self.error is not None:
            return False
        assert self.frontier is not None, "enqueue_request() before open()"
        meta = request.meta
        lease = meta.pop(LEASE, None)  # a redirect or retry copies the original's meta
        source = meta.pop(FROM, None)  # the lease of the page that yielded this outlink
        for key in TRANSIENT:  # what the politeness middlewares left on a redirect or retry
            meta.pop(key, None)
        if self.failures is not None and self.failures.ours(request):
            request.errback = None  # a redirect or retry copied it: given again at hand-out
        records = self.records
        assert records is not None
        url = records.url(request)
        if url is None:
            self.lifecycle.settle_from(lease, source)
            return False
        link = records.link(request, url)
        self.state.added(link)
        queued = records.queued(self.frontier.add(link))
        if not queued:
            if source is None and lease is not None and "redirect_times" in meta:
                self.stats.inc_value("focus/rejected/redirect_to_seen")  # a loop, or known
        if lease is not None or source is not None:  # a redirect, a retry, a page's outlink
            self.lifecycle.settle_from(lease, source)
        return queued

    def _drops(self, url: str, parent_score: float, parent: str | None = None,
               anchor: str = "", context: object = "") -> bool:
        """``KnownUrls.ignores`` for an order that counts in-links: a link it ignores, or one
        it only counts (counted here, journaled first, as :meth:`enqueue_request` would)."""
        frontier = self.frontier
        assert frontier is not None
        if frontier.ignores(url, parent_score, parent, anchor, context):
            return True
        if parent is None or not frontier.only_counts(url, parent, parent_score, anchor, context):
            return False
        self.state.record(Op.INLINK, url)
        frontier.count_inlink(url)
        return True

    def next_request(self) -> Request | None:
        frontier = self.frontier
        if frontier is None or (self.lifecycle.budget() <= 0 and self.revisits is None):
            return None  # (a continuous crawl's page budget bounds its new pages only)
        if self.state.halted:
            return None  # the disk is full: the crawl is stopping (focuscrawl.seam.output.diskfull)
        if self.strict and pages_in_spider(self.crawler):
            return None  # the engine asks again once the page has left the spider
        if self.state.at_open_limit():
            return None  # the engine asks again when a page is done (it leaves the spider)
        policy = self.policy
        now = policy.clock()
        held = policy.is_held if policy.held else None  # servers waiting for robots.txt
        entry = frontier.pop(lambda h: policy.can_dispatch(h) and policy.is_due(h, now),
                             self.slack, held)
        if entry is None:
            # Nothing is due.  Choose late, with every link parsed meanwhile: wake the engine
            # when the next server is due.  Only if that is impossible, hand out the best
            # request of a server merely waiting out its delay (the middleware holds it).
            if self._wake_when_due(now) or self.standalone:
                return None  # standalone: no middleware would hold it; the engine asks again
            held = policy.is_held if policy.held else None  # holds may have ended
            entry = frontier.pop(lambda h: policy.can_dispatch(h) and not (
                held and held(h, now)), self.slack, held)
        if entry is None:
            return None
        lease = self.lifecycle.hand_out(entry)  # journaled, its server's slot reserved
        assert self.records is not None
        request = self.records.request(entry, lease.number)
        if self.explain:
            why = frontier.explain(entry)
            if why is not None:
                request.meta[LINK]["why"] = why
        if request.errback is None:
            assert self.failures is not None  # made at open
            request.errback = self.failures.errback  # counts drops; settles the lease (JOBDIR)
        return request

    # -- signals ----------------------------------------------------------------------------
    def _page_scored(self, url: str, score: float, hot: bool, digest: Any = None,
                     **kwargs: Any) -> None:
        if self.frontier is not None:
            self.state.record(Op.SCORED, url, score, hot, digest)
            self.frontier.crawled(url, score, hot, digest)
            if self._judging:
                verdict = getattr(self.frontier.valuation, "examples", None)
                if verdict is not None:
                    self._judging = False
                    self.crawler.signals.send_catch_log(focus_signals.seeds_judged,
                                                        examples=verdict)
            if self.frontier.stats["pages"] % 20 == 0:
                self._update_stats()

    def _request_finished(self, request: Request, status: int | None, html: bool = True,
                          **kwargs: Any) -> None:
        """A handed-out request ended (politeness middleware): free its share of the budget."""
        number = request.meta.get(LEASE)
        if number is None or self.frontier is None:
            return
        # a revisit is a fetch, not one more page against MAX_PAGES
        page = is_page(status, html) and not (self.revisits and self.revisits.is_revisit(request))
        lease = self.lifecycle.downloaded(number, page)  # counted, journaled: a crawl order
        if lease is None:
            return
        if not page:
            # no page: an error or a file the spider skips (both teach the learned order that
            # the link was not worth its fetch), a redirect to follow (its target comes back
            # as a link of its own) or a URL sent back to wait for its robots.txt (never tried)
            learn = (status is None or not 300 <= status < 400) and not request.meta.get(
                ROBOTS_WAIT)
            self.state.record(Op.FAILED, lease.entry.url, learn)
            self.frontier.failed(lease.entry.url, learn)
        if page:
            request.meta[ORDER] = lease.order
            self.stats.set_value("focus/pages_fetched", self.lifecycle.pages)
        elif (status is None and request.errback is not None
              and not (self.failures is not None and self.failures.ours(request))):
            self.lifecycle.finish(number)  # its own errback: no sure way to see it end

    # -- helpers ----------------------------------------------------------------------------
    def _wake_when_due(self, now: float) -> bool:
        """Ask the engine for a request again when the next waiting server is due.

        Servers held for their robots.txt are waited for only while the crawl has something
        else to do (seeds still to come included); once they are all that is left, the holds
        end (their URLs are refused while the robots.txt is still unreachable) rather than
        keep a finished crawl open.
        """
        policy = self.policy
        waiting = [s.next_start for s in policy.servers.values()
                   if s.next_start > now and s.pending + s.active < s.concurrency]
        due = self.revisits.wait(now) if self.revisits is not None else None
        if due is not None and due > now:
            waiting.append(due)  # the next revisit falls due
        holds = policy.holds(now) if policy.held else None
        if holds:
            assert self.services is not None  # policy.held: the scheduler opened
            busy = (bool(waiting) or self.lifecycle.downloading > 0
                    or pages_in_spider(self.crawler)
                    or downloading(self.crawler) or self.services.seeds_pending)
            if busy:
                waiting.extend(holds)
            else:
                n = policy.end_holds()
                self.stats.inc_value("focus/robots/holds_ended", n)
                logger.info("Only servers waiting for their robots.txt are left: %d server(s) "
                            "no longer held, their URLs refused while it is unreachable", n)
                return False
        if not waiting:  # every server is busy: a finished download wakes the engine
            return self.waker.can_wake()
        return self.waker.at(min(waiting), now)

    def progress(self) -> dict[str, int] | None:
        """Figures for the focus log line (focuscrawl.seam.watch.logstats); None if the crawl never
        started."""
        f = self.frontier
        if f is None:
            return None
        servers = self.policy.servers.values()
        lifecycle = self.lifecycle
        return {"pages": lifecycle.pages, "max_pages": lifecycle.max_pages, "queued": len(f),
                "hot": f.stats.get("pages_hot", 0), "servers": len(self.policy.servers),
                "servers_busy": sum(1 for s in servers if s.active or s.pending)}

    def _check_components(self) -> None:
        """Without a downloader middleware that sends ``request_finished`` (a project that set
        only ``SCHEDULER``), keep politeness here (:attr:`standalone`).  With JOBDIR, refuse
        to start without the spider middleware that tells when a page is done (a page marked
        done too early would lose its outlinks on resume): one line naming the setting."""
        def enabled(setting: str, marker: str) -> bool:
            return any(getattr(load_object(c), marker, False)
                       for c in build_component_list(self.settings.getwithbase(setting)))

        self.standalone = not enabled("DOWNLOADER_MIDDLEWARES", "sends_request_finished")
        if self.jobdir_path and not enabled("SPIDER_MIDDLEWARES", "marks_pages_done"):
            raise NotConfigured(missing_message(
                f"{type(self).__name__} with JOBDIR", needs=[
                    "focuscrawl.seam.middlewares.journal.PageCompletionMiddleware in "
                    "SPIDER_MIDDLEWARES"]))

    def _keep_going(self) -> None:
        """Wrap the crawl order's frontier with the revisits (``focuscrawl.seam.revisit``)."""
        assert self.services is not None and self.frontier is not None
        state = self
        self.revisits, self.frontier = Revisits.local(
            self.frontier, settings=self.settings, lifecycle=self.lifecycle, policy=self.policy,
            servers=self.services.servers,
            record=lambda op, *args: state.state.record(op, *args))
        self.services.revisits = self.revisits
        self.sitemaps = SitemapHints(self.crawler, self.revisits)
        self.sitemaps.start()

    def _options(self, spider: Spider) -> dict[str, Any]:
        return frontier_options(self.settings, spider)

    def _update_stats(self) -> None:
        if self.records is not None:
            self.records.flush_stats()
        if self.frontier is not None:
            record_frontier_stats(self.stats, self.frontier)
