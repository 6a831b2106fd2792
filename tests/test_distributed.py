"""Distributed mode: the Redis frontier, cluster-wide politeness and worker processes.

The frontier is checked against ``focuscrawl.frontier``'s classes (the same calls must give the
same URLs in the same order); the crawl is checked end to end with 2-3 ``scrapy crawl``
processes sharing a real redis-server, against a local multi-host server with latency, from the
server's own access log.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from focuscrawl.distributed.frontier import RedisFrontier
from focuscrawl.frontier import Link, make_frontier

from .redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

# --------------------------------------------------------------------------- the frontier alone
HOSTS = ["a.test", "b.test", "c.test", "d.test"]


class ParkMiller:
    """The Redis frontier's batch shuffle, for the reference frontier to use the same order."""

    def __init__(self, seed: int) -> None:
        self.state = seed % 2147483646 + 1

    def shuffle(self, items: list) -> None:
        for i in range(len(items), 1, -1):
            self.state = self.state * 48271 % 2147483647
            j = self.state % i
            items[i - 1], items[j] = items[j], items[i - 1]


def random_web(seed: int, pages: int = 80) -> dict[str, Any]:
    """Pages with outlinks (some with a keyword anchor), scores and hotness."""
    rng = random.Random(seed)
    urls = [f"http://{HOSTS[i % len(HOSTS)]}/p{i}" for i in range(pages)]
    return {
        "urls": urls,
        "links": {u: [(rng.choice(urls), rng.random() < 0.1) for _ in range(rng.randint(0, 6))]
                  for u in urls},
        "score": {u: round(rng.choice([0.0, 0.0, rng.random()]), 3) for u in urls},
        "hot": {u: rng.random() < 0.15 for u in urls},
    }


class Reference:
    """focuscrawl.frontier's strategy, driven like the Redis one."""

    def __init__(self, strategy: str, **options: Any) -> None:
        self.f = make_frontier(strategy, **options)
        if hasattr(self.f, "rng"):
            self.f.rng = ParkMiller(options.get("seed", 0))

    def add(self, link: Link) -> None:
        self.f.add(link)

    def pop(self, busy: set[str]) -> tuple[Any, str] | None:
        e = self.f.pop(lambda h: h not in busy)
        return None if e is None else (e, e.url)

    def done(self, handle: Any, crawled: tuple[str, float, bool] | None) -> None:
        if crawled is None:
            self.f.requeue(handle)
        else:
            self.f.crawled(*crawled)

    def size(self) -> int:
        return len(self.f)


class InRedis:
    """The Redis frontier; a busy server is one whose slot a live ghost worker holds."""

    def __init__(self, client: Any, prefix: str, strategy: str, **options: Any) -> None:
        self.client, self.prefix = client, prefix
        self.f = RedisFrontier(client, prefix, "w1")
        self.f.configure({"strategy": strategy, "delay": 0, "concurrency": 1, **options})
        self.f.heartbeat(60)
        client.set(prefix + "w:ghost", 1, px=60_000)

    def add(self, link: Link) -> None:
        self.f.add(link)

    def pop(self, busy: set[str]) -> tuple[Any, str] | None:
        for h in busy:
            self.client.hset(f"{self.prefix}hs:{h}", "ghost-slot", "ghost|a")
        got = self.f.pop()
        for h in busy:
            self.client.hdel(f"{self.prefix}hs:{h}", "ghost-slot")
        return None if got is None else (got[0], got[1].url)

    def done(self, lease: int, crawled: tuple[str, float, bool] | None) -> None:
        if crawled is None:
            assert self.f.release([lease]) == 1
            return
        assert self.f.downloaded(lease, True) > 0
        self.f.crawled(*crawled)

    def settle(self, lease: int) -> None:
        assert self.f.settle([lease]) == 1

    def size(self) -> int:
        return len(self.f)


def virtual_crawl(frontier: Any, web: dict[str, Any], seed: int, steps: int = 400) -> list[str]:
    """Cho's virtual crawler: pop, score, report outlinks; some servers busy, some fetches
    failing (requeued).  The random choices depend only on ``seed`` and the step."""
    rng = random.Random(seed)
    frontier.add(Link(web["urls"][0], host=HOSTS[0], keyword=True))
    frontier.add(Link(web["urls"][1], host=HOSTS[1]))
    order: list[str] = []
    for _ in range(steps):
        busy = {h for h in HOSTS if rng.random() < 0.3}
        got = frontier.pop(busy)
        if got is None and busy:
            got = frontier.pop(set())
        if got is None:
            break
        handle, url = got
        if rng.random() < 0.08:  # the download failed before any page came: requeue
            frontier.done(handle, None)
            order.append("requeued " + url)
            continue
        order.append(url)
        score, hot = web["score"][url], web["hot"][url]
        frontier.done(handle, (url, score, hot))
        for dst, kw in web["links"][url]:
            frontier.add(Link(dst, host=dst.split("/")[2], anchor="x", parent=url,
                              parent_score=score, parent_hot=hot, keyword=kw))
        if isinstance(frontier, InRedis):
            frontier.settle(handle)
    order.append(f"left {frontier.size()}")
    return order


CASES: list[tuple[str, dict[str, Any]]] = [
    ("breadth-first", {}),
    ("breadth-first", {"max_buffer": 12}),
    ("cho", {}),
    ("cho", {"reorder": "backlinks"}),
    ("cho", {"reorder": "score"}),
    ("cho-distance", {}),
    ("cho-distance", {"reorder": "backlinks", "distance_limit": 2}),
    ("best-first", {}),
    ("best-first", {"max_buffer": 15}),
    ("best-n-first", {"n": 5, "seed": 3}),
    ("best-n-first", {"n": 4, "max_buffer": 20, "seed": 9}),
]


@pytest.mark.parametrize(("strategy", "options"), CASES,
                         ids=[f"{s}-{'-'.join(f'{k}{v}' for k, v in o.items())}" for s, o in CASES])
@pytest.mark.parametrize("web_seed", [1, 2])
def test_redis_frontier_decides_like_the_reference(redis_server, strategy, options, web_seed):
    web = random_web(web_seed)
    expected = virtual_crawl(Reference(strategy, **options), web, seed=web_seed)
    prefix = f"diff:{strategy}:{sorted(options.items())}:{web_seed}:"
    got = virtual_crawl(InRedis(redis_server.client(), prefix, strategy, **options), web,
                        seed=web_seed)
    assert got == expected
    assert sum(not u.startswith(("requeued", "left")) for u in got) > 30
