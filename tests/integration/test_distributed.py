"""Distributed mode: the Redis frontier, cluster-wide politeness and worker processes.

The frontier is checked against ``focuscrawl.core.frontier``'s classes (the same calls must give the
same URLs in the same order); the crawl is checked end to end with 2-3 ``scrapy crawl``
processes sharing a real redis-server, against a local multi-host server with latency, from the
server's own access log.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from focuscrawl.core.frontier import Link
from focuscrawl.demo.webserver import ServerProcess, analyze
from focuscrawl.distributed.addon import DEFAULTS, Distributed
from focuscrawl.distributed.connection import RedisLink, RedisServices, Unavailable
from focuscrawl.distributed.frontier import RedisFrontier, bloom_size, crawled_op, settle_op
from focuscrawl.distributed.hosts import LeaseLost, RedisHosts
from focuscrawl.distributed.pagemw import PageOutputMiddleware
from focuscrawl.distributed.politeness import RedisPolitenessMiddleware
from focuscrawl.seam.addon import FocusCrawl
from focuscrawl.seam.middlewares.politeness import PolitenessMiddleware
from focuscrawl.seam.services import FocusServices
from tests.support.distributed import (
    ADDON,
    CASES,
    DELAY,
    ROBOTS,
    SITE_HOSTS,
    Cluster,
    InRedis,
    Reference,
    fetched_pages,
    frontier_for,
    kill_one_holding_leases,
    random_web,
    reachable,
    requested,
    site,
    stat,
    virtual_crawl,
    wait_until,
)
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture


@pytest.mark.parametrize(("strategy", "options"), CASES,
                         ids=[f"{s}-{'-'.join(f'{k}{v}' for k, v in o.items())}" for s, o in CASES])
@pytest.mark.parametrize("web_seed", [1, 2])
@pytest.mark.parametrize("batched", [False, True], ids=["one-by-one", "a-page-a-call"])
def test_redis_frontier_decides_like_the_reference(redis_server, strategy, options, web_seed,
                                                   batched):
    web = random_web(web_seed)
    expected = virtual_crawl(Reference(strategy, **options), web, seed=web_seed)
    prefix = f"diff:{strategy}:{sorted(options.items())}:{web_seed}:{batched}:"
    redis_frontier = InRedis(redis_server.client(), prefix, strategy, batched=batched, **options)
    got = virtual_crawl(redis_frontier, web, seed=web_seed)
    assert got == expected
    fetched = sum(not u.startswith(("requeued", "left")) for u in got)
    assert fetched > 30
    if batched:  # one round trip per page for its score and outlinks (plus one for the seeds)
        calls = redis_frontier.calls
        assert calls["ADD"] == calls["CRAWLED"] == 0
        assert calls["ADD_MANY"] == fetched + 1


def test_max_pages_is_exact_with_concurrent_workers(redis_server):
    """8 workers pop, fetch and fail at once: exactly MAX_PAGES pages are counted, no URL is
    handed out twice, and a failed download gives its share of the budget back."""
    client = redis_server.client()
    prefix = "budget:"
    first = frontier_for(client, prefix, "w0", max_pages=25)
    for i in range(200):
        first.add(Link(f"http://s{i}.test/", host=f"s{i}.test"))
    counted: list[int] = []
    handed: list[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        f = frontier_for(redis_server.client(), prefix, f"w{n}", max_pages=25)
        rng = random.Random(n)
        while (got := f.pop()) is not None:
            lease, entry = got
            ok = rng.random() < 0.7
            number = f.downloaded(lease, ok)
            f.settle([lease])
            with lock:
                handed.append(entry.url)
                if ok:
                    counted.append(number)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(counted) == list(range(1, 26))  # 25 pages, each number given once
    assert len(handed) == len(set(handed)) > 25  # failures freed their budget for other URLs
    st = first.status()
    assert (st["fetched"], st["reserved"], st["inflight"]) == (25, 0, 0)
    assert st.done and not st.has_work and st["entries"] == 200 - len(handed)


def test_a_lease_whose_answer_was_lost_goes_back(redis_server):
    """A POP that Redis ran but whose reply never reached the worker (the connection broke)
    leaves a lease the worker does not know: ``orphans`` requeues it, and only it."""
    client = redis_server.client()
    f = frontier_for(client, "orphans:", "w1")
    for i in range(3):
        f.add(Link(f"http://o{i}.test/", host=f"o{i}.test"))
    known, _ = f.pop()
    _, entry = f.pop()  # as if its reply had been lost
    assert f.status()["inflight"] == 2
    assert f.orphans([known]) == 1
    st = f.status()
    assert (st["inflight"], st["entries"]) == (1, 2)
    again = [f.pop(), f.pop()]
    assert entry.url in {e.url for _, e in again}  # the orphan's URL is handed out again
    assert f.orphans([known, *(lease for lease, _ in again)]) == 0  # known leases stay


def reply_lost_once(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` whose first reply is lost: Redis runs it, the connection breaks before the
    answer (Redis killed between the two)."""
    lost = [True]

    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if lost:
            lost.pop()
            raise RedisConnectionError("Connection closed by server.")
        return result

    return call


