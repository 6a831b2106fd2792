"""``scrapy crawl`` that exits non-zero when the crawl could not start or the disk filled.

Scrapy's own command exits 0 when a spider closes at once because of bad arguments, a JOBDIR
of another crawl, or an unreachable Redis: Scrapyd, cron and shell scripts then report success.
Here the component that refuses the crawl logs one line and sets ``focus/start_error`` (or the
spider closes with ``bad_arguments``); this command turns that into exit status 1.  A component
that cannot even be built because the crawl lacks the FocusServices extension
(``focuscrawl.seam.services.MissingServices``) is reported the same way: one line, not a traceback,
exit status 1.  A crawl stopped by a full disk (finish reason ``disk_full``, stat
``focus/disk_full``: ``focuscrawl.seam.output.diskfull``) exits 1 too: it is not complete until the
same
command is run again with space freed.  Selected by ``COMMANDS_MODULE = "focuscrawl.seam.commands"``
in the settings (Scrapyd runs the same command).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError
from twisted.internet.defer import Deferred

from focuscrawl.seam.output.diskfull import DISK_FULL
from focuscrawl.seam.services import MissingServices
from focuscrawl.seam.signals import DISK_FULL_STAT, START_ERROR_STAT

if TYPE_CHECKING:
    import argparse

    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)
#: finish reasons of a crawl that did not do its work: it never started (bad arguments), the
#: disk filled, or a distributed worker was stopped by Redis (focuscrawl.distributed.scheduler:
#: the crawl's keys vanished, or Redis stayed away too long)
FAILURES = frozenset({"bad_arguments", DISK_FULL, "redis_crawl_lost", "redis_unavailable"})
#: stats set by the component that refused or stopped the crawl (set even when the crawl was
#: already closing for another reason)
FAILURE_STATS = (START_ERROR_STAT, DISK_FULL_STAT)


def failed(crawler: Crawler) -> bool:
    """The crawl could not start or stopped short: ``scrapy crawl`` exits 1."""
    stats = crawler.stats
    if stats is None:
        return True
    return (any(stats.get_value(name) for name in FAILURE_STATS)
            or stats.get_value("finish_reason") in FAILURES)


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
        if self.crawler_process.bootstrap_failed or failed(crawler):
            self.exitcode = 1
