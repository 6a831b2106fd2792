"""The crawl's frontier on a Redis Cluster: which shard holds what (no Scrapy).

On a Redis Cluster (detected from the server: ``INFO cluster`` says ``cluster_enabled:1``) the
crawl's state is split into ``FOCUS_REDIS_SHARDS_PER_MASTER`` x masters *shards*.  A shard is a
whole one-server frontier (the same Lua scripts, the same keys) under its own prefix
``{<FOCUS_REDIS_KEY>s<i>}``: the braces are a Redis Cluster hash tag, so every key of a shard is
in one slot and every script touches one slot.  A server's URLs, queues, politeness state and
seen-set entries all live in shard ``crc32(server) mod shards``; a robots.txt in the shard of
its key.  What is global -- the crawl's configuration as the workers agreed it, MAX_PAGES (the
budget, ``budget.py``), the page numbers -- lives under ``{<FOCUS_REDIS_KEY>g}``.

Leases are numbered per shard from ``i * LEASE_BASE`` (set once, when the shard is created),
so a lease number names its shard and a server slot token ``L<lease>`` stays unique.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

if TYPE_CHECKING:
    from redis import Redis

#: shard i's leases are numbered from i * LEASE_BASE (exact in Lua's doubles up to 9000 shards)
LEASE_BASE = 10**12


def is_cluster(client: Redis) -> bool:
    """Whether ``client``'s server is a Redis Cluster node (False if it cannot be asked)."""
    try:
        return int(client.info("cluster").get("cluster_enabled", 0)) == 1
    except RedisError:
        return False


def cluster_client(url: str, params: dict[str, Any] | None = None) -> RedisCluster:
    """A cluster client from any node's URL.  During a failover (a master dead, its replica
    not yet promoted) commands fail with connection errors, CLUSTERDOWN or TRYAGAIN: it retries
    with backoff, refreshing the slot map, for about the cluster's node timeout and more."""
    kwargs: dict[str, Any] = {
        "retry": Retry(ExponentialBackoff(cap=1.0, base=0.05), 12,
                       supported_errors=(RedisConnectionError, RedisTimeoutError)),
        "socket_timeout": 5.0,
        "socket_connect_timeout": 2.0,
    }
    kwargs.update({k: v for k, v in (params or {}).items() if k not in ("url", "db")})
    url = url.rsplit("/", 1)[0] if url.count("/") > 2 else url  # a cluster has only db 0
    return RedisCluster.from_url(url, **kwargs)


def masters(client: RedisCluster) -> int:
    return len(client.get_primaries())


def shard_prefix(key: str, i: int) -> str:
    return "{" + key + f"s{i}" + "}"


def global_prefix(key: str) -> str:
    return "{" + key + "g}"


class Router:
    """The crawl's shards: their prefixes and which one holds a server, a robots.txt or a lease.
    The count is fixed when the crawl starts (in the global configuration): :meth:`set`."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0
        self.prefixes: list[str] = []
        self.glob = global_prefix(key)

    def set(self, count: int) -> None:
        self.count = count
        self.prefixes = [shard_prefix(self.key, i) for i in range(count)]

    def of_server(self, server: str) -> int:
        return zlib.crc32(server.encode("utf-8", "surrogatepass")) % self.count

    def of_lease(self, lease: int) -> int:
        return int(lease) // LEASE_BASE