@pytest.mark.parametrize("leased", [True, False], ids=["lease", "robots"])
def test_a_start_whose_answer_was_lost_is_not_waited_for(redis_server, leased):
    """A HOST_START that Redis ran but whose reply the broken connection lost: the worker asks
    again through its RedisLink when Redis is back and must be told it started (before, its
    own active slot answered 'no free slot' forever and the server was blocked for the whole
    crawl: test_redis_restarted_mid_crawl[persistence] stalled)."""
    client = redis_server.client()
    prefix = f"lost-start-{leased}:"
    f = frontier_for(client, prefix, "w1", delay=60)
    hosts = RedisHosts(client, prefix, "w1")
    f.add(Link("http://a.test/1", host="a.test"))
    lease: int | None = f.pop()[0] if leased else None
    token = f"L{lease}" if leased else "w1#1"
    link = RedisLink("test", retry=0.01)
    start_reply_lost = reply_lost_once(hosts.start)
    with pytest.raises(Unavailable):
        link.call(start_reply_lost, "a.test", token, 0.0, lease)
    time.sleep(0.02)  # the link's next attempt is due
    assert link.call(start_reply_lost, "a.test", token, 0.0, lease) == 0  # started: go on
    server = hosts.server("a.test")
    assert server["started"] == "1"  # one start, and its delay still holds for the others
    assert RedisHosts(client, prefix, "w2").start("a.test", "w2#1") is None
    hosts.finish("a.test", token, 0.01)
    assert client.hgetall(prefix + "hs:a.test") == {}


def test_a_failing_callback_of_a_kept_write_loses_nothing(redis_server, caplog):
    """The writes kept while Redis was away are replayed in order before the next call; one
    whose ``then`` raises must not stop the others nor the call that replays them (before,
    the exception left the later ones kept and dropped that call, itself maybe a write)."""
    client = redis_server.client()
    key = "kept-writes"
    link = RedisLink("test", retry=0.01)

    def refused() -> None:
        raise RedisConnectionError("Connection refused.")

    def boom(result: Any) -> None:
        raise ValueError(f"callback failed on {result}")

    with pytest.raises(Unavailable):
        link.call(refused)
    assert link.write(client.rpush, key, "a", then=boom) is None  # kept
    assert link.write(client.rpush, key, "b") is None
    time.sleep(0.02)  # the link's next attempt is due
    assert link.write(client.rpush, key, "c") == 3
    assert client.lrange(key, 0, -1) == [b"a", b"b", b"c"] and link.up
    assert "callback failed on 1" in caplog.text

def test_a_download_end_whose_answer_was_lost_is_answered_again(redis_server):
    """DOWNLOADED ran but its reply was lost: RedisLink sends it again once Redis is back, and
    the worker gets the same answer (before: -1, as if the lease had been reaped, and the
    page's response was dropped with its outlinks while Redis counted it fetched)."""
    client = redis_server.client()
    prefix = "lost-downloaded:"
    f = frontier_for(client, prefix, "w1")
    for host in ("a.test", "b.test"):
        f.add(Link(f"http://{host}/", host=host))
    (l1, e1), (l2, _) = f.pop(), f.pop()
    link = RedisLink("test", retry=0.01)
    answers: list[int] = []
    assert link.write(reply_lost_once(f.downloaded), l1, True, then=answers.append) is None
    time.sleep(0.02)  # the link's next attempt is due
    st = link.call(f.status)  # the kept write goes first
    assert answers == [1]  # its page number, not -1
    assert (st["fetched"], st["reserved"], st["inflight"]) == (1, 1, 2)  # counted once
    assert link.write(reply_lost_once(f.downloaded), l2, False, then=answers.append) is None
    time.sleep(0.02)
    st = link.call(f.status)
    assert answers == [1, 0] and (st["fetched"], st["reserved"]) == (1, 0)
    assert f.release([l1]) == 1  # requeued (a worker leaving): the record has no page number
    assert not client.hexists(f"{prefix}r:{e1.url}", "n") and f.status()["fetched"] == 0


