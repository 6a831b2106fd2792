"""Distributed mode: a host's robots.txt is fetched once per cluster, under the server's slot.

From Redis alone: the lease, the stored entry and the lease of a worker that stops renewing it
(dead or frozen) expiring.  With two middlewares on one Redis: one fetch, the other worker
reads the shared file (and its Crawl-delay), the error TTL of an unreachable robots.txt, an
aborted fetch giving the lease back.  End to end: three ``scrapy crawl`` workers, checked from
the server's access log (arrival and end of every request): never two requests in flight on a
host, robots.txt included, and one robots.txt per host for the whole cluster.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Coroutine
from itertools import pairwise
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import TextResponse
from scrapy.settings import Settings
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.distributed.addon import Distributed
from focuscrawl.distributed.connection import RedisServices
from focuscrawl.distributed.frontier import RedisFrontier
from focuscrawl.distributed.hosts import RedisHosts
from focuscrawl.distributed.robots import RedisRobotsTxtMiddleware
from focuscrawl.distributed.robotscache import RedisRobotsCache, SharedRobots
from focuscrawl.seam.addon import FocusCrawl
from focuscrawl.seam.middlewares.robots import DISALLOW_ALL, RobotsTxtMiddleware, RobotsWait
from focuscrawl.seam.services import FocusServices
from tests.support.distributed import DELAY, Cluster, stat, wait_until
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

UA = "focuscrawl/0.1 (+test)"
KEY = "http://a.test:80"


# --------------------------------------------------------------------------- the lease alone
def alive_cache(client: Any, prefix: str, worker: str) -> RedisRobotsCache:
    frontier = RedisFrontier(client, prefix, worker)
    frontier.configure({"strategy": "best-first"})  # a crawl exists (every script checks)
    frontier.heartbeat(60)
    return RedisRobotsCache(client, prefix, worker)


def test_one_worker_fetches_the_others_read_and_a_dead_lease_expires(redis_server):
    client = redis_server.client()
    prefix = "rlease:"
    w1, w2, w3 = (alive_cache(client, prefix, f"w{n}") for n in (1, 2, 3))
    assert w1.claim(KEY, 0.3) is True  # the first asks: it fetches
    assert w2.claim(KEY, 10) is False and w3.claim(KEY, 10) is False  # the others wait
    assert w1.renew(KEY, 0.3) and not w2.renew(KEY, 10)  # only the holder renews
    # w1 freezes (or dies): it stops renewing, its lease expires and w2 takes over
    wait_until(lambda: not client.exists(prefix + "rl:" + KEY))
    assert w2.claim(KEY, 10) is True and w3.claim(KEY, 10) is False
    # w1 wakes up and stores its file anyway: harmless, and w2's lease stays w2's
    w1.store(KEY, "response", 200, b"User-agent: *\nDisallow: /a\n", 60)
    assert client.get(prefix + "rl:" + KEY) == b"w2"
    w2.store(KEY, "response", 200, b"User-agent: *\nDisallow: /b\n", 60)
    assert not client.exists(prefix + "rl:" + KEY)
    got = w3.claim(KEY, 10)
    assert isinstance(got, SharedRobots)
    assert (got.kind, got.status, got.body) == ("response", 200, b"User-agent: *\nDisallow: /b\n")
    assert 59 < got.ttl <= 60
    # an aborted fetch gives the lease back at once; the entry expires with its TTL
    assert w1.claim("http://b.test:80", 10) is True
    w1.release("http://b.test:80")
    assert w2.claim("http://b.test:80", 10) is True
    w2.store("http://b.test:80", "error", 0, b"", 0.05)
    wait_until(lambda: not client.exists(prefix + "rb:http://b.test:80"))
    assert w3.claim("http://b.test:80", 10) is True  # expired: fetched again
    # a worker declared dead (no alive key) fetches nothing until it re-registers
    dead = RedisRobotsCache(client, prefix, "ghost")
    assert dead.claim("http://c.test:80", 10) is False
    assert RedisFrontier(client, prefix, "w1").status()["robots_fetches"] == 5  # leases taken


# --------------------------------------------------------------------------- two middlewares
def as_deferred(coro: Coroutine[Any, Any, Any]) -> Deferred:
    return Deferred.fromFuture(asyncio.ensure_future(coro))


class FakeEngine:
    """engine.download_async stand-in: answers robots.txt when released, counts fetches."""

    def __init__(self, body: bytes = b"", status: int = 200) -> None:
        self.body, self.status = body, status
        self.calls: list[str] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def download_async(self, request: Request) -> TextResponse:
        self.calls.append(request.url)
        self.started.set()
        await self.release.wait()
        return TextResponse(request.url, status=self.status, body=self.body, request=request)


def worker_mw(redis_url: str, prefix: str, engine: FakeEngine, **settings: Any
              ) -> RedisRobotsTxtMiddleware:
    crawler = get_crawler(settings_dict={
        "EXTENSIONS": {RedisServices: 0}, "USER_AGENT": UA, "REDIS_URL": redis_url,
        "FOCUS_REDIS_KEY": prefix, "FOCUS_REDIS_POLL": 0.01, **settings})
    crawler.engine = engine
    mw = RedisRobotsTxtMiddleware(crawler)
    worker = RedisServices.of(crawler).redis_worker
    worker.frontier.configure({"strategy": "best-first"})
    worker.frontier.heartbeat(60)
    return mw


async def outcome(mw: RobotsTxtMiddleware, url: str) -> str:
    try:
        await mw.process_request(Request(url))
    except IgnoreRequest:
        return "refused"
    return "allowed"


@pytest_twisted.ensureDeferred
async def test_workers_share_one_fetch_its_rules_and_its_crawl_delay(redis_server) -> None:
    async def scenario() -> None:
        prefix = "rshare:"
        first = FakeEngine(b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n")
        first.release.clear()
        second = FakeEngine(b"User-agent: *\nDisallow: /\n")  # never asked
        a = worker_mw(redis_server.url, prefix, first)
        b = worker_mw(redis_server.url, prefix, second)
        on_a = asyncio.ensure_future(outcome(a, "http://a.test/private/1.html"))
        await first.started.wait()  # a holds the lease and is fetching
        on_b = [asyncio.ensure_future(outcome(b, f"http://a.test/{p}/2.html"))
                for p in ("private", "public")]
        while b.stats.get_value("focus/robots/waited") is None:  # b finds the lease taken
            await asyncio.sleep(0.01)
        assert not any(t.done() for t in on_b)  # and decides nothing before the rules come
        first.release.set()
        assert await on_a == "refused"
        assert await asyncio.gather(*on_b) == ["refused", "allowed"]
        assert first.calls == ["http://a.test/robots.txt"] and second.calls == []
        assert b.stats.get_value("focus/robots/waited") == 1
        assert b.stats.get_value("focus/robots/shared") == 1
        assert b.stats.get_value("focus/robots/requests") is None
        # the Crawl-delay reaches b's policy (and through it the cluster) as if b had fetched
        assert FocusServices.of(b.crawler).policy.current_delay("a.test") == 2.0
        assert a.robots.rules[KEY].expires - a.robots.clock() == pytest.approx(86400, abs=5)
        assert b.robots.rules[KEY].expires - b.robots.clock() == pytest.approx(86400, abs=5)

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_an_unreachable_robots_txt_is_shared_with_the_error_ttl(redis_server) -> None:
    async def scenario() -> None:
        prefix = "runreach:"
        down = FakeEngine(b"busy", status=503)
        a = worker_mw(redis_server.url, prefix, down, RETRY_TIMES=1)
        b = worker_mw(redis_server.url, prefix, FakeEngine())
        assert await outcome(a, "http://a.test/x.html") == "refused"
        assert down.calls == ["http://a.test/robots.txt"] * 2  # one retry, by the fetcher
        assert await outcome(b, "http://a.test/y.html") == "refused"
        assert b.crawler.engine.calls == []
        assert b.robots.rules[KEY].kind == DISALLOW_ALL
        assert b.robots.rules[KEY].expires - b.robots.clock() == pytest.approx(600, abs=5)
        assert 595_000 < redis_server.client().pttl(prefix + "rb:" + KEY) <= 600_000

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_the_holds_in_a_row_are_counted_for_the_whole_cluster(redis_server) -> None:
    """FOCUS_ROBOTSTXT_HOLDS=2: robots.txt answers 503 and the entry expires at once; the two
    workers take turns to fetch it.  The third fetch in a row is past the limit whichever
    worker makes it (counted per worker, a's second fetch would be its own second: held
    again); an answer that is not 5xx starts the count again."""
    async def scenario() -> None:
        prefix = "rholds:"
        client = redis_server.client()
        down = {"FOCUS_ROBOTSTXT_HOLDS": 2, "RETRY_ENABLED": False,
                "FOCUS_ROBOTSTXT_ERROR_TTL": 0.05}
        a = worker_mw(redis_server.url, prefix, FakeEngine(b"busy", status=503), **down)
        b = worker_mw(redis_server.url, prefix, FakeEngine(b"busy", status=503), **down)

        async def turn(mw: RobotsTxtMiddleware) -> str:
            own = mw.robots.rules.get(KEY)
            while client.exists(prefix + "rb:" + KEY) or own and own.expires > mw.robots.clock():
                await asyncio.sleep(0.01)  # the cluster's entry and the worker's rules expire
            try:
                await mw.process_request(Request("http://a.test/x.html"))
            except RobotsWait:
                return "held"
            except IgnoreRequest:
                return "refused"
            return "allowed"

        assert [await turn(a), await turn(b), await turn(a)] == ["held", "held", "refused"]
        assert a.crawler.engine.calls == ["http://a.test/robots.txt"] * 2
        assert b.crawler.engine.calls == ["http://a.test/robots.txt"]
        assert (a.robots.rules[KEY].failures, b.robots.rules[KEY].failures) == (3, 2)
        assert client.hget(prefix + "rb:" + KEY, "f") == b"3"
        b.crawler.engine.status = 404  # the server answers again: no rules, and no count
        assert await turn(b) == "allowed"
        assert not client.exists(prefix + "rf:" + KEY)
        a.crawler.engine.status = 503
        # a's own rules expire too: it reads b's entry ...
        a.robots.rules[KEY].expires = a.robots.clock()
        assert await a.process_request(Request("http://a.test/y.html")) is None
        assert len(a.crawler.engine.calls) == 2  # ... and fetches nothing

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_an_aborted_fetch_gives_the_lease_to_the_next_worker(redis_server) -> None:
    async def scenario() -> None:
        prefix = "rabort:"
        stuck = FakeEngine()
        stuck.release.clear()
        a = worker_mw(redis_server.url, prefix, stuck)
        b = worker_mw(redis_server.url, prefix, FakeEngine(b"User-agent: *\nDisallow: /\n"))
        on_a = asyncio.ensure_future(outcome(a, "http://a.test/x.html"))
        await stuck.started.wait()
        on_a.cancel()  # a's crawl stops while its robots.txt is in flight
        with pytest.raises(asyncio.CancelledError):
            await on_a
        assert not redis_server.client().exists(prefix + "rl:" + KEY)
        assert await outcome(b, "http://a.test/x.html") == "refused"
        assert b.crawler.engine.calls == ["http://a.test/robots.txt"]

    await as_deferred(scenario())


def test_the_cluster_robots_middleware_takes_the_single_ones_place():
    from tests.support.project import crawl_settings

    project = Settings()
    project.setmodule("settings.distributed", priority="project")
    module = crawl_settings(project)
    via_addon = Settings()
    FocusCrawl().update_settings(via_addon)
    Distributed().update_settings(via_addon)
    for s in (module, via_addon):
        mws = {load_object(k): v for k, v in s.getdict("DOWNLOADER_MIDDLEWARES").items()
               if v is not None}
        assert mws.get(RedisRobotsTxtMiddleware) == 105 and RobotsTxtMiddleware not in mws
    off = Settings({"DOWNLOADER_MIDDLEWARES": {RobotsTxtMiddleware: None}})
    Distributed().update_settings(off)  # switched off stays off
    assert RedisRobotsTxtMiddleware not in off.getdict("DOWNLOADER_MIDDLEWARES")


# --------------------------------------------------------------------------- three workers
HOSTS = [f"h{i}.test" for i in range(6)]
DOWN = "h5.test"  # its robots.txt answers 503: held, then its URLs refused at the end
PAGES_PER_HOST = 6


def web() -> dict[str, dict[str, Page]]:
    """Every page links to every host's pages of the next number, so the workers meet on
    every host.  The seed is slow: the three workers are all up before its links are queued."""
    pages: dict[str, dict[str, Page]] = {h: {} for h in HOSTS}
    for n, h in enumerate(HOSTS):
        for i in range(PAGES_PER_HOST):
            links = [f"http://{o}/p{i + 1}.html" for o in HOSTS if i + 1 < PAGES_PER_HOST]
            links += [f"http://{o}/p0.html" for o in HOSTS if i == 0]
            if i == 1:
                links.append(f"http://{h}/private/p{i}.html")
            anchors = " ".join(f'<a href="{u}">regex {k}</a>' for k, u in enumerate(links))
            pages[h][f"/p{i}.html"] = Page(
                f"<html><title>{h} {i}</title><body>regex {anchors}</body></html>",
                delay_ms=3000 if (n, i) == (0, 0) else 0.0)
        pages[h]["/private/p1.html"] = Page("<html><body>secret</body></html>")
    pages[DOWN]["/robots.txt"] = Page("busy", status=503)
    return pages


@pytest.fixture(scope="module")
def robots_web():
    config = {"defaults": {"delay_ms": 40, "robots": "User-agent: *\nDisallow: /private/\n"}}
    with ServerProcess(pages=web(), config=config) as srv:
        yield srv


def max_in_flight(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Per host, the most requests in flight at once, from the server's own arrival and end
    times (a request counts from its arrival to the end the server logged)."""
    events: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for r in rows:
        start = r["time_epoch"]
        events[r["host"]] += [(start, 1), (start + r["duration_ms"] / 1000.0, -1)]
    most = {}
    for host, evs in events.items():
        now = top = 0
        for _, step in sorted(evs):  # an end before an arrival at the same instant
            now += step
            top = max(top, now)
        most[host] = top
    return most


