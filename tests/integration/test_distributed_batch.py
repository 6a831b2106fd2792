"""Distributed mode, a page at a time: a page's score and outlinks reach Redis in one script call.

* ``ADD_MANY`` is ADD and CRAWLED looped: the same answers and the same Redis state as the calls
  one by one, for every strategy's rules (dedup, improve, MAX_BUFFER, Cho's promotions, force,
  payloads);
* the worker (scheduler + ``PageOutputMiddleware``) writes a page's outlinks once its output is
  all there -- one round trip, counted by Redis itself (``INFO commandstats``) -- and always
  before a lease is settled, a URL handed out or the worker closed; a Redis error keeps them.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from redis.exceptions import ResponseError
from scrapy import Request

from focuscrawl.core.frontier import Link
from focuscrawl.distributed.frontier import Op, RedisFrontier, add_op, crawled_op
from tests.support.distributed import HOSTS
from tests.support.distributed_batch import (
    fetch_one,
    open_worker,
    run_page,
    script_calls,
)
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture


# --------------------------------------------------------------------------- ADD_MANY = ADD
def dump(client: Any, prefix: str) -> dict[str, Any]:
    """Every key of a crawl, prefix removed, with its whole value (but the heartbeat times)."""
    out: dict[str, Any] = {}
    for key in client.scan_iter(match=prefix + "*"):
        name = key.decode()[len(prefix):]
        if name == "workers":
            continue
        kind = client.type(key).decode()
        if kind == "hash":
            out[name] = client.hgetall(key)
        elif kind == "zset":
            out[name] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            out[name] = client.smembers(key)
        elif kind == "list":
            out[name] = client.lrange(key, 0, -1)
        else:
            out[name] = client.get(key)
    return out


def pages_of_ops(seed: int, pages: int = 60) -> list[list[Op]]:
    """Per page: its score, then its outlinks (duplicates, better parents, keyword anchors,
    forced re-adds and stored requests among them)."""
    rng = random.Random(seed)
    urls = [f"http://{HOSTS[i % len(HOSTS)]}/p{i}" for i in range(40)]
    out: list[list[Op]] = [[add_op(Link(urls[0], host=HOSTS[0], keyword=True))]]
    for _ in range(pages):
        parent = rng.choice(urls)
        score, hot = round(rng.random(), 3), rng.random() < 0.2
        ops = [crawled_op(parent, score, hot)]
        for _ in range(rng.randint(0, 8)):
            url = rng.choice(urls)
            ops.append(add_op(Link(
                url, host=url.split("/")[2], anchor="a", parent=parent, parent_score=score,
                parent_hot=hot, depth=2, keyword=rng.random() < 0.15,
                force=rng.random() < 0.05,
                payload={"url": url, "method": "POST"} if rng.random() < 0.05 else None)))
        out.append(ops)
    return out


def one_by_one(f: RedisFrontier, ops: list[Op]) -> list[bool]:
    answers = []
    for op in ops:
        if op[0] == "a":
            answers.append(bool(f._run("ADD", *op[1:])))
        else:
            f._run("CRAWLED", *op[1:])
            answers.append(True)
    return answers


STRATEGIES = [
    ("breadth-first", {"max_buffer": 10}),
    ("cho", {"reorder": "score"}),
    ("cho-distance", {"reorder": "backlinks", "distance_limit": 2}),
    ("best-first", {"max_buffer": 12}),
    ("best-n-first", {"n": 4, "seed": 5}),
]


@pytest.mark.parametrize(("strategy", "options"), STRATEGIES, ids=[s for s, _ in STRATEGIES])
def test_add_many_answers_and_writes_what_add_does_one_by_one(redis_server, strategy, options):
    client = redis_server.client()
    single, many = (RedisFrontier(client, f"same:{strategy}:{how}:", "w1")
                    for how in ("one", "many"))
    for f in (single, many):
        f.configure({"strategy": strategy, "delay": 0, "concurrency": 1, **options})
        f.heartbeat(60)
    for i, page in enumerate(pages_of_ops(7)):
        assert many.apply(page) == one_by_one(single, page), f"page {i}"
        if i % 5 == 4:  # a lease now and then: the seen-set and batches take part
            got = [f.pop() for f in (single, many)]
            assert [g and g[1].url for g in got] == [g and g[1].url for g in got[:1]] * 2
            for f, g in zip((single, many), got, strict=True):
                if g is not None:
                    f.downloaded(g[0], True)
                    f.settle([g[0]])
    assert dump(client, single.prefix) == dump(client, many.prefix)
    assert single.status()["duplicates"] > 0


def test_add_many_refuses_a_malformed_list_before_writing(redis_server):
    f = RedisFrontier(redis_server.client(), "malformed:", "w1")
    f.configure({"strategy": "best-first"})
    good = add_op(Link("http://a.test/1", host="a.test"))
    with pytest.raises(ResponseError, match="bad operation"):
        f._run("ADD_MANY", *good, "a", "http://a.test/2")  # the second one is cut short
    assert len(f) == 0


def test_a_pages_outlinks_reach_redis_in_one_round_trip(redis_server):
    sched = open_worker(redis_server.url, "onetrip:")
    client = sched.worker.client
    sched.enqueue_request(Request("http://a.test/s.html"))
    request = fetch_one(sched)
    outlinks = run_page(sched, request, 100)
    client.config_resetstat()
    for r in outlinks[:-1]:
        sched.enqueue_request(r)
    assert script_calls(client) == 0  # kept: the page's output is not all there
    sched.enqueue_request(outlinks[-1])
    assert script_calls(client) == 1  # its last request: score + 100 links, one call
    assert len(sched.frontier) == 100
    assert sched.frontier.status()["pages"] == 1  # the page's score came with them
    assert sched.outlinks.pages.pending == {}
    sched.close("finished")


def test_outlinks_are_written_before_anything_that_depends_on_them(redis_server):
    sched = open_worker(redis_server.url, "before:")
    client = sched.worker.client
    client.config_resetstat()
    sched.enqueue_request(Request("http://a.test/s.html"))  # a seed: no page yields it
    assert len(sched.outlinks) == 1 and script_calls(client) == 0
    first = fetch_one(sched)  # handed out: the seed was written first
    assert first.url == "http://a.test/s.html"
    outlinks = run_page(sched, first, 3)
    for r in outlinks[:2]:
        sched.enqueue_request(r)  # one of the page's requests never reaches the scheduler
    assert len(sched.outlinks) == 3  # its score and two links, kept
    lease = next(iter(sched._requests))
    sched._settle_leases([lease])  # settling the page writes its outlinks first
    assert len(sched.outlinks) == 0 and len(sched.frontier) == 2
    assert sched.outlinks.pages.pending == {}  # the missing request is not waited for
    assert sched.frontier.status()["inflight"] == 0
    sched.enqueue_request(Request("http://b.test/late.html"))
    assert sched.has_pending_requests() and len(sched.outlinks) == 0
    sched.enqueue_request(Request("http://c.test/at-close.html"))
    sched.close("shutdown")  # a clean stop writes what is kept before leaving
    f = RedisFrontier(client, "before:", "probe")
    assert len(f) == 4


def test_a_redis_error_in_the_flush_keeps_the_links_and_the_lease(redis_server, monkeypatch):
    sched = open_worker(redis_server.url, "refused:")
    sched.enqueue_request(Request("http://a.test/s.html"))
    request = fetch_one(sched)
    outlinks = run_page(sched, request, 5)
    real = sched.frontier.apply
    refusals = []

    def refuse(ops: list[Op]) -> list[bool]:
        refusals.append(len(ops))
        raise ResponseError("OOM command not allowed when used memory > 'maxmemory'.")

    monkeypatch.setattr(sched.frontier, "apply", refuse)
    for r in outlinks:
        sched.enqueue_request(r)  # the page is done: its flush is refused, nothing raised
    assert refusals == [6] and len(sched.outlinks) == 6
    lease = next(iter(sched._requests))
    sched._settle_leases([lease])  # not settled: its outlinks are not in Redis
    assert lease in sched._requests and sched.frontier.status()["inflight"] == 1
    assert sched.next_request() is None  # nor anything handed out before them
    assert sched.has_pending_requests()  # and the worker does not go idle
    monkeypatch.setattr(sched.frontier, "apply", real)
    sched._settle_leases([lease])  # Redis takes them: then the lease is settled
    assert len(sched.outlinks) == 0 and len(sched.frontier) == 5
    st = sched.frontier.status()
    assert st["inflight"] == 0 and st["pages"] == 1
    assert sched.crawler.stats.get_value("focus/duplicates_or_dropped") is None
    sched.close("finished")


def test_the_batch_limit_and_one_call_per_link(redis_server):
    sched = open_worker(redis_server.url, "limit:", FOCUS_REDIS_BATCH=4)
    client = sched.worker.client
    client.config_resetstat()
    for i in range(10):
        sched.enqueue_request(Request(f"http://a.test/{i}.html"))
    assert script_calls(client) == 2 and len(sched.outlinks) == 2  # 4 + 4 written, 2 kept
    sched.close("shutdown")
    single = open_worker(redis_server.url, "limit1:", FOCUS_REDIS_BATCH=1)
    client.config_resetstat()
    for i in range(3):
        single.enqueue_request(Request(f"http://a.test/{i}.html"))
    assert script_calls(client) == 3 and not single.outlinks.pages.enabled
    single.close("shutdown")