def test_a_dead_workers_urls_go_back_to_their_places(redis_server):
    client = redis_server.client()
    prefix = "dead:"
    w1 = frontier_for(client, prefix, "w1")
    urls = [f"http://{h}/p{i}" for i in range(3) for h in ("a.test", "b.test")]
    for u in urls:
        w1.add(Link(u, host=u.split("/")[2]))
    (l1, e1), (l2, e2) = w1.pop(), w1.pop()  # one per server: a.test and b.test are now busy
    assert [e1.url, e2.url] == urls[:2] and w1.pop() is None
    assert w1.downloaded(l1, True) == 1  # fetched, outlinks not queued yet: not settled
    w2 = frontier_for(redis_server.client(), prefix, "w2")
    assert w2.reap() == 0 and w2.pop() is None  # w1 is alive: its servers stay busy
    assert w1.heartbeat(0.05)  # then w1 dies: no more heartbeats
    wait_until(lambda: not client.exists(prefix + "w:w1"))
    # fencing: a worker whose alive key expired gets no URL and may start no request
    assert w1.pop() is None and RedisHosts(client, prefix, "w1").start("c.test", "x") is None
    assert w2.status()["inflight"] == 2
    assert w2.reap() == 1
    st = w2.status()
    assert (st["fetched"], st["reserved"], st["inflight"], st["requeued"]) == (0, 0, 0, 2)
    order = []
    while (got := w2.pop()) is not None:
        order.append(got[1].url)
        w2.downloaded(got[0], True)
        w2.settle([got[0]])
    assert order == urls  # FIFO kept: the requeued URLs are first again
    assert not w1.heartbeat(60)  # w1 comes back: it learns it was declared dead
    assert w1.downloaded(l1, True) == -1 and w1.settle([l1, l2]) == 0  # its leases are gone
    # re-registered, it may not start what it leased before (fencing by lease, not only alive)
    with pytest.raises(LeaseLost):
        RedisHosts(client, prefix, "w1").start("a.test", f"L{l1}", lease=l1)


def test_server_limits_hold_across_workers(redis_server):
    client = redis_server.client()
    prefix = "hosts:"
    fronts = [frontier_for(client, prefix, f"w{n}", delay=0.3) for n in (1, 2, 3)]
    h1, h2, h3 = (RedisHosts(client, prefix, f"w{n}") for n in (1, 2, 3))
    assert h1.start("a.test", "t1") == 0
    assert h2.start("a.test", "t2") is None  # one connection per server, cluster-wide
    h1.finish("a.test", "t1", 0.01)
    wait = h2.start("a.test", "t2")
    assert wait is not None and 0.2 < wait <= 0.3  # the delay counts from w1's start
    wait_until(lambda: h2.start("a.test", "t2") == 0, timeout=1.0)
    h2.finish("a.test", "t2", 0.01)
    # a URL leased by w3 reserves a pending slot: no other worker gets that server...
    fronts[2].add(Link("http://b.test/1", host="b.test"))
    fronts[2].add(Link("http://b.test/2", host="b.test"))
    lease, _ = fronts[2].pop()
    assert fronts[1].pop() is None
    # ... but a request the frontier never leased (robots.txt) may start: only active counts
    assert h2.start("b.test", "robots") == 0
    assert h3.start("b.test", f"L{lease}") is None  # now b.test is active: the lease waits
    h2.finish("b.test", "robots", 0.01)
    wait_until(lambda: h3.start("b.test", f"L{lease}") == 0, timeout=1.0)
    # w3 dies while downloading: its slot stops counting when its alive key expires
    assert fronts[2].heartbeat(0.05)
    wait_until(lambda: not client.exists(prefix + "w:w3"))
    wait_until(lambda: h1.start("b.test", "t9") == 0, timeout=1.0)


