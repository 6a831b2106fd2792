"""Trap, junk, nearness and irrelevant-directory filters on the spider's outlinks.

:class:`LinkFilterMiddleware` is a spider middleware: it drops an outlink request before it
reaches the scheduler, so nothing is handed out, reserved or fetched for it.  Every drop is
counted in ``focus/filtered/<reason>``; the rules themselves are plain Python in
``focuscrawl.core.traps``.  Start requests (seeds) and ``dont_filter`` requests pass untouched: they
are the user's choice.

Reasons, each switched by a setting (see ``settings``): ``scheme``, ``url_length``, ``cgi``,
``session_id``, ``repeated_segment``, ``calendar``, ``server_cap``, ``robots`` (the host's
robots.txt is already known and refuses the URL), and the slides' two refinements, off by
default: ``nearness`` and ``irrelevant_dir``.  For those two, ``focus/not_fetched/<reason>``
counts distinct URLs refused and never let through, and ``.._pct`` their share of all distinct
outlinks seen: the slides' Nearness% and Rejected Directories%.

Two kinds of request reach the scheduler without passing here: redirect targets (Scrapy's
RedirectMiddleware schedules them itself; a server adding ``;jsessionid=`` by redirect is
common) and URLs queued before their directory was rejected.  The small downloader middleware
:class:`GateMiddleware` checks handed-out requests for both: a redirect target gets the same trap
and junk rules (counted under the same reasons), and a URL of a rejected directory is dropped
(``focus/filtered/irrelevant_dir_queued``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from focuscrawl.config import FilterOptions
from focuscrawl.core.traps import ServerCap, UrlRules, is_near
from focuscrawl.seam.meta import LEASE, LINK
from focuscrawl.seam.refusals import SayOnce
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

DISTINCT_REASONS = ("nearness", "irrelevant_dir")


def url_rules(crawler: Crawler) -> UrlRules | None:
    """The trap and junk rules the settings ask for (None when FOCUS_FILTERS_ENABLED is off)."""
    o = FilterOptions.from_settings(crawler.settings)
    if not o.enabled:
        return None
    return UrlRules(schemes=o.schemes, cgi=o.cgi, repeat=o.repeat, max_length=o.max_length,
                    calendar=o.calendar, session=o.session)


class LinkFilterMiddleware(BaseSpiderMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        rules = url_rules(crawler)
        if rules is None:
            raise NotConfigured
        self.stats = crawler.stats
        self.say = SayOnce("trap and junk filter on outlinks", logger)
        self.rules = rules
        o = FilterOptions.from_settings(crawler.settings)
        self.cap = ServerCap(o.max_pages_per_server)
        self.nearness = o.nearness
        self.robots_prefilter = o.robots
        self.services = FocusServices.of(crawler, self)
        self.servers = self.services.servers
        self.dirs = self.services.directories
        # distinct URLs (their hashes), kept only for the slides' two measures
        self._distinct = self.nearness or self.dirs is not None
        self._seen: set[int] = set()
        self._passed: set[int] = set()
        self._refused: dict[str, set[int]] = {r: set() for r in DISTINCT_REASONS}
        # counts not yet in the stats: added once per page's output (see _flush), not by a
        # StatsCollector.inc_value per outlink (its wrappers cost more than the filters)
        self._considered = 0
        self._filtered: Counter[str] = Counter()
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    def process_spider_output(self, response: Response | None, result: Iterable[Any],
                              spider: Spider | None = None) -> Iterable[Any]:
        """The base class's loop; the page's counts go to the stats once it is exhausted."""
        try:
            yield from super().process_spider_output(response, result)
        finally:
            self._flush()

    async def process_spider_output_async(self, response: Response | None,
                                          result: AsyncIterator[Any],
                                          spider: Spider | None = None) -> AsyncIterator[Any]:
        """The base class's loop; the page's counts go to the stats once it is exhausted."""
        try:
            async for o in super().process_spider_output_async(response, result):
                yield o
        finally:
            self._flush()

    def _flush(self) -> None:
        """Add the links considered and filtered since the last call to the stats."""
        stats = self.stats
        if self._considered:
            stats.inc_value("focus/links/considered", self._considered)
            self._considered = 0
        if self._filtered:
            for reason, count in self._filtered.items():
                stats.inc_value(f"focus/filtered/{reason}", count)
            self._filtered.clear()

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        if response is None or request.dont_filter:
            return request
        self._considered += 1
        reason = self._reason(request, response)
        if self._distinct:
            key = hash(request.url)
            self._seen.add(key)
            if reason is None:
                self._passed.add(key)
            elif reason in self._refused:
                self._refused[reason].add(key)
        if reason is None:
            return request
        self._filtered[reason] += 1
        self.say(reason, request.url, f"focus/filtered/{reason}")
        return None

    def _reason(self, request: Request, response: Response) -> str | None:
        url = request.url
        reason = self.rules.reason(url)
        if reason is not None:
            return reason
        if self.nearness:
            focus = request.meta.get(LINK) or {}
            if not is_near(response.url, url, bool(focus.get("keyword"))):
                return "nearness"
        if self.dirs is not None and self.dirs.is_rejected(url):
            return "irrelevant_dir"
        if self.robots_prefilter:
            robots = self.services.robots  # registered by the robots.txt middleware
            if robots is not None and robots.disallows(url):
                return "robots"
        if not self.cap.admit(self.servers.key(url), url):
            return "server_cap"
        return None

    def _spider_closed(self) -> None:
        self._flush()
        stats = self.stats
        if self.cap.cap:
            stats.set_value("focus/filtered/capped_servers", self.cap.full_servers())
        if not self._distinct:
            return
        seen = len(self._seen) or 1
        enabled = {"nearness": self.nearness, "irrelevant_dir": self.dirs is not None}
        for reason, refused in self._refused.items():
            if not enabled[reason]:
                continue
            never_set = refused - self._passed
            if reason == "irrelevant_dir" and self.dirs is not None:
                never_set |= self.dirs.dropped  # queued before the rejection, dropped after
            never = len(never_set)
            stats.set_value(f"focus/not_fetched/{reason}", never)
            stats.set_value(f"focus/not_fetched/{reason}_pct", round(100.0 * never / seen, 2))


class GateMiddleware:
    """Last check of a handed-out request: redirect targets and rejected directories."""

    def __init__(self, crawler: Crawler) -> None:
        self.rules = url_rules(crawler)
        self.dirs = FocusServices.of(crawler, self).directories
        if self.rules is None and self.dirs is None:
            raise NotConfigured
        self.stats = crawler.stats
        self.say = SayOnce("gate before download", logger)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GateMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        meta = request.meta
        if meta.get("dont_obey_robotstxt"):  # robots.txt, wherever it redirects
            return None
        if self.rules is not None and meta.get("redirect_urls"):
            reason = self.rules.reason(request.url)
            if reason is not None:
                self.stats.inc_value(f"focus/filtered/{reason}")
                self.stats.inc_value("focus/filtered/redirect_targets")
                self.say(f"redirect to {reason}", request.url, f"focus/filtered/{reason}")
                raise IgnoreRequest(f"redirect to a filtered URL ({reason})")
        if self.dirs is not None and LEASE in meta and self.dirs.is_rejected(request.url):
            self.stats.inc_value("focus/filtered/irrelevant_dir_queued")
            self.say("irrelevant directory", request.url, "focus/filtered/irrelevant_dir_queued")
            self.dirs.dropped.add(hash(request.url))
            raise IgnoreRequest("irrelevant directory")
        return None
