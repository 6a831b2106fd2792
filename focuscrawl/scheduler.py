"""FocusScheduler: Scrapy's scheduler contract over a focuscrawl frontier.

A thin adapter.  The frontier (``focuscrawl.frontier``) decides the crawl order; this class

* turns requests into compact frontier records (a plain outlink keeps only its URL and the
  ``meta["focus"]`` facts; anything unusual is kept as ``request_to_dict``),
* owns the seen-set, so a rediscovered URL is a link to learn from (a better score, a shorter
  distance from a hot page), not a duplicate to drop,
* hands out only requests whose server can take one now (``HostPolicy``), best order first,
* counts pages and stops handing out at MAX_PAGES, exactly: a request counts against the budget
  from the moment it is handed out until its download ends,
* saves and restores the frontier in JOBDIR on a clean stop.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.job import job_dir
from scrapy.utils.request import request_from_dict

from . import signals as focus_signals
from .frontier import Entry, Frontier, HostPolicy, Link, make_frontier
from .urls import canonical, host

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# meta keys a plain outlink may carry and still be stored compactly
_PLAIN_META = {"focus", "depth", "download_timeout", "download_slot", "download_latency"}
STATE_FILE = "focus_frontier.pickle"


def policy_for(crawler: Crawler) -> HostPolicy:
    """The crawl's one HostPolicy, shared by the scheduler and the politeness middleware."""
    policy = getattr(crawler, "_focus_policy", None)
    if policy is None:
        s = crawler.settings
        policy = HostPolicy(
            concurrency=s.getint("FOCUS_CONCURRENCY_PER_SERVER", 1),
            delay=s.getfloat("FOCUS_DELAY", 1.0),
            slow_seconds=s.getfloat("FOCUS_SLOW_SECONDS", 5.0),
            slow_factor=s.getfloat("FOCUS_SLOW_FACTOR", 2.0),
            max_delay=s.getfloat("FOCUS_MAX_DELAY", 30.0),
        )
        crawler._focus_policy = policy  # type: ignore[attr-defined]
    return policy


@lru_cache(maxsize=65536)
def _resolve(hostname: str) -> str:
    try:
        return socket.gethostbyname(hostname)
    except OSError:
        return hostname


def server_key(url: str, by: str = "host") -> str:
    """The politeness unit of a URL: its host name, or its IP address with ``by="ip"``."""
    name = host(url)
    return _resolve(name) if by == "ip" else name


def pages_in_spider(crawler: Crawler) -> bool:
    """True while a fetched page is still in the spider, its outlinks not all queued."""
    engine = getattr(crawler, "engine", None)
    slot = getattr(getattr(engine, "scraper", None), "slot", None)
    return bool(slot is not None and slot.active)