def test_a_dead_workers_started_request_holds_its_server_for_the_download_timeout(redis_server):
    """A worker killed (or frozen past its TTL) right after starting a request: the server may
    still be answering it, so that server's slot counts until ``hold`` (DOWNLOAD_TIMEOUT) has
    passed since the start, even once the worker is reaped; its reserved, never started slots
    free at once.  (Before, a survivor started on that server as soon as the alive key expired:
    two requests in flight at the server in a loaded CI run of
    test_killing_a_worker_loses_no_url.)"""
    client = redis_server.client()
    prefix = "hold:"
    w1 = frontier_for(client, prefix, "w1", hold=2.0)
    w2 = frontier_for(redis_server.client(), prefix, "w2", hold=2.0)
    for host in ("a.test", "b.test"):
        w1.add(Link(f"http://{host}/1", host=host))
        w1.add(Link(f"http://{host}/2", host=host))
    (la, ea), (_, eb) = w1.pop(), w1.pop()
    assert {ea.host, eb.host} == {"a.test", "b.test"}
    h1, h2 = RedisHosts(client, prefix, "w1"), RedisHosts(client, prefix, "w2")
    started = time.monotonic()  # before the start: Redis times it a moment later (in ms)
    assert h1.start(ea.host, f"L{la}", lease=la) == 0  # started; eb's slot only reserved
    assert w1.heartbeat(0.05)  # then w1 dies
    wait_until(lambda: not client.exists(prefix + "w:w1"))
    assert w2.reap() == 1 and w2.status()["requeued"] == 2
    # the reserved slot went with the worker: eb's server is free at once
    assert h2.start(eb.host, "w2#1") == 0
    # the started one holds ea's server until 2 s after its start, reaped or not (a machine
    # slower than that between the start and here could only see it free)
    assert h2.start(ea.host, "w2#2") is None or time.monotonic() - started >= 2.0 - 0.002
    got = w2.pop()
    assert got is None or got[1].host != ea.host  # and the frontier leases nothing there
    wait_until(lambda: h2.start(ea.host, "w2#2") == 0, timeout=30.0)
    assert time.monotonic() - started >= 2.0 - 0.002  # Redis's clock counts whole ms


def test_slow_servers_and_crawl_delay_apply_cluster_wide(redis_server):
    client = redis_server.client()
    prefix = "slow:"
    frontier_for(client, prefix, "w1", delay=0.1, concurrency=4)
    hosts = RedisHosts(client, prefix, "w1")
    assert hosts.start("s.test", "a") == 0
    hosts.finish("s.test", "a", 6.0)  # slower than FOCUS_SLOW_SECONDS (5 s)
    state = hosts.server("s.test")
    assert state["slow"] == "1" and state["conc"] == "1" and state["sd"] == "12000"
    assert 11.5 < hosts.start("s.test", "b") <= 12.0  # Heritrix: 2 x 6 s after the fetch end
    assert hosts.start("c.test", "c") == 0
    hosts.set_crawl_delay("c.test", 2.5)  # robots.txt: from the last start on
    assert 2.0 < hosts.start("c.test", "d") <= 2.5
    assert hosts.start("d.test", "e", crawl_delay=40.0) == 0  # a worker's robots.txt said 40 s
    assert hosts.server("d.test")["cd"] == "30000"  # capped at FOCUS_MAX_DELAY


def test_workers_must_agree_on_the_crawl_order(redis_server):
    client = redis_server.client()
    first = RedisFrontier(client, "agree:", "w1")
    first.configure({"strategy": "best-n-first", "n": 16, "max_pages": 100, "delay": 1.0})
    other = RedisFrontier(client, "agree:", "w2")
    with pytest.raises(ValueError, match="max_pages: crawl has '100', this worker '50'"):
        other.configure({"strategy": "best-n-first", "n": 16, "max_pages": 50})
    differ = other.configure({"strategy": "best-n-first", "n": 16, "max_pages": 100, "delay": 2})
    assert differ == {"delay_ms": "1000"}  # politeness: the crawl's value applies
    with pytest.raises(ValueError, match="not available in distributed mode"):
        RedisFrontier(client, "agree2:", "w1").configure({"strategy": "distiller"})


def test_the_exact_seen_set_keeps_fingerprints_in_compact_buckets(redis_server):
    """What the crawl saw of a URL (handed out, learnt from) is one integer (a fingerprint and
    two state bits) in a set small enough for Redis's intset encoding: no URL string is left
    once a URL is fetched, one 8-byte entry."""
    client = redis_server.client()
    f = frontier_for(client, "fp:", "w1")
    urls = [f"http://h{i % 7}.test/a-fairly-long-path/page-{i}.html" for i in range(600)]
    f.add_many([Link(u, host=u.split("/")[2]) for u in urls])
    while (got := f.pop()) is not None:
        f.downloaded(got[0], True)
        f.apply([crawled_op(got[1].url, 0.5, False), settle_op("w1", got[0])])
    assert not any(f.add(Link(u, host=u.split("/")[2])) for u in urls)  # all seen
    assert f.add(Link("http://h1.test/new", host="h1.test"))
    left = [k.decode() for k in client.scan_iter(match="fp:*")]
    buckets = [k for k in left if k.startswith("fp:d:")]
    entries = [int(v) for k in buckets for v in client.smembers(k)]
    assert len(entries) == len(urls) and all(v % 4 == 3 for v in entries)  # both states
    assert {client.object("encoding", k) for k in buckets} == {b"intset"}
    assert not any(client.type(k) != b"set" for k in buckets)
    assert not [k for k in left if "page-" in k]  # no record of a fetched URL is left


