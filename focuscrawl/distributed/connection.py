"""One worker's link to the crawl in Redis, shared by its scheduler and politeness middleware.

:class:`RedisServices` owns it: ``focuscrawl.seam.services.FocusServices`` (the crawl's shared
parts,
a Scrapy extension) plus the worker, registered in FocusServices' place by
``settings.distributed`` and the Distributed add-on.

The connection comes from scrapy-redis's ``get_redis_from_settings`` (``REDIS_URL``,
``REDIS_PARAMS``..., so a scrapy-redis user's settings work as they are); a ``REDIS_URL``
environment variable (as deployment tools pass it) replaces the settings module's default, and
gives way to a ``-s REDIS_URL=...`` on the command line.  A worker is named
``<hostname>-<pid>-<random>``; the crawl's keys live under ``FOCUS_REDIS_KEY`` (default
``focuscrawl:<spider>:``), so two crawls sharing one Redis server stay apart.

While the crawl runs, the scheduler and the middlewares call Redis through the worker's
:class:`RedisLink`, the one place a lost connection is caught: one WARNING, a pause with
backoff, the writes that must not be lost kept and replayed, and a crawl whose keys vanished
(Redis back without persistence) recognised and stopped.  redis-py's own retries (which block
the event loop) are cut to one immediate retry unless ``REDIS_PARAMS`` gives ``retry``.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy.exceptions import NotConfigured
from scrapy.settings import get_settings_priority
from scrapy_redis.connection import get_redis_from_settings  # type: ignore[import-untyped]

from focuscrawl.config import RedisOptions
from focuscrawl.core.neardup import IndexUnavailable, NearDuplicateIndex
from focuscrawl.seam.services import FocusServices

from . import scripts, shards
from .client import Client
from .frontier import RedisFrontier
from .hosts import RedisHosts
from .known import KnownLinks
from .neardup import RedisIndex
from .outlinks import Outlinks
from .protocol import SharedFrontier, SharedHosts, SharedRobotsCache
from .robotscache import RedisRobotsCache
from .sharded import ShardedFrontier
from .shardedhosts import ShardedHosts, ShardedRobots

if TYPE_CHECKING:
    import numpy as np
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from focuscrawl.core.neardup import Layout

logger = logging.getLogger(__name__)


class Unavailable(Exception):
    """Redis cannot be reached now (the worker waits; :class:`RedisLink` logged it once)."""


class CrawlLost(Unavailable):
    """Redis answers but the crawl's keys are gone (restarted without persistence, deleted)."""


#: the error a Lua script returns when the crawl's ``cfg`` key is missing (``lua/check.lua``)
LOST_MARK = "FOCUSCRAWL_LOST"
RETRY_MAX = 2.0  # seconds between two attempts at most while Redis is down