def test_three_workers_fetch_each_robots_txt_once_under_the_server_slot(
        robots_web, redis_server, tmp_path):
    c = Cluster(robots_web, redis_server.url, tmp_path, "robots3:")
    try:
        start = len(robots_web.read_log())
        workers = c.start(3, "-a", "strategy=breadth-first", "-s", "RETRY_TIMES=0")
        assert c.wait(workers) == [0, 0, 0], c.tails()
    finally:
        c.kill_all()
    rows = robots_web.read_log()[start:]
    robots = defaultdict(int)
    for r in rows:
        robots[r["host"]] += r["path"] == "/robots.txt"
    inflight = max_in_flight(rows)
    report = {"robots.txt per host": dict(robots), "max in flight": inflight}
    print(json.dumps(report))
    assert dict(robots) == {h: 1 for h in HOSTS}, report  # once per cluster
    assert max(inflight.values()) == 1, report  # robots.txt included
    assert all(r["inflight_host"] == 1 for r in rows)  # the server's own count agrees
    for h in HOSTS:  # robots.txt before any page of its host
        assert next(r for r in rows if r["host"] == h)["path"] == "/robots.txt"
    pages = {r["host"] + r["path"] for r in rows if r["path"] != "/robots.txt"}
    assert not [p for p in pages if "/private/" in p or p.startswith(DOWN)]
    assert pages == {f"{h}/p{i}.html" for h in HOSTS if h != DOWN for i in range(PAGES_PER_HOST)}
    # the robots.txt requests took the cluster-wide slot like any request, spaced by the delay
    hosts = RedisHosts(redis_server.client(), c.key, "probe")
    for h in HOSTS:
        starts = hosts.starts(h)
        assert len(starts) == sum(r["host"] == h for r in rows), h
        assert all(b[0] - a[0] >= DELAY - 0.0005 for a, b in pairwise(starts)), h
    status = RedisFrontier(redis_server.client(), c.key, "probe").status()
    assert status["robots_fetches"] == 6
    # h5's URLs waited, its server held, until nothing else was left: then refused
    assert status["holds_ended"] == 1
    logs = [c.log_text(i) for i in range(3)]
    fetched = sum(stat(log, "focus/robots/requests") for log in logs)
    shared = sum(stat(log, "focus/robots/shared") for log in logs)
    assert fetched == len(HOSTS) and shared > 0, report  # the others read the shared file
    assert sum(1 for log in logs if stat(log, "focus/robots/unreachable")) >= 1
    assert sum(stat(log, "focus/robots/held") for log in logs) >= 1