def test_a_parents_url_is_stored_once_and_leaves_with_its_last_link(redis_server):
    """Queued links share their parent's URL (pu:<fp>, one a parent): every handed-out URL
    still names its parent, through a release and a MAX_BUFFER eviction, and no entry is left
    once no queued link points to it."""
    client = redis_server.client()
    f = frontier_for(client, "par:", "w1", strategy="best-first", max_buffer=5)
    a, b = "http://p.test/a-parent-page.html", "http://q.test/another/parent.html"
    links = [Link(f"http://h{i}.test/x{i}", host=f"h{i}.test", parent=a, parent_score=0.5)
             for i in range(3)]
    links += [Link("http://h9.test/y", host="h9.test", parent=b, parent_score=0.2),
              Link("http://h8.test/z", host="h8.test", parent=b, parent_score=0.1),
              Link("http://s.test/", host="s.test", parent_score=0.9)]
    f.add_many(links)  # the lowest-scored (z) is evicted: five queued

    def stored() -> list[bytes]:
        return sorted(client.get(k) or b"" for k in client.scan_iter(match="par:pu:*"))

    assert len(stored()) == 2 and all(v.endswith((a.encode(), b.encode())) for v in stored())
    got = [f.pop() for _ in range(2)]
    assert f.release([g[0] for g in got if g]) == 2
    assert len(stored()) == 2
    seen = []
    while (g := f.pop()) is not None:
        seen.append((g[1].url, g[1].parent, g[1].host))
    assert sorted(seen) == sorted((k.url, k.parent, k.host) for k in links
                                  if k.url != "http://h8.test/z")
    assert stored() == []


def test_a_record_rebuilds_its_server_from_its_url_only_when_they_agree(redis_server):
    f = frontier_for(redis_server.client(), "hst:", "w1")
    odd = [Link("http://m.test:81/p", host="m.test"), Link("http://e.test/q", host=""),
           Link("http://s.test/r", host="s.test")]
    f.add_many(odd)
    for _ in range(2):  # from the records, then from the leases released and queued again
        got = [f.pop() for _ in odd]
        assert sorted((g[1].url, g[1].host) for g in got if g) == sorted(
            (k.url, k.host) for k in odd)
        assert f.release([g[0] for g in got if g]) == 3


def test_a_crawl_stored_in_another_key_layout_is_refused(redis_server):
    client = redis_server.client()
    client.hset("old:cfg", mapping={"strategy": "breadth-first", "n": "1"})  # no layout: 1
    with pytest.raises(ValueError, match="key layout 1, this one reads layout 3"):
        RedisFrontier(client, "old:", "w1").configure({"strategy": "breadth-first"})


def test_bloom_filter_seen_set(redis_server):
    assert bloom_size(1000, 0.01) == (9586, 7)
    client = redis_server.client()
    f = frontier_for(client, "bloom:", "w1", bloom_capacity=1000, bloom_error=0.01)
    urls = [f"http://h{i % 7}.test/p{i}" for i in range(300)]
    for u in urls:
        assert f.add(Link(u, host=u.split("/")[2]))
    popped = 0
    while (got := f.pop()) is not None:
        f.downloaded(got[0], True)
        f.settle([got[0]])
        popped += 1
    assert popped == 300
    assert not any(f.add(Link(u, host=u.split("/")[2])) for u in urls)  # all seen
    assert not client.exists("bloom:done") and client.strlen("bloom:bloom") <= 9586 // 8 + 1
    unseen = [f"http://x.test/q{i}" for i in range(1000)]
    false_positives = sum(not f.add(Link(u, host="x.test")) for u in unseen)
    assert false_positives < 20  # 1 % of 1000 expected at capacity; far below capacity here


def test_the_addon_switches_like_the_settings_module():
    """A Scrapyd job's ``-s ADDONS`` names the distributed add-on alone: its worker has the
    parts of ``settings.distributed`` (every setting: tests/unit/test_activation.py)."""
    from tests.support.project import crawl_settings

    job = Settings()
    job.setmodule("settings", priority="project")
    job.set("ADDONS", {"focuscrawl.distributed.addon.Distributed": 10}, priority="cmdline")
    via_addon = crawl_settings(job)
    project = Settings()
    project.setmodule("settings.distributed", priority="project")
    module = crawl_settings(project)

    def middlewares(s: Settings, name: str = "DOWNLOADER_MIDDLEWARES") -> dict[Any, Any]:
        return {load_object(k): v for k, v in s.getdict(name).items() if v is not None}

    assert via_addon["SCHEDULER"] == module["SCHEDULER"]
    assert middlewares(via_addon) == middlewares(module)
    assert RedisPolitenessMiddleware in middlewares(module)
    assert PolitenessMiddleware not in middlewares(module)
    # the shared parts plus the worker's link to Redis, in the single-process extension's place
    assert middlewares(via_addon, "EXTENSIONS") == middlewares(module, "EXTENSIONS")
    # and the spider middleware that tells a worker a page's outlinks are all there
    assert (middlewares(via_addon, "SPIDER_MIDDLEWARES")
            == middlewares(module, "SPIDER_MIDDLEWARES"))
    assert PageOutputMiddleware in middlewares(module, "SPIDER_MIDDLEWARES")
    assert RedisServices in middlewares(module, "EXTENSIONS")
    assert FocusServices not in middlewares(module, "EXTENSIONS")
    for name in DEFAULTS:
        assert via_addon[name] == module[name], name


