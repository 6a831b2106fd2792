"""Redis memory per URL of the distributed frontier (``bench/distributed.py --memory N``).

A real redis-server is filled through the crawl's own scripts: ``N`` queued URLs (``ADD_MANY``
in calls of a page's outlinks), then, under a second crawl key, ``fetched`` URLs added and
fetched to the end (``POP``, ``DOWNLOADED``, the page's score and ``SETTLE``), so that only
what a fetched URL leaves behind remains: its place in the seen-set and its score.  Bytes per
URL two ways: the sum of ``MEMORY USAGE`` over the crawl's keys (what the data takes), and
the growth of ``INFO memory``'s ``used_memory`` (with the allocator's and the keyspace's
overhead).  The URLs are synthetic but shaped like a real crawl's: many hosts, paths of a
few words, a parent page for every 20 links, a short anchor.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import redis

WORDS = ("regex pattern match engine syntax group river stone cloud garden paper window music "
         "travel market guide reference manual tutorial release notes index search install "
         "config module package library api class function method example howto faq").split()
BATCH = 500  # links per ADD_MANY call, leases per pipelined round
OUTLINKS = 20  # new links per fetched page (its parent)


def links(n: int, hosts: int, seed: int = 1) -> Iterator[Any]:
    """``n`` distinct links over ``hosts`` hosts: realistic lengths (URLs of 50-100 bytes)."""
    from focuscrawl.core.frontier import Link

    rng = random.Random(seed)
    names = [f"{rng.choice(('www', 'docs', 'blog', 'wiki'))}.{rng.choice(WORDS)}-"
             f"{rng.choice(WORDS)}{i}.example" for i in range(hosts)]
    parent = ""
    for i in range(n):
        host = names[rng.randrange(hosts)]
        words = "-".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        path = f"/{rng.choice(WORDS)}/{words}-{i}.html"
        if i % OUTLINKS == 0:  # the next page's outlinks
            parent = (f"https://{host}/{rng.choice(WORDS)}/{rng.choice(WORDS)}-"
                      f"{rng.randrange(n)}.html")
        yield Link(f"https://{host}{path}", host=host, parent=parent,
                   anchor=" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))),
                   parent_score=round(rng.betavariate(1.2, 6.0), 4),
                   depth=rng.randint(1, 6), keyword=rng.random() < 0.05)


def key_bytes(client: redis.Redis, prefix: str) -> tuple[int, int]:
    """The crawl's keys: how many, and the sum of their ``MEMORY USAGE`` (every element)."""
    total = count = 0
    keys: list[bytes] = []

    def flush() -> None:
        nonlocal total
        pipe = client.pipeline(transaction=False)
        for k in keys:
            pipe.memory_usage(k, samples=0)
        total += sum(v or 0 for v in pipe.execute())
        keys.clear()

    for key in client.scan_iter(match=prefix.replace("*", "\\*") + "*", count=5000):
        keys.append(key)
        count += 1
        if len(keys) >= 2000:
            flush()
    flush()
    return count, total


def used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def fill(frontier: Any, todo: Iterator[Any]) -> int:
    added = 0
    chunk: list[Any] = []
    for link in todo:
        chunk.append(link)
        if len(chunk) == BATCH:
            added += sum(frontier.add_many(chunk))
            chunk = []
    if chunk:
        added += sum(frontier.add_many(chunk))
    return added


def fetch_all(frontier: Any) -> int:
    """Lease every queued URL, count it fetched, report its score, settle it (pipelined)."""
    from focuscrawl.distributed.frontier import crawled_op, settle_op

    scripts, p, w = frontier._scripts, frontier.prefix, frontier.worker
    done = 0
    rng = random.Random(2)
    while True:
        pipe = frontier.client.pipeline(transaction=False)
        for _ in range(BATCH):
            scripts["POP"](args=[p, w, 0, 0], client=pipe)
        got = [r for r in pipe.execute() if r and r[0] not in (b"budget", b"wait")]
        if not got:
            return done
        pipe = frontier.client.pipeline(transaction=False)
        for r in got:
            scripts["DOWNLOADED"](args=[p, w, int(r[0]), 1], client=pipe)
        pipe.execute()
        ops: list[Any] = []
        for r in got:
            ops += crawled_op(r[1].decode(), round(rng.random(), 4), False)
            ops += settle_op(w, int(r[0]))
        frontier._run("ADD_MANY", *ops)
        done += len(got)


def measure(redis_url: str, n: int, fetched: int, hosts: int, strategy: str = "best-first",
            redis_config: dict[str, str] | None = None) -> dict[str, float]:
    """Fill the Redis at ``redis_url`` (best empty) and return bytes per queued and per
    fetched URL, by MEMORY USAGE and by used_memory.  ``redis_config``: Redis settings to set
    first (``CONFIG SET``; e.g. ``zset-max-listpack-entries``, the most members a sorted set
    keeps in the compact encoding)."""
    from focuscrawl.distributed.frontier import RedisFrontier

    client = redis.Redis.from_url(redis_url)
    for name, value in (redis_config or {}).items():
        client.config_set(name, value)
    options = {"strategy": strategy, "delay": 0, "concurrency": 10**6}
    out: dict[str, float] = {}
    for phase, count in (("queued", n), ("fetched", fetched)):
        if not count:
            continue
        prefix = f"mem-{phase}:"
        front = RedisFrontier(client, prefix, "w1")
        front.configure(options)
        front.heartbeat(3600)
        before_keys = key_bytes(client, prefix)[1]
        before = used(client)
        t0 = time.perf_counter()
        added = fill(front, links(count, hosts, seed=1 if phase == "queued" else 3))
        if phase == "fetched":
            added = fetch_all(front)
        keys, data = key_bytes(client, prefix)
        out[f"{phase}_urls"] = added
        out[f"{phase}_keys"] = keys
        out[f"{phase}_usage"] = (data - before_keys) / max(1, added)
        out[f"{phase}_used"] = (used(client) - before) / max(1, added)
        out[f"{phase}_s"] = time.perf_counter() - t0
    return out


def report(redis_url: str, n: int, fetched: int, hosts: int,
           redis_config: dict[str, str] | None = None) -> None:
    """Print :func:`measure`'s figures."""
    m = measure(redis_url, n, fetched, hosts, redis_config=redis_config)
    for name, value in (redis_config or {}).items():
        print(f"Redis {name} {value}")
    for phase in ("queued", "fetched"):
        if f"{phase}_urls" not in m:
            continue
        print(f"{phase}: {m[f'{phase}_urls']:,.0f} URLs over {hosts:,} hosts, "
              f"{m[f'{phase}_keys']:,.0f} keys: {m[f'{phase}_usage']:,.1f} B per URL by MEMORY "
              f"USAGE, {m[f'{phase}_used']:,.1f} B by used_memory ({m[f'{phase}_s']:.0f} s)")