def test_a_server_whose_robots_txt_answers_503_is_held_for_the_whole_cluster(
        redis_server, tmp_path):
    """robots.txt answers 503 once: the host's page goes back to Redis and waits, its server
    held cluster-wide, until the rules expire (1 s) and robots.txt is fetched again.  The other
    host's nine pages, 0.3 s apart, keep the cluster busy for longer than that."""
    steady, flaky = "steady.test", "flaky.test"
    regex = "<html><title>regex {}</title><body>regex {}</body></html>"
    pages = {flaky: {"/a.html": Page(regex.format("flaky", ""))},
             steady: {"/index.html": Page(regex.format("index", "".join(
                 f'<a href="/p{i}.html">regex {i}</a>' for i in range(8)))),
                      **{f"/p{i}.html": Page(regex.format(i, "")) for i in range(8)}}}
    config = {"hosts": {flaky: {"robots_failures": 1}}}
    with ServerProcess(pages=pages, config=config) as srv:
        c = Cluster(srv, redis_server.url, tmp_path, "held:")
        try:
            seeds = f"http://{flaky}/a.html,http://{steady}/index.html"
            workers = c.start(2, "-a", f"seeds={seeds}", "-a", "strategy=best-first",
                              "-s", "RETRY_TIMES=0", "-s", "FOCUS_DELAY=0.3",
                              "-s", "FOCUS_ROBOTSTXT_ERROR_TTL=1")
            assert c.wait(workers) == [0, 0], c.tails()
        finally:
            c.kill_all()
        rows = srv.read_log()
    got = [(r["path"], r["status"]) for r in rows if r["host"] == flaky]
    assert got == [("/robots.txt", 503), ("/robots.txt", 200), ("/a.html", 200)], c.tails()
    logs = [c.log_text(i) for i in range(2)]
    assert sum(stat(log, "focus/robots/held") for log in logs) >= 1
    assert not any(stat(log, "focus/robots/unreachable") for log in logs)
    exported = {item["url"] for i in range(2) for item in c.exported(i)}
    assert f"http://{flaky}/a.html" in exported and len(exported) == 10