def test_a_worker_without_the_redis_extension_refuses_to_start_with_one_line():
    from types import SimpleNamespace

    from scrapy import Spider
    from scrapy.exceptions import CloseSpider
    from scrapy.utils.test import get_crawler

    from focuscrawl.distributed.scheduler import RedisFocusScheduler
    from focuscrawl.seam.signals import START_ERROR_STAT
    from tests.support.project import SCHEDULER_PARTS

    crawler = get_crawler(Spider, SCHEDULER_PARTS)  # FocusServices, not RedisServices
    crawler.engine = SimpleNamespace(_slot=None)
    sched = RedisFocusScheduler.from_crawler(crawler)
    spider = Spider("worker")
    spider.crawler = crawler
    sched.open(spider)
    assert sched.error == crawler.stats.get_value(START_ERROR_STAT)
    assert sched.error.startswith("RedisFocusScheduler needs "
                                  "focuscrawl.distributed.connection.RedisServices in EXTENSIONS")
    assert not sched.has_pending_requests() and sched.next_request() is None
    assert "focuscrawl.distributed.addon.Distributed" in sched.error
    with pytest.raises(CloseSpider) as closed:
        sched._spider_idle()
    assert closed.value.reason == "missing_component"
    sched.close("missing_component")


def test_both_addons_leave_one_services_extension_the_redis_one():
    settings = Settings()  # another project: focuscrawl's add-on, then the distributed one
    FocusCrawl().update_settings(settings)
    Distributed().update_settings(settings)
    extensions = {load_object(k) for k, v in settings.getdict("EXTENSIONS").items()
                  if v is not None}
    assert RedisServices in extensions and FocusServices not in extensions


@pytest.fixture
def cluster(request, redis_server, tmp_path):
    made: list[Cluster] = []

    def make(server: ServerProcess) -> Cluster:
        c = Cluster(server, redis_server.url, tmp_path, f"{request.node.name}:")
        made.append(c)
        return c

    yield make
    for c in made:
        c.kill_all()


def inflight_peak(arrivals: list[dict[str, Any]], killed: float) -> int:
    """The most requests in flight at once at a server, a request that its client abandoned
    (499) before ``killed`` (epoch seconds: a worker's SIGKILL, which closes its sockets) ending
    at the kill: the server counts it until it notices, after its simulated latency."""
    events = []
    for r in arrivals:
        end = r["time_epoch"] + r["duration_ms"] / 1000.0
        if r["status"] == 499 and r["time_epoch"] < killed:
            end = min(end, killed)
        events += [(r["time_epoch"], 1), (end, -1)]
    peak = now = 0
    for _, step in sorted(events):  # an end before an arrival at the same instant
        now += step
        peak = max(peak, now)
    return peak


def check_politeness(rows: list[dict[str, Any]], concurrency: int, hosts: RedisHosts,
                     shared: bool = False, killed: float | None = None) -> None:
    """Per server, robots.txt included.  From the server's log (independent of the crawler):
    never more than ``concurrency`` requests in flight.  From the crawl's own record
    (FOCUS_REDIS_START_LOG, Redis's clock), with no tolerance: every start at least FOCUS_DELAY
    after the previous one, whichever worker made it, and every request the server saw was
    started there.  (Arrival gaps at the server are not compared with the delay: a worker
    starved of CPU on a busy machine sends a request late, which shortens the next gap there;
    6 of 25 were short in one loaded run.)  With ``killed``, the in-flight count is rebuilt
    from the arrivals and ends, a killed worker's abandoned request ending at its kill."""
    interleaved = 0
    for host, rep in analyze(rows).items():
        arrivals = [r for r in rows if r["host"] == host]
        starts = hosts.starts(host)
        # on failure, the evidence: each request (arrival, ms, status, path, client's port)
        # and the cluster's starts, to tell a request the cluster never started from a late one
        peak = rep["max_inflight"] if killed is None else inflight_peak(arrivals, killed)
        assert peak <= concurrency, (host, rep, peak, [
            (round(r["time_epoch"], 3), r["duration_ms"], r["status"], r["path"],
             r["client"].rsplit(":", 1)[-1]) for r in arrivals], starts)
        # every request went through the cluster (a killed worker may start one and not send)
        assert len(starts) >= len(arrivals), host
        assert min(b[0] - a[0] for a, b in pairwise(starts)) >= DELAY - 0.0005, host
        interleaved += len({worker for _, worker, _ in starts}) > 1
    if shared:
        assert interleaved >= len(SITE_HOSTS) // 2, "the servers were not shared by workers"


