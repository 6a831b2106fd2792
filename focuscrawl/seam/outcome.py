"""How a crawl that could not start, or stopped short, ends: in any Scrapy project.

Whatever cannot start -- bad spider arguments, settings the crawl order refuses, a JOBDIR of
another crawl, Redis unreachable, a missing part -- is said in one ERROR line (no traceback),
kept in the stat ``focus/start_error``, and ends the crawl with a close reason naming the cause
(:func:`refuse_start`).  A crawl that ended so, or that stopped short (a full disk, a distributed
crawl lost), makes ``scrapy crawl`` exit 1 -- Scrapy's own command, in any project, not only
ours: every focuscrawl component that can refuse a crawl calls :func:`watch` when it is built,
and at ``spider_closed`` a failed crawl is reported to Scrapy's runner
(``focuscrawl.seam.engine.report_failure``).  Cron, Scrapyd and shell scripts then see the
failure.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider

from focuscrawl.seam.engine import report_failure
from focuscrawl.seam.signals import DISK_FULL_STAT, START_ERROR_STAT

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: close reasons of a crawl that could not start (``refuse_start``)
BAD_ARGUMENTS = "bad_arguments"  # the spider's arguments
BAD_SETTINGS = "bad_settings"  # a FOCUS_* setting, or options the crawl order refuses
BAD_JOBDIR = "bad_jobdir"  # a JOBDIR of another crawl, or unreadable
MISSING_COMPONENT = "missing_component"  # a part the crawl needs is not enabled
#: finish reasons of a crawl that did not do its work: it never started, the disk filled
#: (focuscrawl.seam.output.diskfull), or a distributed worker was stopped by Redis
#: (focuscrawl.distributed.scheduler: the crawl's keys vanished, or Redis stayed away too long)
FAILURES = frozenset({BAD_ARGUMENTS, BAD_SETTINGS, BAD_JOBDIR, MISSING_COMPONENT, "disk_full",
                      "redis_crawl_lost", "redis_unavailable", "redis_settings_differ"})
#: stats set by the component that refused or stopped the crawl (set even when the crawl was
#: already closing for another reason)
FAILURE_STATS = (START_ERROR_STAT, DISK_FULL_STAT)


def failed(crawler: Crawler) -> bool:
    """The crawl could not start or stopped short."""
    try:
        stats = crawler.stats
    except RuntimeError:  # Crawler.stats before the crawl started
        return False
    return (any(stats.get_value(name) for name in FAILURE_STATS)
            or stats.get_value("finish_reason") in FAILURES)


def _spider_closed(sender: Crawler, **kwargs: Any) -> None:
    if failed(sender):
        report_failure(sender)


def watch(crawler: Crawler) -> None:
    """Make ``scrapy crawl`` exit 1 if this crawl fails (idempotent: one receiver per crawl).

    Called when a scheduler or a priority queue is built: after Scrapy's own extensions
    (CoreStats sets ``finish_reason`` at ``spider_closed`` first) and every middleware."""
    crawler.signals.connect(_spider_closed, signal=signals.spider_closed)


def refuse_start(crawler: Crawler, log: logging.Logger, reason: str, message: str) -> CloseSpider:
    """Say why the crawl cannot start (one line, the stat) and return the ``CloseSpider`` that
    ends it with ``reason``: give it to ``engine.refuse_at_open`` from a ``spider_opened``
    handler, where the spider closes cleanly once everything has opened (from
    ``Scheduler.open`` it would log a traceback closing the scraper, which has not opened
    yet)."""
    log.error("focuscrawl: %s", message)
    crawler.stats.set_value(START_ERROR_STAT, message)
    watch(crawler)
    return CloseSpider(reason)
