"""One worker's link to the crawl in Redis, shared by its scheduler and politeness middleware.

:class:`RedisServices` owns it: ``focuscrawl.services.FocusServices`` (the crawl's shared parts,
a Scrapy extension) plus the worker, registered in FocusServices' place by
``settings.distributed`` and the Distributed add-on.

The connection comes from scrapy-redis's ``get_redis_from_settings`` (``REDIS_URL``,
``REDIS_PARAMS``..., so a scrapy-redis user's settings work as they are); a ``REDIS_URL``
environment variable (as deployment tools pass it) replaces the settings module's default, and
gives way to a ``-s REDIS_URL=...`` on the command line.  A worker is named
``<hostname>-<pid>-<random>``; the crawl's keys live under ``FOCUS_REDIS_KEY`` (default
``focuscrawl:<spider>:``), so two crawls sharing one Redis server stay apart.
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.settings import get_settings_priority
from scrapy_redis.connection import get_redis_from_settings

from ..services import FocusServices
from .frontier import RedisFrontier
from .hosts import RedisHosts
from .robotscache import RedisRobotsCache

if TYPE_CHECKING:
    from redis import Redis
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings


@dataclass
class Worker:
    client: Redis
    prefix: str
    worker_id: str
    frontier: RedisFrontier
    hosts: RedisHosts
    robots: RedisRobotsCache


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
    """A new worker of the crawl of ``spider_name`` (no Redis round trip yet)."""
    client = get_redis_from_settings(redis_settings(settings))
    prefix = key_prefix(settings.get("FOCUS_REDIS_KEY", "focuscrawl:%(spider)s:"), spider_name)
    wid = worker_id()
    return Worker(client, prefix, wid, RedisFrontier(client, prefix, wid),
                  RedisHosts(client, prefix, wid), RedisRobotsCache(client, prefix, wid))


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


def feed_uri_params(params: dict[str, Any], spider: Spider) -> dict[str, Any]:
    """``FEED_URI_PARAMS``: adds ``%(worker)s`` so workers never write the same feed file."""
    worker = RedisServices.of(spider.crawler, "FEED_URI_PARAMS").redis_worker
    return {**params, "worker": worker.worker_id}
