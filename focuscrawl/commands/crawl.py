"""``scrapy crawl`` that exits non-zero when the crawl could not start or the disk filled.

Scrapy's own command exits 0 when a spider closes at once because of bad arguments, a JOBDIR
of another crawl, or an unreachable Redis: Scrapyd, cron and shell scripts then report success.
Here the component that refuses the crawl logs one line and sets ``focus/start_error`` (or the
spider closes with ``bad_arguments``); this command turns that into exit status 1.  A component
that cannot even be built because the crawl lacks the FocusServices extension
(``focuscrawl.services.MissingServices``) is reported the same way: one line, not a traceback,
exit status 1.  A crawl stopped by a full disk (finish reason ``disk_full``, stat
``focus/disk_full``: ``focuscrawl.diskfull``) exits 1 too: it is not complete until the same
command is run again with space freed.  Selected by ``COMMANDS_MODULE = "focuscrawl.commands"``
in the settings (Scrapyd runs the same command).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError
from twisted.internet.defer import Deferred

from ..diskfull import DISK_FULL
from ..services import MissingServices
from ..signals import DISK_FULL_STAT, START_ERROR_STAT

if TYPE_CHECKING:
    import argparse

    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)
#: finish reasons of a crawl that never started
START_FAILURES = frozenset({"bad_arguments"})
#: finish reasons of a crawl that stopped before its end (exit 1 as well)
STOP_FAILURES = frozenset({DISK_FULL})
#: finish reasons of a distributed worker stopped by Redis (focuscrawl.distributed.scheduler):
#: the crawl's keys vanished (Redis restarted empty), or Redis stayed away too long
REDIS_FAILURES = frozenset({"redis_crawl_lost", "redis_unavailable"})


def failed_to_start(crawler: Crawler) -> bool:
    stats = crawler.stats
    if stats is None:
        return True
    return bool(stats.get_value(START_ERROR_STAT)
                or stats.get_value("finish_reason") in START_FAILURES)


def stopped_short(crawler: Crawler) -> bool:
    """The crawl stopped because the disk filled (even if it was already closing then)."""
    stats = crawler.stats
    return stats is not None and bool(stats.get_value(DISK_FULL_STAT)
                                      or stats.get_value("finish_reason") in STOP_FAILURES)


def stopped_by_redis(crawler: Crawler) -> bool:
    stats = crawler.stats
    return stats is not None and stats.get_value("finish_reason") in REDIS_FAILURES


def _report(error: BaseException) -> None:
    logger.error("focuscrawl: %s", error)


def one_line_when_parts_are_missing(started: Any) -> None:
    """The crawl's Deferred or asyncio task: a MissingServices failure becomes one ERROR line
    (the crawler process still counts the start as failed); any other failure is left as it is.
    """
    if isinstance(started, Deferred):
        def errback(failure: Failure) -> None:
            failure.trap(MissingServices)
            _report(failure.value)

        started.addErrback(errback)
    elif isinstance(started, asyncio.Future):
        def done(task: asyncio.Future) -> None:
            if task.cancelled():
                return
            error = task.exception()  # retrieved: asyncio no longer logs it on its own
            if isinstance(error, MissingServices):
                _report(error)
            elif error is not None:
                task.get_loop().call_exception_handler(
                    {"message": "the crawl failed", "exception": error, "future": task})

        started.add_done_callback(done)


class Command(ScrapyCrawl):
    def short_desc(self) -> str:
        return "Run a spider of the current project, by name (exit 1 if it could not start)"

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one spider, e.g. scrapy crawl topic -a keywords=...")
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        one_line_when_parts_are_missing(self.crawler_process.crawl(crawler, **opts.spargs))
        self.crawler_process.start()
        if (self.crawler_process.bootstrap_failed or failed_to_start(crawler)
                or stopped_short(crawler) or stopped_by_redis(crawler)):
            self.exitcode = 1