@pytest.fixture(scope="module")
def small_site():
    with ServerProcess(pages=site(10, seed_delay_ms=3000), config={"defaults": {"delay_ms": 30},
                                               "hosts": {"h1.test": {"robots": ROBOTS}}}) as srv:
        yield srv


def test_three_workers_crawl_like_one(small_site, cluster, redis_server):
    """Breadth-first over a whole site: one single-process crawl, then three workers.  Each
    URL is fetched once, politely cluster-wide, and the fetched set is the single crawl's."""
    c = cluster(small_site)
    start = len(small_site.read_log())
    assert c.wait(c.start(1, "-a", "strategy=breadth-first", distributed=False)) == [0]
    middle = len(small_site.read_log())
    workers = c.start(3, "-a", "strategy=breadth-first")
    assert c.wait(workers) == [0, 0, 0], c.tails()
    rows = small_site.read_log()
    single, shared = requested(rows[start:middle]), requested(rows[middle:])
    # no URL handed out twice: a URL is requested again only as Scrapy's retry of a failed
    # download (a lost connection on a loaded machine), which the workers' stats count
    twice = [(r["host"] + r["path"], r["status"], r["duration_ms"], round(r["time_epoch"], 3))
             for r in rows[middle:] if shared.count(r["host"] + r["path"]) > 1]
    retried = sum(stat(c.log_text(i), "retry/count") for i in (1, 2, 3))
    assert len(shared) - len(set(shared)) <= retried, (twice, retried, c.tails())
    assert set(shared) == set(single) == reachable(10)
    check_politeness(rows[middle:], 1, RedisHosts(redis_server.client(), c.key, "probe"),
                     shared=True)
    exported = [c.exported(i) for i in (1, 2, 3)]
    items = [item for part in exported for item in part]
    assert sum(1 for part in exported if part) >= 2, "the crawl was not shared"
    urls = [i["url"] for i in items]
    assert len(urls) == len(set(urls))
    assert set(urls) == {i["url"] for i in c.exported(0)}  # the single crawl's items
    orders = [i["order"] for i in items]  # numbered cluster-wide; the 404 and PDF have none
    assert len(set(orders)) == len(orders) and set(orders) <= set(range(1, len(shared)))
    for i in (1, 2, 3):
        log = c.log_text(i)
        assert "The crawl is over for every worker" in log and "(finished)" in log
    st = RedisFrontier(redis_server.client(), c.key, "probe").status()
    assert (st["inflight"], st["reserved"], st["entries"], st["workers"]) == (0, 0, 0, 0)


def test_max_pages_holds_exactly_across_workers(small_site, cluster, redis_server):
    """Best-first, MAX_PAGES=25, two connections per server, a Bloom filter as seen-set."""
    c = cluster(small_site)
    start = len(small_site.read_log())
    args = ("-a", "strategy=best-first", "-a", "max_pages=25", "-s",
            "FOCUS_CONCURRENCY_PER_SERVER=2", "-s", "FOCUS_REDIS_BLOOM_CAPACITY=10000")
    workers = c.start(2, *args)
    # the third joins as a Scrapyd job would: the project's settings plus the add-on
    workers += c.start(1, *args, "-s", f"ADDONS={json.dumps({ADDON: 10})}", distributed=False)
    assert c.wait(workers) == [0, 0, 0], c.tails()
    assert "Focus frontier in Redis" in c.log_text(2)
    rows = small_site.read_log()[start:]
    pages = [r for r in rows if r["host"] + r["path"] in fetched_pages([r])]
    assert len(pages) == 25  # a redirect is a hop, an error status or a PDF no page: not counted
    assert len(set(requested(rows))) == len(requested(rows))
    check_politeness(rows, 2, RedisHosts(redis_server.client(), c.key, "probe"))
    items = [item for i in range(3) for item in c.exported(i)]
    html = [r for r in pages if r["status"] == 200 and r["path"].endswith(".html")]
    orders = [i["order"] for i in items]
    assert len(items) == len(html) and len(set(orders)) == len(orders)
    assert all(1 <= n <= 25 for n in orders)
    client = redis_server.client()
    assert client.exists(c.key + "bloom") and not client.exists(c.key + "done")
    st = RedisFrontier(client, c.key, "probe").status()
    assert (st["fetched"], st["inflight"], st["reserved"]) == (25, 0, 0) and st["entries"] > 0
    # a worker with another budget cannot join this crawl: it stops at once, fetching nothing
    before = len(small_site.read_log())
    late = c.start(1, "-a", "strategy=best-first", "-a", "max_pages=40")
    assert c.wait(late) == [1]  # a worker that could not start does not report success
    log = c.log_text(3)
    assert "max_pages: crawl has '25', this worker '40'" in log
    assert "(redis_settings_differ)" in log and len(small_site.read_log()) == before


