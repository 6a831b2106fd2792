"""ShardedFrontier: :class:`RedisFrontier`'s interface over the shards of a Redis Cluster.

Each shard is a whole one-server frontier (``shards.py``); this adapter routes every call to
the shard that holds its server or lease and keeps MAX_PAGES global (``budget.py``), so the
scheduler, the outlinks writer and the politeness middleware work unchanged.

* **pop**: the worker looks at three shards (its round-robin position and two at random) and
  asks first the one whose best queued URL is best (one pipelined read); if none of them has a
  server ready, the three best of the others.  The global order is so only approximate: a URL
  is handed out when it is the best of the shards looked at, not of the whole crawl
  (docs/distributed.md says by how much).
* **apply**: a page's outlinks go to their servers' shards, one script call per shard touched,
  the settled leases last, so a lease is never settled before its page's outlinks are queued.
* **status**: the shards' counters summed; the crawl is done only when two reads of every
  shard in a row agree and say so (a read of one shard after another is no snapshot).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .budget import Budget
from .frontier import ClusterStatus, Op, RedisFrontier
from .shards import LEASE_BASE, Router

if TYPE_CHECKING:
    from redis.cluster import RedisCluster

    from ..core.frontier import Entry
    from .hosts import SlotEnd

#: shards of a Redis Cluster per master (a crawl keeps the count it started with)
SHARDS_PER_MASTER = 4
#: shards a pop compares before it asks one
LOOK = 3
#: strategies that need the whole link graph in one place
REFUSED = ("cho-distance",)
# counters that only grow: a shard whose values are the same twice did not change between
MONOTONE = ("seq", "popped", "lease_seq", "requeued", "pages")


class ShardedFrontier:
    """The crawl's frontier over a Redis Cluster's shards, seen from one worker."""

    name = "redis-cluster"

    def __init__(self, client: RedisCluster, key: str, worker: str, masters: int,
                 wait_ms: int = 0) -> None:
        self.client = client
        self.wait_ms = wait_ms  # FOCUS_REDIS_CLUSTER_WAIT
        self.worker = worker
        self.router = Router(key)
        self.prefix = self.router.glob
        self.proposed = max(1, masters * SHARDS_PER_MASTER)
        self.main = RedisFrontier(client, self.router.glob, worker)  # config, workers
        self.budget = Budget(client, self.router.glob, worker)
        self.shards: list[RedisFrontier] = []
        self.config: dict[str, str] = {}
        self.max_pages = 0
        self.wait: float | None = None
        self._turn = random.randrange(1 << 30)
        self._rng = random.Random()
        self._page_shard: dict[str, int] = {}  # leased page URL -> its shard (for its score)
        self._lease_url: dict[int, str] = {}

    # -- configuration ---------------------------------------------------------------------
    def configure(self, options: dict[str, Any]) -> dict[str, str]:
        strategy = options.get("strategy")
        if strategy in REFUSED or (str(strategy).startswith("cho")
                                   and options.get("reorder") == "backlinks"):
            raise ValueError(
                f"strategy {strategy!r} (reorder {options.get('reorder') or 'none'!r}) needs the "
                "whole link graph in one Redis and is not available on a Redis Cluster; use one "
                "Redis server (REDIS_URL naming a non-cluster redis-server) or another strategy")
        differ = self.main.configure({**options, "shards": self.proposed})
        self.config = self.main.config
        self.max_pages = self.main.max_pages
        self.budget.max_pages = self.max_pages
        count = int(self.client.hget(self.router.glob + "cfg", "shards") or 0)
        if not count:
            self.client.hsetnx(self.router.glob + "cfg", "shards", self.proposed)
            count = int(self.client.hget(self.router.glob + "cfg", "shards") or 0)
        self.router.set(count)
        parts = {
            **options, "max_pages": 0,  # global: budget.py
            "max_buffer": math.ceil(int(options.get("max_buffer") or 0) / count),
            "bloom_capacity": math.ceil(int(options.get("bloom_capacity") or 0) / count),
        }
        self.shards = [RedisFrontier(self.client, p, self.worker) for p in self.router.prefixes]
        for i, shard in enumerate(self.shards):
            shard.configure(parts)
            if i:  # leases numbered from i * LEASE_BASE: a lease names its shard
                self.client.hsetnx(shard.prefix + "c", "lease_seq", i * LEASE_BASE)
        return differ

    # -- the frontier protocol ---------------------------------------------------------------
    def apply(self, ops: Sequence[Op]) -> list[bool]:
        if not ops:
            return []
        by_shard: dict[int, list[int]] = defaultdict(list)
        for n, op in enumerate(ops):
            by_shard[self._shard_of_op(op)].append(n)
        settling = {i for i, idx in by_shard.items() if any(ops[n][0] == "s" for n in idx)}
        out: list[bool] = [False] * len(ops)
        for i in sorted(by_shard, key=lambda i: i in settling):  # settles after every add
            idx = by_shard[i]
            for n, answer in zip(idx, self.shards[i].apply([ops[n] for n in idx]), strict=True):
                out[n] = answer
            self._durable(self.shards[i].prefix)
        self._forget(int(op[2]) for op in ops if op[0] == "s")
        return out

    def _forget(self, leases: Iterable[int]) -> None:
        for lease in leases:
            self._page_shard.pop(self._lease_url.pop(lease, ""), None)

    def _shard_of_op(self, op: Op) -> int:
        if op[0] == "a":
            return self.router.of_server(op[2])
        if op[0] == "c":
            return self._page_shard.get(op[1], 0)
        return self.router.of_lease(op[2])

    def add(self, link: Any) -> bool:
        return self.shards[self.router.of_server(link.host)].add(link)

    def add_many(self, links: Iterable[Any]) -> list[bool]:
        from .frontier import add_op
        return self.apply([add_op(link) for link in links])

    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None:
        self.shards[self._page_shard.get(url, 0)].crawled(url, score, hot)

    def __len__(self) -> int:
        return sum(st["entries"] for st in self._read())

    # -- leases ------------------------------------------------------------------------------
    def _tops(self, shards: list[int]) -> list[tuple[int, float] | None]:
        """Each shard's best queued URL as (queue rank, priority), None if it has none: one
        pipelined read (a round trip per node)."""
        queues = ("hot", "url") if self.config.get("cho") == "1" else ("main",)
        pipe = self.client.pipeline(transaction=False)
        for i in shards:
            for q in queues:
                pipe.zrange(self.shards[i].prefix + "i:" + q, 0, 0, withscores=True)
        replies = pipe.execute()
        out: list[tuple[int, float] | None] = []
        for k in range(len(shards)):
            got = replies[k * len(queues):(k + 1) * len(queues)]
            best = next(((rank, float(top[0][1])) for rank, top in enumerate(got) if top), None)
            out.append(best)
        return out

    def _order(self) -> tuple[list[int], list[int]]:
        """The LOOK shards looked at (the worker's turn and some at random), and those with
        URLs, best first."""
        n = len(self.shards)
        self._turn += 1
        first = self._turn % n
        looked = list(dict.fromkeys([first, *self._rng.sample(range(n), min(n, LOOK - 1))]))
        tops = self._tops(looked)
        ranked = sorted((t, i) for t, i in zip(tops, looked, strict=True) if t is not None)
        return looked, [i for _, i in ranked]

    def _others(self, looked: list[int]) -> list[int]:
        """The LOOK best other shards with URLs (not all: an idle worker polls, and the other
        workers look at other shards)."""
        rest = [i for i in range(len(self.shards)) if i not in looked]
        tops = self._tops(rest) if rest else []
        return [i for _, i in sorted((t, i) for t, i in zip(tops, rest, strict=True)
                                     if t is not None)][:LOOK]

    def pop(self, *, late: bool = False, seeding: bool = False) -> tuple[int, Entry] | None:
        self.wait = None
        if not self.budget.take():
            return None
        waits: list[float] = []
        looked, ranked = self._order()
        got = self._pop_from(ranked, late, seeding, waits)
        if got is None:
            got = self._pop_from(self._others(looked), late, seeding, waits)
        if got is None:
            self.wait = min(waits) if waits else None
            self.budget.give_back()
        return got

    def _pop_from(self, order: list[int], late: bool, seeding: bool,
                  waits: list[float]) -> tuple[int, Entry] | None:
        for i in order:
            got = self.shards[i].pop(late=late, seeding=seeding)
            if got is not None:
                self._durable(self.shards[i].prefix)
                lease, entry = got
                self.budget.attach(lease)
                self._page_shard[entry.url] = i
                self._lease_url[lease] = entry.url
                return got
            if (wait := self.shards[i].wait) is not None:
                waits.append(wait)
        return None

    def downloaded(self, lease: int, counted: bool, slot: SlotEnd | None = None) -> int:
        shard = self.shards[self.router.of_lease(lease)]
        number = shard.downloaded(lease, counted, slot)
        self._durable(shard.prefix)
        if number > 0:
            number = self.budget.counted(lease)
            self._durable(self.router.glob)
            return number
        self.budget.back([lease])
        return number

    def _durable(self, prefix: str) -> None:
        """With FOCUS_REDIS_CLUSTER_WAIT: until a replica of the slot's master has its writes
        (or the wait is over: a master without a live replica slows down, it does not stop)."""
        if self.wait_ms > 0:
            node = self.client.get_node_from_key(prefix + "cfg")
            self.client.execute_command("WAIT", 1, self.wait_ms, target_nodes=node)

    def _grouped(self, leases: Iterable[int]) -> dict[int, list[int]]:
        groups: dict[int, list[int]] = defaultdict(list)
        for lease in leases:
            groups[self.router.of_lease(lease)].append(lease)
        return groups

    def settle(self, leases: Iterable[int]) -> int:
        leases = list(leases)
        self._forget(leases)
        return sum(self.shards[i].settle(ls) for i, ls in self._grouped(leases).items())

    def release(self, leases: Iterable[int]) -> int:
        leases = list(leases)
        n = sum(self.shards[i].release(ls) for i, ls in self._grouped(leases).items())
        self.budget.back(leases)
        self._forget(leases)
        return n

    def orphans(self, known: Iterable[int]) -> int:
        groups = self._grouped(known)
        return sum(s.orphans(groups.get(i, [])) for i, s in enumerate(self.shards))

    # -- workers -------------------------------------------------------------------------------
    def heartbeat(self, ttl: float) -> bool:
        alive = self.main.heartbeat(ttl)
        for shard in self.shards:
            alive = shard.heartbeat(ttl) and alive
        if not alive:
            self.budget.forget()
        return alive

    def reap(self) -> int:
        dead = self.main.reap()
        for shard in self.shards:
            shard.reap()
        return dead

    def leave(self) -> None:
        for shard in self.shards:
            shard.leave()
        self.budget.leave()
        self.main.leave()

    def _read(self) -> list[ClusterStatus]:
        """Every shard's counters (what STATUS returns but its workers), pipelined: a round
        trip per node, not a script call per shard."""
        pipe = self.client.pipeline(transaction=False)
        for shard in self.shards:
            pipe.hgetall(shard.prefix + "c")
            pipe.llen(shard.prefix + "batch")
        replies = pipe.execute()
        out = []
        for k in range(len(self.shards)):
            counters = {key.decode(): int(v) for key, v in replies[2 * k].items()}
            counters["batch_len"] = int(replies[2 * k + 1])
            out.append(ClusterStatus(counters, 0))
        return out

    def status(self) -> ClusterStatus:
        reads = self._read()
        st = _summed(reads, self.max_pages, self.main.status()["workers"])
        if st.done:  # a consistent snapshot only if nothing changed between two reads
            again = self._read()
            same = all(a[k] == b[k] for a, b in zip(reads, again, strict=True) for k in MONOTONE)
            if not same:
                st = _summed(again, self.max_pages, st["workers"])
                st.counters["inflight"] = max(1, st["inflight"])  # not done: ask again later
        return st

    def describe(self) -> dict[str, int]:
        return RedisFrontier.describe(self)  # type: ignore[arg-type]

    def clear(self) -> int:
        n = 0
        for prefix in [self.router.glob, *self.router.prefixes]:
            for key in self.client.scan_iter(match=prefix.replace("{", "\\{")
                                             .replace("}", "\\}") + "*", count=1000):
                n += self.client.unlink(key)
        return n


def _summed(reads: list[ClusterStatus], max_pages: int, workers: int) -> ClusterStatus:
    total: dict[str, int] = defaultdict(int)
    for st in reads:
        for k, v in st.counters.items():
            total[k] += v
    total["workers"] = workers
    return ClusterStatus(dict(total), max_pages)
