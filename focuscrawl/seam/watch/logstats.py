"""A focus line in the log every ``LOGSTATS_INTERVAL``, and a summary line at the end.

Scrapy's LogStats says pages and items per minute; an operator of a focused crawl wants to know
how the focus is doing and when the crawl will end::

    Focus: 120/500 pages (24%), 51 relevant (harvest 0.42), 6 near-duplicates, 37 hot,
           2345 queued, servers 3 busy of 9, 118 pages/min, ETA 3m13s

The figures come from the scheduler's ``progress()`` (both focuscrawl schedulers have one; the
distributed one gives the cluster's pages and queue) and the spider's ``focus/relevant_pages``
(distinct pages: a near-copy of a page exported earlier is no new harvest) and
``focus/near_duplicates`` stats (said once there is one).  With another scheduler the
extension stays silent.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet.task import LoopingCall

from focuscrawl import config
from focuscrawl.seam.engine import scheduler_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def focus_line(p: dict[str, Any], relevant: int, rate: float | None, final: bool = False,
               near_duplicates: int = 0) -> str:
    """One line from a progress dict; ``rate`` in pages per second (None: not known yet)."""
    pages, max_pages = p.get("pages", 0), p.get("max_pages", 0)
    if max_pages and not final:
        line = f"{pages}/{max_pages} pages ({100 * pages / max_pages:.0f}%)"
    else:
        line = f"{pages} pages"
    harvest = relevant / pages if pages else 0.0
    line += f", {relevant} relevant (harvest {harvest:.2f})"
    if near_duplicates:
        line += f", {near_duplicates} near-duplicates"
    line += f", {p.get('hot', 0)} hot, {p.get('queued', 0)} queued"
    if "servers" in p:
        line += f", servers {p.get('servers_busy', 0)} busy of {p['servers']}"
    if rate is not None:
        line += f", {60 * rate:.0f} pages/min"
        left = max_pages - pages if max_pages else 0
        if left > 0 and p.get("queued", 0) > 0:
            line += f", ETA {duration(left / rate) if rate > 0 else 'unknown'}"
    return line


class FocusLogStats:
    def __init__(self, crawler: Crawler, interval: float) -> None:
        self.crawler = crawler
        self.interval = interval
        self._task: LoopingCall | None = None
        self._last: tuple[float, int] | None = None  # (time, pages) at the previous line
        self._started = 0.0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusLogStats:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval or not config.get(crawler.settings, "FOCUS_LOGSTATS"):
            raise NotConfigured
        return cls(crawler, interval)

    def _progress(self) -> dict[str, Any] | None:
        progress = getattr(scheduler_of(self.crawler), "progress", None)
        return progress() if progress is not None else None

    def _stat(self, name: str) -> int:
        stats = self.crawler.stats
        return int(stats.get_value(name, 0) or 0) if stats else 0

    def _line(self, p: dict[str, Any], rate: float | None, final: bool = False) -> str:
        return focus_line(p, self._stat("focus/relevant_pages"), rate, final,
                          self._stat("focus/near_duplicates"))

    def spider_opened(self, spider: Spider) -> None:
        self._started = time.monotonic()
        self._task = LoopingCall(self.log)
        self._task.start(self.interval, now=False)

    def log(self) -> None:
        p = self._progress()
        if p is None:
            return
        now, pages = time.monotonic(), p.get("pages", 0)
        rate = None
        if self._last is not None and now > self._last[0]:
            rate = (pages - self._last[1]) / (now - self._last[0])
        self._last = (now, pages)
        logger.info("Focus: %s", self._line(p, rate))

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._task is not None and self._task.running:
            self._task.stop()
        p = self._progress()
        if p is None:
            return
        elapsed = time.monotonic() - self._started
        feeds = ", ".join(str(uri) for uri in self.crawler.settings.getdict("FEEDS")) or "none"
        logger.info("Focus finished (%s) in %s: %s; output: %s", reason, duration(elapsed),
                    self._line(p, None, final=True), feeds)