def test_a_held_server_waits_cluster_wide_until_nothing_else_is_left(redis_server):
    """HOST_HOLD and POP alone: a held server's URL is not handed out while another server's
    can be, or while a lease is out; once nothing else is left the hold ends, and that server
    is not held again."""
    from focuscrawl.core.frontier import Link
    from tests.support.distributed import frontier_for

    client = redis_server.client()
    f = frontier_for(client, "hold:", "w0")
    hosts = RedisHosts(client, "hold:", "w0")
    f.add(Link("http://held.test/a", host="held.test"))
    f.add(Link("http://free.test/b", host="free.test"))
    assert hosts.hold("held.test", 600) == 1 and hosts.hold("held.test", 600) == 2
    lease, entry = f.pop()
    assert entry.url == "http://free.test/b"  # the held server's URL, first queued, waits
    assert f.pop() is None and f.wait is None  # a lease is out: the hold stands
    f.downloaded(lease, True)
    f.settle([lease])
    assert f.pop() is None and f.wait is not None  # nothing else left: the hold ends...
    assert f.pop()[1].url == "http://held.test/a"  # ... and the URL goes out (to be refused)
    assert f.status()["holds_ended"] == 1
    assert hosts.hold("held.test", 600) == 0  # not held again: it would hold the same URLs
    assert hosts.hold("other.test", 600) == 1  # a server failing later is


