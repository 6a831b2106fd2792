"""A continuous crawl's revisit schedule in Redis (focuscrawl.distributed.revisits), on a real
redis-server: workers racing for due pages, lapsed leases, and two workers following one
changing web."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import redis

from focuscrawl.core.refresh import RateEstimator, RevisitSchedule, Split
from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.distributed import shards
from focuscrawl.distributed.revisits import RevisitStore, SharedRevisits
from tests.support.distributed import Cluster
from tests.support.redis_cluster import RedisCluster
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture
from tests.support.revisits import CHANGING, SEED, expected_changes, fetch_times, site


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def worker(client: Any, prefix: str, clock: Clock, shards: int = 1) -> SharedRevisits:
    return SharedRevisits(RevisitStore(client, prefix, shards),
                          RevisitSchedule("uniform", RateEstimator(0.01)), Split(), clock=clock,
                          capacity=lambda hosts: dict.fromkeys(hosts, 1.0))


def test_two_workers_never_take_one_page_for_one_due_time(redis_server) -> None:
    clock = Clock()
    a = worker(redis.Redis.from_url(redis_server.url), "rv1", clock, shards=3)
    b = worker(redis.Redis.from_url(redis_server.url), "rv1", clock, shards=3)
    race_and_reap(a, b, clock)


def test_on_a_redis_cluster_each_shard_keeps_its_servers_pages() -> None:
    with RedisCluster(masters=3, replicas=0) as cl:
        clock = Clock()
        a = worker(shards.cluster_client(cl.url), "rvc", clock, shards=6)
        b = worker(shards.cluster_client(cl.url), "rvc", clock, shards=6)
        race_and_reap(a, b, clock)
        client = cl.client()
        held = {p: client.hlen(f"{p}:pages") for p in a.store.prefixes}
        assert sum(held.values()) == 40 and sum(n > 0 for n in held.values()) >= 3


def race_and_reap(a: SharedRevisits, b: SharedRevisits, clock: Clock) -> None:
    """Two workers race for 40 due pages, report them, race again, and one dies holding some:
    each page is taken once each time it is due."""
    urls = [f"http://h{i % 5}.test/p{i}.html" for i in range(40)]
    for url in urls:
        a.kept(url, 1.0, "s")
    a.tick()  # the allocation: every page due about 40 / 5 s after its visit
    clock.now += 1000
    taken: dict[str, list[tuple[str, float]]] = {"a": [], "b": []}

    def race(name: str, side: SharedRevisits) -> None:
        while True:
            page = side.take(prefer=True)
            if page is None:
                if side.store.earliest(clock.now) is None:
                    return
                continue  # the other worker took the one it saw: look again
            taken[name].append((page.url, page.last_visit))

    threads = [threading.Thread(target=race, args=(n, s)) for n, s in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    both = taken["a"] + taken["b"]
    assert sorted(u for u, _ in both) == sorted(urls)  # each due page once, by one worker
    assert taken["a"] and taken["b"]
    # reported back, each falls due again, and is taken once more
    for url, _ in taken["a"]:
        a.revisited(url, changed=False)
    for url, _ in taken["b"]:
        b.revisited(url, changed=True)
    clock.now += 1000
    again = [p.url for p in iter(lambda: a.take(prefer=True), None)]
    assert sorted(again) == sorted(urls)
    assert b.take(prefer=True) is None
    # a worker that dies with pages leased: they are due again once the lease lapses
    clock.now += a.lease_timeout + 1
    assert a.store.reap(clock.now) == len(urls)
    assert sorted(p.url for p in iter(lambda: b.take(prefer=True), None)) == sorted(urls)


def test_the_mirror_pools_every_workers_observations(redis_server) -> None:
    clock = Clock()
    a = worker(redis.Redis.from_url(redis_server.url), "rv2", clock)
    b = worker(redis.Redis.from_url(redis_server.url), "rv2", clock)
    a.kept("http://h.test/p.html", 1.0, "s")
    a.tick()
    for i in range(5):
        clock.now += 100
        page = a.take(prefer=True)
        assert page is not None
        a.revisited(page.url, signature=f"v{i}")
    b.tick()  # the other worker's mirror knows the page's versions and observations
    mirrored = b.schedule.get("http://h.test/p.html")
    assert mirrored.version == 6 and mirrored.stats.visits == 5
    assert b.schedule.estimator.crawl.visits == 5


def test_two_workers_follow_one_changing_web(redis_server, tmp_path: Path) -> None:
    with ServerProcess(pages=site(), changing=CHANGING) as srv:
        cluster = Cluster(srv, redis_server.url, tmp_path, "rvcrawl")
        try:
            cluster.start(2, "-a", f"seeds={SEED}", "-a", "revisit=true", "-a", "max_pages=20",
                          "-s", "FOCUS_DELAY=0.05", "-s", "CLOSESPIDER_TIMEOUT=10",
                          "-s", "FOCUS_REVISIT_PRIOR=5")
            assert cluster.wait() == [0, 0], cluster.tails()
        finally:
            cluster.kill_all()
        truth = srv.changes()
        rows = srv.read_log()
    items = cluster.exported(0) + cluster.exported(1)
    assert cluster.exported(0) and cluster.exported(1)
    lines: dict[str, list[dict]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i["fetched_at"]):
        lines[item["url"]].append(item)
    assert len(lines) <= 20
    for url, found in lines.items():  # one worker at a time: each version once, in order
        versions = [i["version"] for i in found if not i["gone"]]
        assert versions == list(range(1, len(versions) + 1)), (url, versions)
    exported = Counter({u: sum(i["changed"] for i in found) for u, found in lines.items()})
    assert +exported == +expected_changes(fetch_times(rows), truth)
    assert sum(exported.values()) >= 5
    assert sum(r["status"] == 304 for r in rows) > 0
