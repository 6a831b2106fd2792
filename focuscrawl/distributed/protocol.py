"""What the distributed scheduler and middlewares call of the crawl's shared parts (no Scrapy).

One Redis server (:class:`.frontier.RedisFrontier`, :class:`.hosts.RedisHosts`,
:class:`.robotscache.RedisRobotsCache`) and a Redis Cluster's shards (:class:`.sharded.
ShardedFrontier`, :class:`.shardedhosts.ShardedHosts`, :class:`.shardedhosts.ShardedRobots`)
implement the same protocols, so nothing above them asks which one it has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..core.frontier.protocol import Frontier

if TYPE_CHECKING:
    from ..core.frontier import Entry, Link
    from .frontier import ClusterStatus, Op
    from .hosts import SlotEnd
    from .robotscache import SharedRobots


class SharedFrontier(Frontier, Protocol):
    """The crawl's frontier in Redis, seen from one worker: :class:`Frontier`'s ``add``,
    ``crawled``, ``len()`` and ``describe``, and the worker's life in the cluster -- URLs
    leased (``pop``), counted (``downloaded``), settled once their page's outlinks are queued,
    put back when a worker dies (``reap``)."""

    worker: str
    #: the crawl's settings as stored in Redis (set by :meth:`configure`)
    config: dict[str, str]
    max_pages: int
    #: seconds until the best waiting server is due, after a ``pop(late=True)`` gave None
    wait: float | None

    def configure(self, options: dict[str, Any]) -> dict[str, str]:
        """Join (or start) the crawl with ``options``; the settings of this worker that differ
        from the crawl's, which apply.  ValueError if they decide the crawl order."""
        ...

    def add_many(self, links: Iterable[Link]) -> list[bool]: ...

    def apply(self, ops: Sequence[Op]) -> list[bool]:
        """Adds, page scores and settles, in order, in one round trip per shard."""
        ...

    def pop(self, *, late: bool = False, seeding: bool = False) -> tuple[int, Entry] | None:
        """Lease the next URL to this worker, or None."""
        ...

    def downloaded(self, lease: int, counted: bool, slot: SlotEnd | None = None) -> int:
        """The lease's download ended: its page number if ``counted``, 0 if not, -1 if lost."""
        ...

    def settle(self, leases: Iterable[int]) -> int: ...

    def release(self, leases: Iterable[int]) -> int: ...

    def orphans(self, known: Iterable[int]) -> int: ...

    def heartbeat(self, ttl: float) -> bool: ...

    def reap(self) -> int: ...

    def leave(self) -> None: ...

    def status(self) -> ClusterStatus: ...

    def clear(self) -> int: ...


class SharedHosts(Protocol):
    """Cluster-wide politeness: each server's slots, delay clock and holds."""

    def start(self, host: str, token: str, crawl_delay: float = 0.0,
              lease: int | None = None) -> float | None: ...

    def finish(self, host: str, token: str, elapsed: float | None, *,
               timed_out: bool = False) -> None: ...

    def end(self, slot: SlotEnd) -> None: ...

    def set_crawl_delay(self, host: str, seconds: float) -> None: ...

    def hold(self, host: str, seconds: float) -> int: ...

    def starts(self, host: str) -> list[tuple[float, str, str]]: ...

    def server(self, host: str) -> dict[str, str]: ...


class SharedRobotsCache(Protocol):
    """robots.txt fetched once per cluster: a lease on each, the outcome stored for all."""

    def claim(self, key: str, lease: float) -> SharedRobots | bool: ...

    def renew(self, key: str, lease: float) -> bool: ...

    def store(self, key: str, kind: str, status: int, body: bytes, ttl: float, *,
              failed: bool = False, keep: float = 0.0) -> int: ...

    def release(self, key: str) -> None: ...

    def entry(self, key: str) -> dict[str, bytes]: ...
