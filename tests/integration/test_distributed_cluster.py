"""Distributed mode on a Redis Cluster: 3 masters + 3 replicas of real redis-server processes
(tests/support/redis_cluster.py), `scrapy crawl` workers, a local multi-host site."""

from __future__ import annotations

import signal
import time
from collections import Counter

import pytest

from focuscrawl.demo.webserver import ServerProcess, analyze
from focuscrawl.distributed import shards
from focuscrawl.distributed.sharded import ShardedFrontier
from focuscrawl.distributed.shardedhosts import ShardedHosts
from tests.support.distributed import (
    ROBOTS,
    SITE_HOSTS,
    Cluster,
    fetched_pages,
    kill_one_holding_leases,
    reachable,
    requested,
    site,
    stat,
)
from tests.support.redis_cluster import RedisCluster


@pytest.fixture(scope="module")
def web():
    with ServerProcess(pages=site(20, seed_delay_ms=2000), config={
            "defaults": {"delay_ms": 40}, "hosts": {"h1.test": {"robots": ROBOTS}}}) as srv:
        yield srv


@pytest.fixture
def redis_cluster():
    with RedisCluster(masters=3, replicas=1) as cl:
        yield cl


def probe(cl: RedisCluster, key: str) -> ShardedFrontier:
    client = shards.cluster_client(cl.url)
    f = ShardedFrontier(client, key, "probe", shards.masters(client))
    count = int(client.hget(f.router.glob + "cfg", "shards") or 0)
    f.router.set(count)
    from focuscrawl.distributed.frontier import RedisFrontier
    f.shards = [RedisFrontier(client, p, "probe") for p in f.router.prefixes]
    f.max_pages = int(client.hget(f.router.glob + "cfg", "max_pages") or 0)
    return f


def check_polite(rows, hosts: ShardedHosts) -> None:
    """From the server's log: at most one request in flight per server, robots.txt included,
    and every request started through the cluster (its shard's start log)."""
    for host, rep in analyze(rows).items():
        assert rep["max_inflight"] <= 1, (host, rep)
        arrivals = [r for r in rows if r["host"] == host]
        assert len(hosts.starts(host)) >= len(arrivals), host


def test_workers_share_a_sharded_frontier_and_max_pages_is_exact(web, redis_cluster, tmp_path):
    """Two workers, best-first, MAX_PAGES=40 over 12 shards: 40 pages exactly, each fetched
    once, one request in flight per server, robots.txt once per host."""
    key = "maxpages:"
    c = Cluster(web, redis_cluster.url, tmp_path, key)
    start = len(web.read_log())
    try:
        workers = c.start(2, "-a", "strategy=best-first", "-a", "max_pages=40")
        assert c.wait(workers, timeout=180) == [0, 0], c.tails()
    finally:
        c.kill_all()
    rows = web.read_log()[start:]
    assert len(fetched_pages(rows)) == 40, c.tails()
    urls = requested(rows)
    retried = sum(stat(c.log_text(i), "retry/count") for i in (0, 1))
    assert len(urls) - len(set(urls)) <= retried
    robots = Counter(r["host"] for r in rows if r["path"] == "/robots.txt")
    assert all(n == 1 for n in robots.values()), robots
    f = probe(redis_cluster, key)
    check_polite(rows, ShardedHosts(f.client, f.router, "probe"))
    items = [item for i in (0, 1) for item in c.exported(i)]
    assert all(c.exported(i) for i in (0, 1)), "the crawl was not shared"
    orders = [i["order"] for i in items]
    assert len(set(orders)) == len(orders) and all(1 <= n <= 40 for n in orders)
    st = f.status()
    assert (st["fetched"], st["inflight"], st["reserved"]) == (40, 0, 0) and st["entries"] > 0
    assert "Focus frontier in Redis ({maxpages:g})" in c.log_text(0)
    # a strategy that needs the whole link graph in one place is refused, with one line
    late = c.start(1, "-a", "strategy=cho-distance")
    assert c.wait(late) == [1]
    assert "not available on a Redis Cluster" in c.log_text(2)


def mid_crawl(redis_cluster, key, c, fetched=30):
    """The crawl's sharded frontier once ``fetched`` pages are counted (watching Redis)."""
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, c.tails()
        try:
            f = probe(redis_cluster, key)
            if f.router.count and f.status()["fetched"] >= fetched:
                return f
        except Exception:  # the crawl's keys are not there yet
            pass
        time.sleep(0.05)


@pytest.mark.parametrize("wait_ms", [0, 500])
def test_a_killed_master_loses_no_page(web, redis_cluster, tmp_path, wait_ms):
    """Breadth-first over the whole site, two workers; mid-crawl the master of the shard
    holding h0.test is killed and its replica takes over: the crawl completes, every URL
    fetched, none twice beyond the requests in flight (and Scrapy's retries); with
    FOCUS_REDIS_CLUSTER_WAIT too (every write on a replica before the call returns)."""
    key = f"failover{wait_ms}:"
    c = Cluster(web, redis_cluster.url, tmp_path, key)
    start = len(web.read_log())
    try:
        workers = c.start(2, "-a", "strategy=breadth-first",
                          "-s", f"FOCUS_REDIS_CLUSTER_WAIT={wait_ms}")
        f = mid_crawl(redis_cluster, key, c)
        shard = f.router.prefixes[f.router.of_server("h0.test")]
        slot = f.client.keyslot(shard + "cfg")
        dead = redis_cluster.owner(slot)
        redis_cluster.kill_master_of(shard + "cfg")
        assert redis_cluster.wait_failover(slot, dead) != dead
        assert c.wait(workers, timeout=240) == [0, 0], c.tails()
    finally:
        c.kill_all()
    rows = web.read_log()[start:]
    urls = requested(rows)
    assert set(urls) == reachable(20), c.tails()  # nothing lost
    retried = sum(stat(c.log_text(i), "retry/count") for i in (0, 1))
    twice = len(urls) - len(set(urls))
    assert twice <= retried + 2 * len(SITE_HOSTS)  # at most the requests in flight again
    for host, rep in analyze(rows).items():
        assert rep["max_inflight"] <= 1, (host, rep)
    st = probe(redis_cluster, key).status()
    assert (st["inflight"], st["entries"]) == (0, 0)


def test_a_killed_worker_loses_no_url(web, redis_cluster, tmp_path):
    """Three workers; one SIGKILLed mid-crawl while it holds leases: the others reap it in
    every shard after its heartbeat TTL, fetch its URLs again and finish; together they cover
    the whole site."""
    key = "killworker:"
    c = Cluster(web, redis_cluster.url, tmp_path, key)
    start = len(web.read_log())
    try:
        workers = c.start(3, "-a", "strategy=breadth-first", "-s", "FOCUS_REDIS_WORKER_TTL=3")
        f = mid_crawl(redis_cluster, key, c)
        ids = f.client.zrange(f.router.glob + "workers", 0, -1)
        victim = kill_one_holding_leases(
            workers, lambda: [w.decode() for w in ids],
            lambda wid: any(f.client.scard(p + "wl:" + wid) for p in f.router.prefixes))
        survivors = [p for p in workers if p is not victim]
        assert c.wait(survivors, timeout=240) == [0, 0], c.tails()
        assert victim.wait() == -signal.SIGKILL
    finally:
        c.kill_all()
    rows = web.read_log()[start:]
    assert set(requested(rows)) == reachable(20), c.tails()  # nothing lost
    st = probe(redis_cluster, key).status()
    assert st["reaped"] >= 1
    assert (st["inflight"], st["entries"], st["workers"]) == (0, 0, 0)
