"""RedisPolitenessMiddleware: a server's concurrency and delay hold for the whole cluster.

The single process's politeness over a server state in Redis (``focuscrawl.distributed.hosts``):
just before the download, one atomic script starts the request only if fewer than
``FOCUS_CONCURRENCY_PER_SERVER`` requests to that server are active across all workers and the
server's delay since the last start (by any worker) has passed; otherwise the request waits,
polling every ``FOCUS_REDIS_POLL`` seconds while the server is full, or exactly the time left.
A leased request uses the slot the frontier reserved for it (token ``L<lease>``); others
(robots.txt) take one here.  Slots of a worker that dies stop counting when its heartbeat key
expires (an active one ``DOWNLOAD_TIMEOUT`` after its start).  robots.txt's Crawl-delay, which
``RobotsTxtMiddleware`` gives this worker's HostPolicy, is passed on to the cluster (the largest
any worker saw applies).  The end of a leased request's download frees its slot in the
scheduler's call that counts the page (``request_finished`` carries the ``SlotEnd``): one round
trip, not two.

A leased request whose lease is no longer this worker's (it froze past its heartbeat TTL and the
others requeued the URL) is dropped (``IgnoreRequest``): before its download starts, or, for a
download that was under way, its response (no item, no outlinks: the URL's new holder makes
them).  While Redis is unreachable requests wait here and the end of a download is kept for
when it is back (``connection.RedisLink``); once the crawl's keys are gone, requests are
dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest

from focuscrawl import config
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.meta import FINISHED, LEASE, LEASE_LOST, SERVER, STARTED, TOKEN
from focuscrawl.seam.middlewares.politeness import GcTuning, is_timeout, record_stats
from focuscrawl.seam.records import is_html
from focuscrawl.seam.services import FocusServices

from .connection import CrawlLost, RedisServices, Unavailable
from .hosts import LeaseLost, SlotEnd

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

MAX_WAIT = 1.0  # re-check at least this often: a server turning slow moves its next start


class RedisPolitenessMiddleware:
    """``DOWNLOADER_MIDDLEWARES``: in place of PolitenessMiddleware, at the same order (950)."""

    #: the distributed scheduler learns of a download's end (its slot, its page) from here
    sends_request_finished = True

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        services = FocusServices.of(crawler, self)
        self.policy = services.policy  # this worker's: robots.txt's Crawl-delay, the stats
        self.servers = services.servers
        self.gc = GcTuning(crawler)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)
        worker = RedisServices.of(crawler, self).redis_worker
        self.hosts = worker.hosts
        self.link = worker.link
        self.worker_id = worker.worker_id
        self.poll = config.get(crawler.settings, "FOCUS_REDIS_POLL")
        self._tokens = itertools.count(1)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisPolitenessMiddleware:
        return cls(crawler)

    def _server(self, request: Request) -> str:
        return request.meta.get(SERVER) or self.servers.key(request.url)

    def _spider_closed(self) -> None:
        record_stats(self.policy, self.crawler.stats)

    def _crawl_delay(self, server: str) -> float:
        state = self.policy.servers.get(server)
        return state.crawl_delay if state is not None else 0.0

    async def process_request(self, request: Request) -> None:
        meta = request.meta
        meta.pop(FINISHED, None)
        server = self._server(request)
        lease = meta.get(LEASE)
        token = f"L{lease}" if lease is not None else f"{self.worker_id}#{next(self._tokens)}"
        waited = False
        while True:
            try:
                wait = self.link.call(self.hosts.start, server, token,
                                      self._crawl_delay(server), lease)
            except CrawlLost as e:
                raise IgnoreRequest(str(e)) from None
            except LeaseLost as e:  # counted by the scheduler (focus/cluster/lease_lost)
                raise IgnoreRequest(f"{request.url}: {e} (another worker fetches it)") from None
            except Unavailable:
                wait = None  # Redis is away: wait for it (RedisLink logged it)
            if wait == 0:
                break
            waited = True
            await asyncio.sleep(self.poll if wait is None else min(wait, MAX_WAIT))
        meta[TOKEN] = token
        meta[STARTED] = time.monotonic()
        stats = self.crawler.stats
        stats.inc_value("focus/politeness/started")
        if waited:
            stats.inc_value("focus/politeness/waited")
        return None

    def process_exception(self, request: Request, exception: Exception) -> None:
        self._finish(request, None, timed_out=is_timeout(exception))
        return None

    def _finish(self, request: Request, status: int | None, *, timed_out: bool,
                html: bool = True) -> None:
        meta = request.meta
        if meta.get(FINISHED):
            return
        meta[FINISHED] = True
        server = self._server(request)
        token = meta.pop(TOKEN, None)
        started = meta.pop(STARTED, None)
        lease = meta.get(LEASE)
        slot = None
        if token is not None and started is not None:
            slot = SlotEnd(server, token, time.monotonic() - started, timed_out)
        elif lease is not None:  # dropped before it started: free the frontier's reservation
            slot = SlotEnd(server, f"L{lease}", None)
        if lease is not None:
            # the scheduler counts the page and frees the slot in one call (it takes the slot)
            self.crawler.signals.send_catch_log(
                focus_signals.request_finished, request=request, status=status, html=html,
                slot=slot,
            )
        if slot is not None and not slot.taken:
            self.link.write(self.hosts.end, slot)  # the slot must be freed: kept while away

    def process_response(self, request: Request, response: Response) -> Response:
        self._finish(request, response.status, timed_out=False, html=is_html(response))
        if request.meta.pop(LEASE_LOST, False):  # set by the scheduler at download end
            raise IgnoreRequest(f"{request.url}: this worker's lease was requeued while it was "
                                "frozen; another worker fetches it")
        return response