@pytest.fixture(scope="module")
def larger_site():
    with ServerProcess(pages=site(20), config={"defaults": {"delay_ms": 40},
                                               "hosts": {"h1.test": {"robots": ROBOTS}}}) as srv:
        yield srv


def test_killing_a_worker_loses_no_url(larger_site, cluster, redis_server):
    """SIGKILL a worker holding leases mid-crawl: the survivors reap it after its heartbeat
    TTL, fetch its URLs again and finish the crawl; together they cover the whole site."""
    c = cluster(larger_site)
    client = redis_server.client()
    start = len(larger_site.read_log())
    workers = c.start(3, "-a", "strategy=breadth-first", "-s", "FOCUS_REDIS_WORKER_TTL=3")
    victim = kill_one_holding_leases(
        workers, lambda: [w.decode() for w in client.zrange(c.key + "workers", 0, -1)],
        lambda wid: bool(client.scard(c.key + "wl:" + wid)),
        ready=lambda: int(client.hget(c.key + "c", "fetched") or 0) >= 30)
    killed = time.time()  # the server log's clock
    survivors = [p for p in workers if p is not victim]
    assert c.wait(survivors) == [0, 0], c.tails()
    assert victim.wait() == -signal.SIGKILL
    rows = larger_site.read_log()[start:]
    assert set(requested(rows)) == reachable(20)  # nothing lost
    check_politeness(rows, 1, RedisHosts(client, c.key, "probe"), killed=killed)
    st = RedisFrontier(client, c.key, "probe").status()
    # >= 1: on a loaded machine a survivor can also miss its 3 s heartbeat and be reaped (and
    # then re-register); the crawl must still lose nothing, which the lines above check
    assert st["reaped"] >= 1 and st["requeued"] >= 1
    assert (st["inflight"], st["entries"], st["workers"]) == (0, 0, 0)
    assert st["fetched"] == len(fetched_pages(rows))  # un-counted when refetched


def test_redis_url_comes_from_the_environment_unless_given_on_the_command_line():
    from focuscrawl.distributed.connection import redis_settings

    env = {"REDIS_URL": "redis://10.0.0.7:6380/2"}
    module = Settings({"REDIS_URL": "redis://127.0.0.1:6379/0"}, priority="project")
    assert redis_settings(module, env)["REDIS_URL"] == env["REDIS_URL"]
    assert redis_settings(module, {})["REDIS_URL"] == "redis://127.0.0.1:6379/0"
    module.set("REDIS_URL", "redis://10.0.0.8:6379/0", priority="cmdline")
    assert redis_settings(module, env)["REDIS_URL"] == "redis://10.0.0.8:6379/0"


@pytest.mark.parametrize("work_conserving", [True, False])
def test_best_n_first_opens_the_next_batch_for_an_idle_server(redis_server, work_conserving):
    """The batch's URLs all sit on a.test, busy with the first of them; b.test idles with a
    queued URL.  Work-conserving (the default), the next batch is opened for it; with Pant's
    barrier (FOCUS_BEST_N_BARRIER) the worker gets nothing until a.test is free."""
    f = frontier_for(redis_server.client(), f"wc{int(work_conserving)}:", "w1",
                     strategy="best-n-first", n=4, work_conserving=work_conserving)
    for i in range(4):
        f.add(Link(f"http://a.test/{i}", host="a.test", parent="http://s/", parent_score=0.9))
    f.add(Link("http://b.test/0", host="b.test", parent="http://s/", parent_score=0.1))
    _, first = f.pop()
    assert first.host == "a.test"
    got = f.pop()
    if work_conserving:
        assert got is not None and got[1].url == "http://b.test/0"
        assert f.status()["batches"] == 2
    else:
        assert got is None and f.status()["batches"] == 1
