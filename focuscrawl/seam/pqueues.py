"""FocusPriorityQueue: a focuscrawl crawl order inside Scrapy's *default* scheduler.

    SCHEDULER = "scrapy.core.scheduler.Scheduler"
    SCHEDULER_PRIORITY_QUEUE = "focuscrawl.pqueues.FocusPriorityQueue"

For projects that keep Scrapy's scheduler (or a subclass of it): requests are ordered by the
``FOCUS_STRATEGY`` frontier; politeness is then Scrapy's downloader slots (``DOWNLOAD_DELAY``,
``CONCURRENT_REQUESTS_PER_DOMAIN``), since a queue never learns when a download ends.  What it
cannot do is what Scrapy's scheduler hides from a queue: its dupefilter drops a rediscovered URL
before the queue sees it, so there is no promotion by a second, better link (the link-graph
promotions of ``cho-distance`` still happen when a page turns out hot).
FocusScheduler has none of these limits; this class is the compatible path.

Set alone (no add-on), it needs nothing else of focuscrawl: without keywords the default learned
order falls back to best-first, and settings it cannot use end the crawl with one line and a
close reason (``focuscrawl.seam.outcome``), not a traceback.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured
from scrapy.utils.request import request_from_dict

from focuscrawl import config
from focuscrawl.core.frontier import Link
from focuscrawl.core.orders import make_frontier
from focuscrawl.core.urls import canonical
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.engine import pages_in_spider, refuse_at_open
from focuscrawl.seam.meta import LINK
from focuscrawl.seam.options import frontier_options, strategy_without_keywords
from focuscrawl.seam.outcome import BAD_SETTINGS, refuse_start, watch
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler


logger = logging.getLogger(__name__)


class FocusPriorityQueue:
    STATE_FILE = "focus_pqueue.pickle"

    def __init__(self, crawler: Crawler, key: str = "", startprios: Iterable[Any] = ()) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.key = key
        self.servers = FocusServices.of(crawler, self).servers
        spider = getattr(crawler, "spider", None)
        options = frontier_options(s, spider)
        for name in ("max_pages", "work_conserving"):  # Scrapy's scheduler: no budget, no slots
            options.pop(name)
        # no spilling: this queue keeps every Request object in memory anyway, and its state
        # file saves only the URLs queued in memory
        options["frontier_memory"] = 0
        strategy = options.pop("strategy")
        self._refusal: CloseSpider | None = None
        watch(crawler)  # scrapy crawl exits 1 if the crawl cannot start
        try:
            if strategy == "learned" and not options.get("keywords"):
                strategy = strategy_without_keywords(s, spider)
            self.frontier = make_frontier(strategy, **options)
        except (NotConfigured, ValueError) as e:
            # one line and a close reason once the spider has opened, not a traceback; the
            # crawl order meanwhile: one that needs no option
            self._refusal = refuse_start(crawler, logger, BAD_SETTINGS, str(e))
            crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
            self.frontier = make_frontier("breadth-first", frontier_memory=0)
        self._requests: dict[str, Request] = {}
        self._pending: dict[str, dict] = {}
        self.strict = config.get(s, "FOCUS_STRICT_ORDER")
        if key and startprios and os.path.exists(self._state_path()):
            with open(self._state_path(), "rb") as f:
                state = pickle.load(f)
            self.frontier.restore(state["frontier"])
            self._pending = state["requests"]  # dicts, turned back into requests when popped
        crawler.signals.connect(self._page_scored, signal=focus_signals.page_scored)

    def _spider_opened(self) -> None:
        if self._refusal is not None:
            refuse_at_open(self.crawler, self._refusal)

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, downstream_queue_cls: Any, key: str,
        startprios: Iterable[Any] = (), *, start_queue_cls: Any = None,
    ) -> FocusPriorityQueue:
        return cls(crawler, key, startprios)

    def _page_scored(self, url: str, score: float, hot: bool, digest: Any = None,
                     **kwargs: Any) -> None:
        self.frontier.crawled(url, score, hot, digest)

    def push(self, request: Request) -> None:
        try:
            url = canonical(request.url)
        except ValueError:
            url = request.url
        focus = request.meta.get(LINK) or {}
        link = Link(
            url, host=self.servers.key(url), anchor=focus.get("anchor", ""),
            parent=focus.get("parent"), parent_score=float(focus.get("parent_score", 0.0)),
            parent_hot=bool(focus.get("parent_hot", False)),
            depth=int(request.meta.get("depth", 0)), keyword=bool(focus.get("keyword")),
            force=True,  # Scrapy's dupefilter already decided this request is new
            context=focus.get("context", ""), chrome=bool(focus.get("chrome", False)),
        )
        if self.frontier.add(link):
            self._requests[url] = request

    def pop(self) -> Request | None:
        if self.strict and pages_in_spider(self.crawler):
            return None
        while (entry := self.frontier.pop()) is not None:
            request = self._requests.pop(entry.url, None)
            if request is not None:
                return request
            data = self._pending.pop(entry.url, None)
            if data is not None:
                return request_from_dict(data, spider=self.crawler.spider)
        return None

    def peek(self) -> Request | None:
        return None  # the next request depends on which servers are ready: no cheap peek

    def close(self) -> list[int]:
        if not self.key or not len(self.frontier):
            return []
        spider = self.crawler.spider
        queued = {u: r.to_dict(spider=spider) for u, r in self._requests.items()
                  if self.frontier.queued(u)}  # evicted requests are not kept
        queued.update({u: d for u, d in self._pending.items() if self.frontier.queued(u)})
        os.makedirs(self.key, exist_ok=True)
        with open(self._state_path(), "wb") as f:
            pickle.dump({"frontier": self.frontier.snapshot(), "requests": queued}, f)
        return [0]  # Scrapy's scheduler stores this and hands it back as startprios

    def _state_path(self) -> str:
        return os.path.join(self.key, self.STATE_FILE)

    def __len__(self) -> int:
        return len(self.frontier)
