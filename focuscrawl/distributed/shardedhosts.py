"""Cluster-wide politeness and robots.txt over a Redis Cluster's shards (no Scrapy).

:class:`RedisHosts` and :class:`RedisRobotsCache` as they are, one per shard; these route each
call to the shard holding the server (its slots, delays and holds live with its URLs, so
``POP`` sees them in one slot) or the robots.txt key (``shards.Router``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from .hosts import RedisHosts, SlotEnd
from .robotscache import RedisRobotsCache, SharedRobots

if TYPE_CHECKING:
    from redis.cluster import RedisCluster

    from .shards import Router

T = TypeVar("T")


class _PerShard(Generic[T]):
    """One-Redis objects, one per shard, made when a shard is first named."""

    def __init__(self, router: Router, make: Callable[[str], T]) -> None:
        self.router = router
        self.make = make
        self.parts: dict[int, T] = {}

    def of(self, server: str) -> T:
        i = self.router.of_server(server)
        part = self.parts.get(i)
        if part is None:
            part = self.parts[i] = self.make(self.router.prefixes[i])
        return part


class ShardedHosts:
    """:class:`RedisHosts`' interface; each server's state in its own shard."""

    def __init__(self, client: RedisCluster, router: Router, worker: str) -> None:
        self.client = client
        self.router = router
        self._of = _PerShard(router, lambda prefix: RedisHosts(client, prefix, worker)).of

    def start(self, host: str, token: str, crawl_delay: float = 0.0,
              lease: int | None = None) -> float | None:
        return self._of(host).start(host, token, crawl_delay, lease)

    def finish(self, host: str, token: str, elapsed: float | None, *,
               timed_out: bool = False) -> None:
        self._of(host).finish(host, token, elapsed, timed_out=timed_out)

    def end(self, slot: SlotEnd) -> None:
        self._of(slot.host).end(slot)

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        self._of(host).set_crawl_delay(host, seconds)

    def hold(self, host: str, seconds: float) -> int:
        return self._of(host).hold(host, seconds)

    def starts(self, host: str) -> list[tuple[float, str, str]]:
        return self._of(host).starts(host)

    def server(self, host: str) -> dict[str, str]:
        return self._of(host).server(host)


class ShardedRobots:
    """:class:`RedisRobotsCache`'s interface; each robots.txt in the shard of its key."""

    def __init__(self, client: RedisCluster, router: Router, worker: str) -> None:
        self._of = _PerShard(router,
                             lambda prefix: RedisRobotsCache(client, prefix, worker)).of

    def claim(self, key: str, lease: float) -> SharedRobots | bool:
        return self._of(key).claim(key, lease)

    def renew(self, key: str, lease: float) -> bool:
        return self._of(key).renew(key, lease)

    def store(self, key: str, kind: str, status: int, body: bytes, ttl: float, *,
              failed: bool = False, keep: float = 0.0) -> int:
        return self._of(key).store(key, kind, status, body, ttl, failed=failed, keep=keep)

    def release(self, key: str) -> None:
        self._of(key).release(key)

    def entry(self, key: str) -> dict[str, bytes]:
        return self._of(key).entry(key)