def test_a_held_server_waits_while_a_live_worker_may_still_yield_seeds(redis_server):
    """POP ends holds only once no live worker's seeds are still to come: while one says they
    are (its last POP), every worker finds the hold standing; a worker that died with seeds
    pending holds nothing back."""
    from focuscrawl.core.frontier import Link
    from tests.support.distributed import frontier_for

    client = redis_server.client()
    w0 = frontier_for(client, "seeding:", "w0")
    w1 = frontier_for(client, "seeding:", "w1")
    hosts = RedisHosts(client, "seeding:", "w0")
    w0.add(Link("http://held.test/a", host="held.test"))
    assert hosts.hold("held.test", 600) == 1
    assert w0.pop(seeding=True) is None and w0.wait is None  # w0's seeds are still coming
    assert w1.pop() is None and w1.wait is None  # ... for the whole cluster
    assert w0.pop() is None and w0.wait is not None  # w0's seeds all came: the hold ends
    lease, entry = w1.pop()
    assert entry.url == "http://held.test/a" and w1.status()["holds_ended"] == 1
    w1.downloaded(lease, False)  # refused: its robots.txt is still unreachable
    w1.settle([lease])

    w1.add(Link("http://late.test/b", host="late.test"))
    assert hosts.hold("late.test", 600) == 1
    assert w0.pop(seeding=True) is None and w0.wait is None
    client.delete("seeding:w:w0")  # w0 dies (its alive key expires) with seeds pending
    assert w1.pop() is None and w1.wait is not None  # its seeds are not coming: the hold ends
    assert w1.pop()[1].url == "http://late.test/b"
