"""A full disk stops the crawl in one line, resumable, instead of a storm of tracebacks.

When a write of the crawl's own files fails because the disk (or the quota) is full -- the
JOBDIR journal (``focuscrawl.seam.persistence.jobdir``: SQLite reports ``SQLITE_FULL``) or the
JSON-lines feed (``focuscrawl.seam.output.feeds``: ``OSError`` ENOSPC/EDQUOT) -- the component
that saw it calls :func:`stop_crawl`, which, once per crawl:

1. sends :data:`focuscrawl.seam.signals.disk_full`: the scheduler stops its journal where it is (the
   last commit), exactly as if the process had been killed there, and hands out no more URLs;
2. logs one ERROR line naming the file and saying to free space, sets
   :data:`~focuscrawl.seam.signals.DISK_FULL_STAT` (``scrapy crawl`` then exits 1);
3. keeps Scrapy's SpiderState from rewriting ``JOBDIR/spider.state`` at close (on a full disk it
   would leave the file empty);
4. closes the spider with the finish reason :data:`DISK_FULL`.

After space is freed the same command resumes from JOBDIR like after a kill -9: pages not
journaled as done are fetched again, and the feed skips those it already holds.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from typing import TYPE_CHECKING

from scrapy import signals as scrapy_signals
from scrapy.extensions.spiderstate import SpiderState

from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.engine import close

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: the finish reason of a crawl stopped by a full disk
DISK_FULL = "disk_full"
_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(error: BaseException | None) -> bool:
    """True for "no space left" / "quota exceeded" (an OSError) and SQLite's SQLITE_FULL, also
    as the cause of another error (SQLite may roll back by itself, then the ROLLBACK fails)."""
    return full_error(error) is not None


def full_error(error: BaseException | None) -> BaseException | None:
    """The disk-full error in ``error``'s chain of causes, or None."""
    for _ in range(5):
        if error is None or _full(error):
            return error
        error = error.__cause__ or error.__context__
    return None


def _full(error: BaseException) -> bool:
    if isinstance(error, OSError):
        return error.errno in _ERRNOS
    if isinstance(error, sqlite3.OperationalError):
        code = getattr(error, "sqlite_errorcode", None)
        if code is not None:
            return code & 0xFF == sqlite3.SQLITE_FULL
        return "database or disk is full" in str(error)
    return False


def stop_crawl(crawler: Crawler | None, path: str | os.PathLike[str], error: BaseException
               ) -> None:
    """The disk holding ``path`` is full: stop the crawl cleanly (see the module doc)."""
    if crawler is None or crawler.stats is None:
        return
    stats = crawler.stats
    if stats.get_value(focus_signals.DISK_FULL_STAT) is not None:
        return  # told once
    path = os.fspath(path)
    error = full_error(error) or error
    stats.set_value(focus_signals.DISK_FULL_STAT, path)
    crawler.signals.send_catch_log(focus_signals.disk_full, path=path, error=error)
    reason = (os.strerror(error.errno) if isinstance(error, OSError) and error.errno
              else str(error))
    then = ("run the same command again to resume" if crawler.settings.get("JOBDIR")
            else "run the crawl again")
    logger.error("focuscrawl: the disk is full: writing %s failed (%s); the crawl stops "
                 "(%s). Free space on that disk, then %s", path, reason, DISK_FULL, then)
    try:
        state = crawler.get_extension(SpiderState)
    except RuntimeError:  # no extensions yet
        state = None
    if state is not None:
        crawler.signals.disconnect(state.spider_closed, signal=scrapy_signals.spider_closed)
    close(crawler, DISK_FULL)
