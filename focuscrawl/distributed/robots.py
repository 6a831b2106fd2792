"""RedisRobotsTxtMiddleware: a host's robots.txt is fetched once per cluster.

The single process's ``RobotsCache`` over a source, :class:`RedisRobots`, whose fetch goes
through Redis (``focuscrawl.distributed.robotscache``):
the first worker to need a host's robots.txt takes the cluster's lease on it and fetches it as
usual -- through the cluster-wide server slot of ``RedisPolitenessMiddleware``, spaced by the
server's delay and counted in its concurrency like any request -- then stores the raw outcome
in Redis with the same expiry a single process gives it (``FOCUS_ROBOTSTXT_TTL``, or
``FOCUS_ROBOTSTXT_ERROR_TTL`` of "disallow all" when unreachable).  The other workers read it
instead of fetching; while the lease is held they poll for the entry every
``FOCUS_REDIS_POLL`` seconds.  The fetching worker renews its lease every
``FOCUS_REDIS_WORKER_TTL / 4`` seconds; if it dies or freezes, the lease expires after
``FOCUS_REDIS_WORKER_TTL`` and a waiting worker fetches instead.  Each worker parses the file
and passes its Crawl-delay on as before.  Within a worker, requests for one host still share
one load (``RobotsCache``'s futures).  A server whose robots.txt answered 5xx/429 is held for
the whole cluster (``RedisHosts.hold``): its URLs go back to Redis and wait there, and POP ends
the holds once nothing is leased anywhere, no live worker's spider may still yield seeds and
nothing else can be handed out.  ``FOCUS_ROBOTSTXT_HOLDS`` counts the cluster's fetches in a
row that answered 5xx/429 (kept in Redis beside the shared outcome), whichever worker made
them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from scrapy.exceptions import IgnoreRequest, NotConfigured

from focuscrawl import config
from focuscrawl.seam.middlewares.robots import (
    NOT_HELD,
    RESPONSE,
    Fetched,
    Outcome,
    RobotsCache,
    RobotsFetcher,
    again,
)

from .connection import CrawlLost, RedisServices, Unavailable
from .robotscache import SharedRobots

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from .connection import RedisLink
    from .protocol import SharedHosts, SharedRobotsCache

logger = logging.getLogger(__name__)


class RedisRobots:
    """``RobotsSource`` of a cluster worker: robots.txt fetched once per cluster, servers held
    for the whole cluster."""

    def __init__(self, fetcher: RobotsFetcher, shared: SharedRobotsCache, hosts: SharedHosts,
                 link: RedisLink, stats: StatsCollector, *, poll: float, lease: float) -> None:
        self.fetcher = fetcher
        self.shared = shared
        self.hosts = hosts
        self.link = link
        self.stats = stats
        self.poll = poll
        self.lease = lease

    async def fetch(self, key: str, url: str) -> Outcome:
        waited = False
        while True:
            try:
                got = self.link.call(self.shared.claim, key, self.lease)
            except CrawlLost as e:
                raise IgnoreRequest(str(e)) from None
            except Unavailable:  # Redis is away (RedisLink logged it): wait for it
                got = False
            if isinstance(got, SharedRobots):  # fetched by the cluster: this worker's rules
                self.stats.inc_value("focus/robots/shared")
                return Outcome(Fetched(got.kind, got.status, got.body), got.ttl, got.failures)
            if got:  # this worker holds the lease: it fetches
                break
            if not waited:
                waited = True
                self.stats.inc_value("focus/robots/waited")
            await asyncio.sleep(self.poll)  # another worker is fetching it
        keeper = asyncio.ensure_future(self._keep_lease(key))
        try:
            fetched = await self.fetcher.download(key, url)
        except BaseException:
            keeper.cancel()
            self._quietly(f"robots.txt lease of {key} not given back", self.shared.release, key)
            raise
        keeper.cancel()
        ttl = self.fetcher.ttl_of(fetched)
        failed = fetched.kind == RESPONSE and fetched.unreachable  # answered 5xx/429
        failures = self._quietly(f"robots.txt of {key} not shared", lambda: self.shared.store(
            key, fetched.kind, fetched.status, fetched.body, ttl, failed=failed,
            keep=self.fetcher.ttl))
        return Outcome(fetched, ttl, failures)  # Redis away (None): this worker's count

    def hold_server(self, server: str, seconds: float) -> int:
        """Hold the server for the whole cluster (``RedisHosts.hold``: POP hands out none of its
        URLs meanwhile); with Redis away, no hold: the request is refused."""
        try:
            held = self._quietly(f"hold of {server} not set", self.hosts.hold, server, seconds)
        except CrawlLost:
            return NOT_HELD
        return NOT_HELD if held is None else int(held)

    def _quietly(self, what: str, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)`` through the worker's RedisLink; None if it could not be made: Redis
        away (RedisLink said so once; the lease expires on its own) or an error (one warning
        saying ``what`` did not happen).  This worker keeps its own rules either way."""
        try:
            return self.link.call(call, *args)
        except Unavailable:
            return None
        except RedisError as e:
            logger.warning("Redis: %s: %s", what, e)
            return None

    async def _keep_lease(self, key: str) -> None:
        while True:
            await asyncio.sleep(self.lease / 4)
            renewed = self._quietly(f"robots.txt lease of {key} not renewed", self.shared.renew,
                                    key, self.lease)
            if renewed is False:
                logger.warning("robots.txt lease of %s lost (this worker froze past "
                               "FOCUS_REDIS_WORKER_TTL?): another worker may fetch it", key)
                return


class RedisRobotsTxtMiddleware:
    """``DOWNLOADER_MIDDLEWARES``: in place of RobotsTxtMiddleware, at the same order (105): the
    same :class:`RobotsCache` over :class:`RedisRobots`."""

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        if not config.get(s, "FOCUS_ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        worker = RedisServices.of(crawler, self).redis_worker
        source = RedisRobots(RobotsFetcher(crawler), worker.robots, worker.hosts, worker.link,
                             crawler.stats, poll=config.get(s, "FOCUS_REDIS_POLL"),
                             lease=config.get(s, "FOCUS_REDIS_WORKER_TTL"))
        self.robots = RobotsCache(crawler, source)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisRobotsTxtMiddleware:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        return await self.robots.check(request)

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        return again(exception)