class RedisLink:
    """The one place a worker's Redis calls go through while the crawl runs.

    * A lost connection (``ConnectionError``, ``TimeoutError``, a server still loading its
      data) makes the link *down*: one WARNING, then calls fail fast with :class:`Unavailable`
      (no Redis round trip) until the next attempt is due, backing off from
      ``FOCUS_REDIS_POLL`` to :data:`RETRY_MAX` seconds; the first call that succeeds logs one
      INFO line and the link is up again.  Callers skip what can wait (handing out URLs,
      starting a request) and keep the engine alive meanwhile.
    * :meth:`write`: a change that must reach Redis (a queued link, a page's score, the end of
      a download, a settled lease, a freed server slot) is kept, in order, while the link is
      down and replayed before any other call once it is back.
    * A script that finds the crawl's configuration gone (``LOST_MARK``: Redis came back
      empty) makes the link *lost* for good: one ERROR line, and every call raises
      :class:`CrawlLost`; the scheduler then stops the crawl (reason ``redis_crawl_lost``).
    * ``FOCUS_REDIS_OUTAGE_TIMEOUT`` seconds down (0: no limit): :attr:`gave_up`, and the
      scheduler stops the worker (reason ``redis_unavailable``); its leases stay in Redis for
      the other workers to requeue.
    """

    def __init__(self, url: str, *, retry: float = 0.1, give_up: float = 0.0) -> None:
        self.url = url
        self.retry = max(0.01, retry)
        self.give_up = give_up
        self.down_since: float | None = None
        self.recovered_at: float | None = None  # monotonic time Redis came back, if it did
        self.lost: str | None = None
        self.outages = 0
        self._next_try = 0.0
        self._backoff = self.retry
        self._pending: deque[tuple[Callable[..., Any], tuple[Any, ...],
                                   Callable[[Any], None] | None]] = deque()

    @property
    def up(self) -> bool:
        return self.lost is None and self.down_since is None and not self._pending

    @property
    def gave_up(self) -> bool:
        return (self.down_since is not None and self.give_up > 0
                and time.monotonic() - self.down_since >= self.give_up)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` after any write kept while Redis was down; raises
        :class:`Unavailable` (or :class:`CrawlLost`) instead of a redis error."""
        if self.lost is not None:
            raise CrawlLost(self.lost)
        if self.down_since is not None and time.monotonic() < self._next_try:
            raise Unavailable(f"Redis at {self.url} is unreachable")
        try:
            while self._pending:
                kept, kept_args, then = self._pending[0]
                result = kept(*kept_args)
                self._pending.popleft()
                if then is not None:
                    _answer(then, result)
            result = fn(*args)
        except (RedisConnectionError, RedisTimeoutError) as e:
            self._down(e)
            raise Unavailable(str(e)) from None
        except ResponseError as e:
            if LOST_MARK not in str(e):
                where = scripts.explain(str(e))  # the .lua file and line of a script's error
                if where != str(e):
                    raise ResponseError(where) from e
                raise
            self._lose()
            raise CrawlLost(self.lost) from None
        if self.down_since is not None:
            self._back()
        return result

    def write(self, fn: Callable[..., Any], *args: Any,
              then: Callable[[Any], None] | None = None) -> Any:
        """``fn(*args)`` now (its result, also passed to ``then``), or kept for when Redis is
        back (None; ``then`` gets the result then).  Dropped once the crawl is lost."""
        try:
            result = self.call(fn, *args)
        except CrawlLost:
            return None
        except Unavailable:
            self._pending.append((fn, args, then))
            return None
        if then is not None:
            then(result)
        return result

    def _down(self, error: Exception) -> None:
        now = time.monotonic()
        if self.down_since is None:
            self.down_since = now
            self.outages += 1
            self._backoff = self.retry
            logger.warning("Redis at %s is unreachable (%s): this worker pauses (starts no "
                           "download, keeps what it must write) and retries until it is back",
                           self.url, error)
        else:
            self._backoff = min(RETRY_MAX, self._backoff * 2)
        self._next_try = now + self._backoff

    def _back(self) -> None:
        now = time.monotonic()
        logger.info("Redis at %s is back after %.1f s: the crawl continues", self.url,
                    now - (self.down_since or now))
        self.down_since = None
        self.recovered_at = now

    def _lose(self) -> None:
        self.lost = ("the crawl's keys are gone from Redis (restarted without persistence, "
                     "or deleted)")
        self.down_since = None
        self._pending.clear()
        logger.error("focuscrawl distributed: %s at %s: this worker stops (redis_crawl_lost); "
                     "its pages so far are in its output. Start a new crawl, or restore Redis's "
                     "data and start the workers again", self.lost, self.url)


def _answer(then: Callable[[Any], None], result: Any) -> None:
    """A replayed write's callback: a failure is logged, not raised, or the writes kept after
    it would wait for the next call and the call that replayed them (maybe itself a write)
    would be lost."""
    try:
        then(result)
    except Exception:
        logger.exception("focuscrawl distributed: the callback of a write kept while Redis was "
                         "away failed")


class LinkedIndex:
    """The near-duplicate index asked through the worker's :class:`RedisLink`: while Redis is
    away the link fails fast (no blocking retry) and the page goes unchecked."""

    def __init__(self, index: NearDuplicateIndex, link: RedisLink) -> None:
        self.index = index
        self.layout = index.layout
        self.link = link

    def add(self, url: str, signature: np.ndarray) -> str | None:
        try:
            return self.link.call(self.index.add, url, signature)
        except Unavailable as e:
            raise IndexUnavailable(str(e)) from None

    def __len__(self) -> int:
        return len(self.index)


@dataclass
class Worker:
    client: Client
    prefix: str
    worker_id: str
    frontier: SharedFrontier
    hosts: SharedHosts
    robots: SharedRobotsCache
    link: RedisLink
    outlinks: Outlinks  # what the scheduler has not written yet (one script call per page)
    known: KnownLinks  # the URLs a link to which Redis would ignore (the spider drops it)


def worker_id() -> str:
    host = socket.gethostname().split(".")[0] or "worker"
    return f"{host}-{os.getpid()}-{secrets.token_hex(2)}"


def key_prefix(template: str, spider_name: str) -> str:
    prefix = template % {"spider": spider_name}
    if not prefix:
        raise NotConfigured("FOCUS_REDIS_KEY is empty")
    return prefix


def redis_settings(settings: BaseSettings, environ: Any = os.environ) -> BaseSettings:
    """The settings to connect with: ``REDIS_URL`` from the environment unless given as -s."""
    url = environ.get("REDIS_URL")
    if not url or (settings.getpriority("REDIS_URL") or 0) >= get_settings_priority("cmdline"):
        return settings
    copy = settings.copy()
    copy.set("REDIS_URL", url, priority="cmdline")
    return copy


def connect(settings: BaseSettings, spider_name: str) -> Worker:
    """A new worker of the crawl of ``spider_name``: one Redis round trip (``INFO cluster``:
    on a Redis Cluster node the frontier is sharded, ``shards.py``)."""
    client = get_redis_from_settings(redis_settings(settings))
    kwargs = client.connection_pool.connection_kwargs
    if "retry" not in settings.getdict("REDIS_PARAMS"):
        # redis-py retries 10 times with backoff, blocking the event loop; one quick retry
        # (a connection broken by a restart) then RedisLink takes over, without blocking
        kwargs["retry"] = Retry(NoBackoff(), 1)
    where = f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
    if kwargs.get("path"):
        where = str(kwargs["path"])
    o = RedisOptions.from_settings(settings)
    prefix = key_prefix(o.key, spider_name)
    wid = worker_id()
    link = RedisLink(where, retry=o.poll, give_up=o.outage_timeout)
    if shards.is_cluster(client):  # REDIS_URL names a node of a Redis Cluster: shard the crawl
        return _cluster_worker(settings, where, prefix, wid, link, o)
    frontier = RedisFrontier(client, prefix, wid)
    outlinks = Outlinks(frontier, link, o.batch)
    return Worker(client, prefix, wid, frontier, RedisHosts(client, prefix, wid),
                  RedisRobotsCache(client, prefix, wid), link, outlinks,
                  KnownLinks(o.known))


def _cluster_worker(settings: BaseSettings, where: str, key: str, wid: str, link: RedisLink,
                    o: RedisOptions) -> Worker:
    url = redis_settings(settings).get("REDIS_URL") or f"redis://{where}"
    client = shards.cluster_client(url, settings.getdict("REDIS_PARAMS"))
    frontier = ShardedFrontier(client, key, wid, shards.masters(client), o.cluster_wait)
    router = frontier.router
    return Worker(client, frontier.prefix, wid, frontier,
                  ShardedHosts(client, router, wid), ShardedRobots(client, router, wid),
                  link, Outlinks(frontier, link, o.batch), KnownLinks(o.known))


class RedisServices(FocusServices):
    """``EXTENSIONS`` of a distributed worker, in FocusServices' place: the crawl's shared parts
    and this process's worker (:attr:`redis_worker`), made on first use."""

    SWITCH_ON = ('switch distributed mode on with ADDONS = {"focuscrawl.distributed.addon.'
                 'Distributed": 10} or use the settings.distributed module')

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._redis_worker: Worker | None = None

    @property
    def redis_worker(self) -> Worker:
        if self._redis_worker is None:
            name = getattr(self.crawler.spidercls, "name", None) or "crawl"
            self._redis_worker = connect(self.settings, name)
        return self._redis_worker

    def near_duplicate_index(self, layout: Layout) -> NearDuplicateIndex:
        """The workers' one index, in Redis, asked through the worker's link (a Redis away
        leaves pages unchecked, never stalls the worker)."""
        worker = self.redis_worker
        name = getattr(self.crawler.spidercls, "name", None) or "crawl"
        key = key_prefix(RedisOptions.from_settings(self.settings).key, name)
        return LinkedIndex(RedisIndex(worker.client, key, layout), worker.link)


def feed_uri_params(params: dict[str, Any], spider: Spider) -> dict[str, Any]:
    """``FEED_URI_PARAMS``: adds ``%(worker)s`` so workers never write the same feed file."""
    worker = RedisServices.of(spider.crawler, "FEED_URI_PARAMS").redis_worker
    return {**params, "worker": worker.worker_id}
