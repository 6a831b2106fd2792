"""``bench/distributed.py --cluster``: the same crawls on one Redis and on a local Redis Cluster.

For each worker count, the crawl of ``bench/distributed.py`` against one redis-server, then
against a 3-master Redis Cluster (``--masters``; ``--replicas`` per master, 0 by default: the
figures are then the frontier's, not replication's) started here
(``tests/support/redis_cluster.py``), where the workers shard the frontier
(``focuscrawl/distributed/shards.py``).  Prints pages/s, its ratio to one worker on the same
backend and the cluster's to one Redis, script calls and Redis CPU ms per page (the cluster's:
all its nodes together), and the Redis memory per URL known.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from focuscrawl.demo.webserver import ServerProcess
from tests.support.redis_cluster import RedisCluster
from tests.support.redis_server import RedisServer


class NodesStats:
    """What ``bench/distributed.py``'s ``run`` asks of Redis, summed over a cluster's nodes."""

    def __init__(self, cluster: RedisCluster) -> None:
        self.nodes = [n.client() for n in cluster.nodes if n.alive]  # replicas' CPU too
        self.any = cluster.client()

    def config_resetstat(self) -> None:
        for n in self.nodes:
            n.config_resetstat()

    def info(self, section: str) -> dict[str, Any]:
        total: dict[str, Any] = {}
        for n in self.nodes:
            for k, v in n.info(section).items():
                if isinstance(v, dict):
                    d = total.setdefault(k, {})
                    for k2, v2 in v.items():
                        if isinstance(v2, (int, float)):
                            d[k2] = d.get(k2, 0) + v2
                elif isinstance(v, (int, float)):
                    total[k] = total.get(k, 0) + v
        return total


def order_error(cluster: RedisCluster, n: int = 4000, hosts: int = 400) -> tuple[float, float]:
    """How far a sharded pop is from the global best-first order: ``n`` URLs on ``hosts``
    servers with random scores, queued, then all leased by one client (no politeness limit);
    for each lease, the share of the URLs still queued that scored higher (0: the exact
    order).  The mean, and the share of leases that were not the best."""
    import bisect
    import random

    from focuscrawl.core.frontier import Link
    from focuscrawl.distributed import shards
    from focuscrawl.distributed.sharded import ShardedFrontier

    rng = random.Random(3)
    client = shards.cluster_client(cluster.url)
    f = ShardedFrontier(client, "order:", "w1", shards.masters(client))
    f.configure({"strategy": "best-first", "delay": 0, "concurrency": 10**6})
    f.heartbeat(600)
    scores = {}
    for i in range(n):
        url = f"http://h{i % hosts}.test/p{i}.html"
        scores[url] = round(rng.random(), 6)
        f.add(Link(url, host=f"h{i % hosts}.test", parent_score=scores[url]))
    left = sorted(scores.values())
    errors = []
    while (got := f.pop()) is not None:
        score = scores[got[1].url]
        higher = len(left) - bisect.bisect_right(left, score)
        errors.append(higher / len(left))
        left.pop(bisect.bisect_left(left, score))
    f.leave()
    return sum(errors) / len(errors), sum(e > 0 for e in errors) / len(errors)


def main(args: argparse.Namespace, run: Callable[..., dict], site: dict, everything: set[str],
         use_stats: Callable[[Callable[[str], Any]], None]) -> int:
    counts = [int(x) for x in args.workers.split(",")]
    logdir = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    rows: list[tuple[str, dict]] = []
    with RedisServer() as one, RedisCluster(masters=args.masters, replicas=args.replicas) as cl, \
            ServerProcess(pages=site, config={"defaults": {"delay_ms": args.latency_ms}}) as web:
        stats = NodesStats(cl)
        for n in counts:
            use_stats(redis.Redis.from_url)
            rows.append(("one Redis", run(n, web, one.url, f"one{n}:", args, logdir)))
            use_stats(lambda url: stats)
            rows.append((f"cluster x{args.masters}", run(n, web, cl.url, f"cl{n}:", args,
                                                          logdir)))
    base = {name: next(r["rate"] for nm, r in rows if nm == name and r["workers"] == counts[0])
            for name, _ in rows}
    one_rate = {r["workers"]: r["rate"] for nm, r in rows if nm == "one Redis"}
    print(f"\n{'redis':>12} {'workers':>7} {'pages':>6} {'twice':>5} {'pages/s':>8} "
          f"{'vs ' + str(counts[0]):>6} {'vs one':>6} {'max/host':>8} {'calls/page':>10} "
          f"{'redis ms/page':>13} {'B/URL':>6} {'cpu ms/page':>11}  union = site")
    ok_all = True
    for name, r in rows:
        ok = r["urls"] == everything and r["codes"] == [0] * len(r["codes"])
        ok_all &= ok
        print(f"{name:>12} {r['workers']:>7} {r['pages']:>6} {r['twice']:>5} {r['rate']:>8.1f} "
              f"{r['rate'] / base[name]:>5.2f}x {r['rate'] / one_rate[r['workers']]:>5.2f}x "
              f"{r['max_inflight']:>8} {r['calls']:>10.1f} {r['redis_ms']:>13.2f} "
              f"{r['bytes_per_url']:>6.0f} {r['worker_ms']:>11.2f}  {'yes' if ok else 'NO'}")
    with RedisCluster(masters=args.masters, replicas=0) as cl:
        mean, wrong = order_error(cl)
    print(f"\nsharded best-first order, one client, 4,000 URLs on 400 servers: mean rank error "
          f"{mean:.4f} (share of the queued URLs that scored higher than the one leased), "
          f"{wrong:.1%} of leases not the best")
    print(f"\nworker logs: {logdir}")
    return 0 if ok_all else 1