class FocusScheduler:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self.stats = crawler.stats
        self.policy = policy_for(crawler)
        self.server_by = self.settings.get("FOCUS_SERVER_KEY", "host")
        if self.server_by not in ("host", "ip"):
            raise NotConfigured(f"FOCUS_SERVER_KEY must be 'host' or 'ip', not {self.server_by!r}")
        self.jobdir = job_dir(self.settings)
        self.frontier: Frontier | None = None
        self.spider: Spider | None = None
        self.max_pages = 0
        self.pages = 0  # pages fetched (non-redirect responses to requests handed out here)
        self._leases: dict[int, Entry] = {}  # lease id -> entry, for requests handed out
        self._lease_seq = 0
        self.strict = self.settings.getbool("FOCUS_STRICT_ORDER", False)
        crawler.signals.connect(self._page_scored, signal=focus_signals.page_scored)
        crawler.signals.connect(self._request_finished, signal=focus_signals.request_finished)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusScheduler:
        return cls(crawler)

    # -- Scrapy's scheduler contract --------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        options = self._options(spider)
        self.max_pages = options.pop("max_pages")
        self.frontier = make_frontier(options.pop("strategy"), **options)
        if self.jobdir and os.path.exists(self._state_path()):
            self._load()
        logger.info(
            "Focus frontier: %s, MAX_PAGES=%d%s", self.frontier.name, self.max_pages,
            f", resumed with {len(self.frontier)} queued and {self.pages} fetched"
            if self.pages else "",
        )

    def close(self, reason: str) -> None:
        self._update_stats()
        if self.jobdir and self.frontier is not None:
            self._save()

    def has_pending_requests(self) -> bool:
        return self.frontier is not None and len(self.frontier) > 0 and self._budget() > 0

    def __len__(self) -> int:
        return len(self.frontier) if self.frontier is not None else 0

    def enqueue_request(self, request: Request) -> bool:
        assert self.frontier is not None, "enqueue_request() before open()"
        meta = request.meta
        meta.pop("focus_lease", None)  # a redirect or retry copies the original's meta
        meta.pop("focus_started", None)
        meta.pop("focus_finished", None)
        try:
            url = canonical(request.url)
        except ValueError:
            self.stats.inc_value("focus/rejected/bad_url")
            return False
        focus = meta.get("focus") or {}
        link = Link(
            url,
            host=server_key(url, self.server_by),
            anchor=focus.get("anchor", ""),
            parent=focus.get("parent"),
            parent_score=float(focus.get("parent_score", 0.0)),
            parent_hot=bool(focus.get("parent_hot", False)),
            depth=int(meta.get("depth", focus.get("depth", 0))),
            keyword=bool(focus.get("keyword", False)),
            force=request.dont_filter,
            payload=self._payload(request, url),
        )
        queued = self.frontier.add(link)
        if not queued:
            self.stats.inc_value("focus/duplicates_or_dropped")
        return queued

    def next_request(self) -> Request | None:
        frontier = self.frontier
        if frontier is None or self._budget() <= 0:
            return None
        if self.strict and pages_in_spider(self.crawler):
            return None  # the engine asks again once the page's outlinks are all queued
        policy = self.policy
        now = policy.clock()
        entry = frontier.pop(lambda h: policy.can_dispatch(h) and policy.is_due(h, now))
        if entry is None:
            # Nothing is due: hand out the best request of a server that is merely waiting out
            # its delay; the politeness middleware holds it until then.  Keeps the engine busy.
            entry = frontier.pop(policy.can_dispatch)
        if entry is None:
            return None
        request = self._request(entry)
        self._lease_seq += 1
        request.meta["focus_lease"] = self._lease_seq
        request.meta["focus_server"] = entry.host
        self._leases[self._lease_seq] = entry
        policy.reserve(entry.host)
        self.stats.inc_value("focus/requests_handed_out")
        return request

    # -- signals ----------------------------------------------------------------------------
    def _page_scored(self, url: str, score: float, hot: bool, **kwargs: Any) -> None:
        if self.frontier is not None:
            self.frontier.crawled(url, score, hot)
            if self.frontier.stats["pages"] % 20 == 0:
                self._update_stats()

    def _request_finished(self, request: Request, status: int | None, **kwargs: Any) -> None:
        """A handed-out request ended (politeness middleware): free its share of the budget."""
        lease = request.meta.get("focus_lease")
        if lease is None or self._leases.pop(lease, None) is None:
            return
        if status is not None and not 300 <= status < 400:
            self.pages += 1
            request.meta["focus_order"] = self.pages
            self.stats.set_value("focus/pages_fetched", self.pages)

    # -- helpers ----------------------------------------------------------------------------
    def _budget(self) -> int:
        return self.max_pages - self.pages - len(self._leases) if self.max_pages else 1

    def _options(self, spider: Spider) -> dict[str, Any]:
        s = self.settings
        options: dict[str, Any] = {
            "strategy": s.get("FOCUS_STRATEGY", "best-first"),
            "max_pages": s.getint("FOCUS_MAX_PAGES", 2000),
            "n": s.getint("FOCUS_BEST_N", 256),
            "max_buffer": s.getint("FOCUS_MAX_BUFFER", 0),
            "seed": s.getint("FOCUS_RANDOM_SEED", 0),
            "distance_limit": s.getint("FOCUS_HOT_DISTANCE", 3),
            "reorder": s.get("FOCUS_REORDER", "none"),
            "weight": s.getfloat("FOCUS_DISTILLER_WEIGHT", 0.5),
            "every": s.getint("FOCUS_DISTILLER_EVERY", 50),
            "round_robin": s.getint("FOCUS_ROUND_ROBIN", 0),
        }
        # spider arguments (already validated by the spider) win over settings
        options.update(getattr(spider, "focus_options", {}) or {})
        return options

    def _payload(self, request: Request, url: str) -> Any:
        """None for a plain outlink (rebuilt from the entry), else the request as a dict."""
        plain = (
            request.method == "GET"
            and not request.body
            and request.callback is None
            and request.errback is None
            and request.priority == 0
            and not request.headers
            and not request.cookies
            and set(request.meta) <= _PLAIN_META
            and request.url == url
        )
        if plain:
            return None
        return request.to_dict(spider=self.spider)

    def _request(self, entry: Entry) -> Request:
        if entry.payload is not None:
            request = request_from_dict(entry.payload, spider=self.spider)
            request.meta.setdefault("focus", {})
        else:
            request = Request(entry.url, meta={"depth": entry.depth, "focus": {}})
        focus = request.meta["focus"]
        focus.setdefault("anchor", entry.anchor)
        focus.setdefault("parent", entry.parent)
        focus["priority"] = entry.score
        focus["depth"] = entry.depth
        return request

    def _update_stats(self) -> None:
        f = self.frontier
        if f is None:
            return
        stats = self.stats
        for name in ("pages", "pages_hot", "promotions", "evicted", "batches", "duplicates"):
            stats.set_value(f"focus/{name}", f.stats.get(name, 0))
        for name, value in f.describe().items():
            stats.set_value(f"focus/{name}", value)
        if f.stats.get("pages"):
            stats.set_value("focus/hot_rate", round(f.stats["pages_hot"] / f.stats["pages"], 4))

    # -- persistence (JOBDIR, clean stop) -----------------------------------------------------
    def _state_path(self) -> str:
        assert self.jobdir
        return os.path.join(self.jobdir, STATE_FILE)

    def _save(self) -> None:
        assert self.frontier is not None
        # requests handed out but never finished go back to the queue: nothing is lost
        for entry in self._leases.values():
            self.frontier.requeue(entry)
        state = {"frontier": self.frontier.snapshot(), "pages": self.pages}
        os.makedirs(self.jobdir, exist_ok=True)
        tmp = self._state_path() + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._state_path())

    def _load(self) -> None:
        assert self.frontier is not None
        with open(self._state_path(), "rb") as f:
            state = pickle.load(f)
        self.frontier.restore(state["frontier"])
        self.pages = state["pages"]
