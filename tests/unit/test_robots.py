"""Our robots.txt middleware: one fetch per host, every waiting request gets the rules.

The crawls against a server are in tests/integration/test_robots_crawls.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from focuscrawl.seam.engine import download_error
from focuscrawl.seam.meta import ROBOTS_WAIT
from focuscrawl.seam.middlewares import robots
from focuscrawl.seam.middlewares.robots import (
    ALLOW_ALL,
    DISALLOW_ALL,
    PARSED,
    RobotsTxtMiddleware,
    RobotsWait,
    Rules,
    parse_robots,
    robots_key,
    robots_url,
)
from focuscrawl.seam.middlewares.start import SeedsPendingMiddleware
from focuscrawl.seam.services import FocusServices
from tests.support.project import SERVICES

#: what a download that timed out raises on the Scrapy under test
DownloadTimeoutError = download_error("DownloadTimeoutError")

UA = "focuscrawl/0.1 (+test)"


def as_deferred(coro: Coroutine[Any, Any, Any]) -> Deferred:
    """Run an asyncio coroutine from a pytest-twisted test (asyncio reactor)."""
    return Deferred.fromFuture(asyncio.ensure_future(coro))


class FakeEngine:
    """engine.download_async stand-in: answers robots.txt when released, counts fetches."""

    def __init__(self, body: bytes = b"", status: int = 200, error: Exception | None = None):
        self.body, self.status, self.error = body, status, error
        self.calls: list[Request] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def download_async(self, request: Request) -> TextResponse:
        self.calls.append(request)
        self.started.set()
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return TextResponse(request.url, status=self.status, body=self.body, request=request)


def make_mw(engine: FakeEngine, **settings: Any) -> RobotsTxtMiddleware:
    crawler = get_crawler(settings_dict={**SERVICES, "USER_AGENT": UA, **settings})
    crawler.engine = engine
    return RobotsTxtMiddleware(crawler)


async def outcome(mw: RobotsTxtMiddleware, url: str, **meta: Any) -> str:
    try:
        await mw.process_request(Request(url, meta=meta))
    except IgnoreRequest:
        return "refused"
    return "allowed"


# -- parsing ----------------------------------------------------------------------------------
def test_parse_rules_and_crawl_delay() -> None:
    rules = parse_robots(
        b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2.5\n", UA, expires=1.0)
    assert rules.kind == PARSED and rules.crawl_delay == 2.5
    assert rules.allows("http://a.test/public.html", UA)
    assert not rules.allows("http://a.test/private/x.html", UA)


def test_request_rate_becomes_a_delay_and_agent_groups_are_matched() -> None:
    body = (b"User-agent: focuscrawl\nDisallow: /nofocus/\nRequest-rate: 1/4s\n\n"
            b"User-agent: *\nDisallow: /\n")
    rules = parse_robots(body, UA, expires=1.0)
    assert rules.crawl_delay == 4.0
    assert rules.allows("http://a.test/x", UA)
    assert not rules.allows("http://a.test/nofocus/x", UA)
    assert not rules.allows("http://a.test/x", "otherbot/1.0")


@pytest.mark.parametrize("body", [
    b"\x00\xff\xfe<html><body>not a robots file</body></html>",
    b"Disallow /no-colon\nUser-agent *\nCrawl-delay: soon\n\n\n::::\n",
    "\ufeffUser-agent: *\nDisallow: /caf\u00e9/\n".encode(),
    b"User-agent: *\nDisallow: /" + b"*" * 5000 + b"x\n",
    b"",
])
def test_garbage_never_crashes(body: bytes) -> None:
    rules = parse_robots(body, UA, expires=1.0)
    assert rules.kind in (PARSED, ALLOW_ALL)
    assert isinstance(rules.allows("http://a.test/any/path?q=1", UA), bool)


def test_keys_are_scheme_host_and_port() -> None:
    def parts(url: str):
        return urlparse_cached(Request(url))

    assert robots_key(parts("http://A.test/x")) == robots_key(parts("http://a.test:80/y"))
    assert robots_key(parts("http://a.test/x")) != robots_key(parts("https://a.test/x"))
    assert robots_key(parts("http://a.test:8080/x")) != robots_key(parts("http://a.test/x"))
    assert robots_url(parts("http://user:pw@A.test:8080/x?y")) == "http://a.test:8080/robots.txt"
    assert robots_url(parts("http://[::1]:81/x")) == "http://[::1]:81/robots.txt"


def test_switched_off() -> None:
    with pytest.raises(NotConfigured):
        make_mw(FakeEngine(), FOCUS_ROBOTSTXT_OBEY=False)


# -- concurrency ------------------------------------------------------------------------------
@pytest_twisted.ensureDeferred
async def test_every_request_waiting_for_robots_gets_the_rules() -> None:
    """Scrapy's bug: requests awaiting one Deferred while robots.txt loads were let through."""

    async def scenario() -> None:
        engine = FakeEngine(b"User-agent: *\nDisallow: /private/\nCrawl-delay: 3\n")
        engine.release.clear()
        mw = make_mw(engine)
        urls = [f"http://a.test/{'private' if i % 2 else 'public'}/{i}.html" for i in range(20)]
        tasks = [asyncio.ensure_future(outcome(mw, u)) for u in urls]
        await engine.started.wait()
        # every task has run up to its wait; none may have been decided before the rules came
        assert not any(t.done() for t in tasks)
        assert len(engine.calls) == 1
        engine.release.set()
        results = await asyncio.gather(*tasks)
        assert results == ["refused" if "private" in u else "allowed" for u in urls]
        assert len(engine.calls) == 1
        robots_request = engine.calls[0]
        assert robots_request.url == "http://a.test/robots.txt"
        assert robots_request.meta["dont_obey_robotstxt"]
        assert mw.stats.get_value("focus/robots/disallowed") == 10
        assert FocusServices.of(mw.crawler).policy.current_delay("a.test") == 3.0
        # cached: later requests need no fetch
        assert await outcome(mw, "http://a.test/private/late.html") == "refused"
        assert len(engine.calls) == 1

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_hosts_and_ports_are_fetched_separately_and_robots_requests_pass() -> None:
    async def scenario() -> None:
        engine = FakeEngine(b"User-agent: *\nDisallow: /\n")
        mw = make_mw(engine)
        assert await outcome(mw, "http://a.test/x") == "refused"
        assert await outcome(mw, "http://a.test:8080/x") == "refused"
        assert await outcome(mw, "http://b.test/x") == "refused"
        assert await outcome(mw, "http://b.test/robots.txt", dont_obey_robotstxt=True) == "allowed"
        assert await outcome(mw, "data:,hello") == "allowed"
        assert [r.url for r in engine.calls] == [
            "http://a.test/robots.txt", "http://a.test:8080/robots.txt", "http://b.test/robots.txt"]

    await as_deferred(scenario())


# -- outcomes ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("status", "expected", "kind"), [
    (404, "allowed", ALLOW_ALL),
    (410, "allowed", ALLOW_ALL),
    (403, "allowed", ALLOW_ALL),  # RFC 9309: any 4xx is "unavailable"
    (429, "refused", DISALLOW_ALL),  # too many requests: treated as a server error
    (500, "refused", DISALLOW_ALL),
    (503, "refused", DISALLOW_ALL),
])
@pytest_twisted.ensureDeferred
async def test_status_outcomes(status: int, expected: str, kind: str) -> None:
    async def scenario() -> None:
        mw = make_mw(FakeEngine(b"User-agent: *\nDisallow: /\n", status=status))
        assert await outcome(mw, "http://a.test/page.html") == expected
        assert mw.robots.rules["http://a.test:80"].kind == kind
        assert mw.stats.get_value(f"focus/robots/status/{status}") == 1
        if expected == "refused":
            assert mw.stats.get_value("focus/robots/unreachable") == 1

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_network_error_disallows_for_a_while_then_fetches_again() -> None:
    async def scenario() -> None:
        engine = FakeEngine(error=DownloadTimeoutError("took too long"))
        mw = make_mw(engine, FOCUS_ROBOTSTXT_ERROR_TTL=60, RETRY_TIMES=1)
        now = [1000.0]
        mw.robots.clock = lambda: now[0]
        assert await outcome(mw, "http://a.test/page.html") == "refused"
        assert mw.stats.get_value(f"focus/robots/error/{DownloadTimeoutError.__name__}") == 1
        assert mw.stats.get_value("focus/robots/retries") == 1
        now[0] += 30
        assert await outcome(mw, "http://a.test/other.html") == "refused"
        assert len(engine.calls) == 2  # one retry, then within the error TTL: no new fetch
        now[0] += 31
        engine.error = None
        engine.body = b"User-agent: *\nDisallow: /other\n"
        assert await outcome(mw, "http://a.test/page.html") == "allowed"
        assert await outcome(mw, "http://a.test/other.html") == "refused"
        assert len(engine.calls) == 3

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_under_a_scheduler_that_holds_a_refused_request_waits_for_the_rules() -> None:
    async def scenario() -> None:
        mw = make_mw(FakeEngine(status=503), FOCUS_ROBOTSTXT_ERROR_TTL=60, RETRY_ENABLED=False)
        mw.robots.policy.holding = True  # as FocusScheduler turns it on
        request = Request("http://a.test/page.html", meta={"focus": {"anchor": "x"}})
        with pytest.raises(RobotsWait) as caught:
            await mw.process_request(request)
        again = mw.process_exception(request, caught.value)
        assert again is caught.value.again and again.url == request.url and again.dont_filter
        assert request.meta[ROBOTS_WAIT]  # for the scheduler: this request was never tried
        assert again.meta["focus"] == {"anchor": "x"}  # what the link said travels with it
        assert mw.robots.policy.is_held("a.test") and not mw.robots.policy.is_due("a.test")
        policy = mw.robots.policy
        assert 59 < policy.held["a.test"] - policy.clock() <= 60  # until the rules expire
        assert mw.stats.get_value("focus/robots/held") == 1
        assert mw.stats.get_value("focus/robots/unreachable") is None  # nothing refused
        assert mw.process_exception(request, IgnoreRequest("other")) is None
        mw.robots.policy.end_holds()  # nothing else left to crawl: refused, as without holding
        assert await outcome(mw, "http://a.test/page.html") == "refused"
        assert mw.stats.get_value("focus/robots/unreachable") == 1

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_a_host_is_held_a_few_times_in_a_row_and_never_when_unreached() -> None:
    async def scenario() -> None:
        engine = FakeEngine(status=503)
        mw = make_mw(engine, FOCUS_ROBOTSTXT_ERROR_TTL=60, FOCUS_ROBOTSTXT_TTL=100,
                     FOCUS_ROBOTSTXT_HOLDS=2, RETRY_ENABLED=False)
        mw.robots.policy.holding = True
        now = [0.0]
        mw.robots.clock = lambda: now[0]

        async def held(url: str) -> bool:
            try:
                await mw.process_request(Request(url))
            except RobotsWait:
                return True
            except IgnoreRequest:
                return False
            raise AssertionError("allowed")

        assert await held("http://a.test/p")  # 503: the server is up, the request waits
        now[0] = 61.0
        assert await held("http://a.test/p")  # 503 again: a second time
        now[0] = 122.0
        assert not await held("http://a.test/p")  # a third 503 in a row: refused (cap 2)
        engine.status, engine.body = 200, b"User-agent: *\nDisallow:\n"
        now[0] = 183.0
        assert await outcome(mw, "http://a.test/p") == "allowed"  # back: the count starts over
        engine.status = 503
        now[0] = 300.0
        assert await outcome(mw, "http://a.test/p") == "allowed"  # the cached copy holds
        engine.error = DownloadTimeoutError("no answer")  # a host never reached: refused
        assert not await held("http://b.test/p")
        assert mw.stats.get_value("focus/robots/held") == 2
        assert mw.stats.get_value("focus/robots/unreachable") == 2
        assert len(engine.calls) == 6  # a fetch each time: a.test five, b.test one

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_expired_rules_are_refetched_and_kept_when_the_refetch_fails() -> None:
    async def scenario() -> None:
        engine = FakeEngine(b"User-agent: *\nDisallow: /old/\n")
        mw = make_mw(engine, FOCUS_ROBOTSTXT_TTL=100, FOCUS_ROBOTSTXT_ERROR_TTL=10,
                     RETRY_ENABLED=False)
        now = [0.0]
        mw.robots.clock = lambda: now[0]
        assert await outcome(mw, "http://a.test/new/x") == "allowed"
        now[0] = 101.0
        engine.status = 503
        # unreachable now: the cached copy stays in force (RFC 9309, 2.4), not disallow-all
        assert await outcome(mw, "http://a.test/new/x") == "allowed"
        assert await outcome(mw, "http://a.test/old/x") == "refused"
        assert len(engine.calls) == 2
        now[0] = 112.0
        engine.status = 200
        engine.body = b"User-agent: *\nDisallow: /new/\n"
        assert await outcome(mw, "http://a.test/new/x") == "refused"
        assert len(engine.calls) == 3

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_the_rules_kept_are_bounded_least_recently_needed_first() -> None:
    """FOCUS_ROBOTSTXT_HOSTS=2: a third host's rules push out those of the host no request
    needed for longest; a request for it fetches its robots.txt again and obeys it."""
    async def scenario() -> None:
        engine = FakeEngine(b"User-agent: *\nDisallow: /private/\nCrawl-delay: 3\n")
        mw = make_mw(engine, FOCUS_ROBOTSTXT_HOSTS=2)
        for h in ("a", "b", "a", "c"):  # a needed again after b: b is the one forgotten
            assert await outcome(mw, f"http://{h}.test/x") == "allowed"
        assert [r.url for r in engine.calls] == [
            "http://a.test/robots.txt", "http://b.test/robots.txt", "http://c.test/robots.txt"]
        assert list(mw.robots.rules) == ["http://a.test:80", "http://c.test:80"]
        assert mw.stats.get_value("focus/robots/forgotten") == 1
        assert not mw.robots.disallows("http://b.test/private/x")  # unknown now: the download asks
        assert await outcome(mw, "http://b.test/private/x") == "refused"
        assert engine.calls[-1].url == "http://b.test/robots.txt" and len(engine.calls) == 4
        assert mw.robots.policy.current_delay(mw.robots.servers.key("http://b.test/x")) == 3.0

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_a_robots_request_dropped_by_another_middleware_allows_all() -> None:
    async def scenario() -> None:
        mw = make_mw(FakeEngine(error=IgnoreRequest("offsite")))
        assert await outcome(mw, "http://a.test/x") == "allowed"
        assert mw.stats.get_value("focus/robots/ignored") == 1

    await as_deferred(scenario())


@pytest_twisted.ensureDeferred
async def test_garbage_robots_txt_allows_and_counts() -> None:
    async def scenario() -> None:
        mw = make_mw(FakeEngine(b"\x89PNG\r\n\x1a\n\x00\x00garbage"))
        assert await outcome(mw, "http://a.test/x") == "allowed"

    await as_deferred(scenario())


def test_disallows_answers_from_the_cache_only() -> None:
    mw = make_mw(FakeEngine())
    req = Request("http://a.test/private/x")
    assert not mw.robots.disallows(req.url)  # unknown yet: the downloader asks
    mw.robots.rules["http://a.test:80"] = parse_robots(b"User-agent: *\nDisallow: /private/", UA,
                                                       1e12)
    assert mw.robots.disallows(req.url)
    assert not mw.robots.disallows("http://a.test/public")
    # a host that could not be reached: refused until the rules expire, its links with it
    mw.robots.rules["http://a.test:80"] = Rules(DISALLOW_ALL, mw.robots.clock() + 60)
    assert mw.robots.disallows(req.url) and mw.robots.disallows("http://a.test/public")
    mw.robots.rules["http://a.test:80"] = Rules(DISALLOW_ALL, mw.robots.clock() - 1)  # expired
    assert not mw.robots.disallows(req.url)  # the downloader fetches it again
    # a server that answered 5xx: held, its links wait in the frontier for the next fetch
    mw.robots.rules["http://a.test:80"] = Rules(DISALLOW_ALL, mw.robots.clock() + 60, waits=True)
    assert not mw.robots.disallows(req.url)


def test_the_answers_remembered_are_bounded_across_hosts(monkeypatch) -> None:
    """The link filter asks of every outlink: the answers are cached for all hosts together
    within one bound (a cache per host grew with every URL of a crawl of many hosts), and a
    host's new robots.txt is never answered from its old rules' entries."""
    monkeypatch.setattr(robots, "_MAX_ANSWERS", 16)
    mw = make_mw(FakeEngine())
    body = b"User-agent: *\nDisallow: /private/"
    for h in range(40):
        mw.robots.rules[f"http://h{h}.test:80"] = parse_robots(body, UA, 1e12)
    for _ in range(2):
        for h in range(40):
            assert mw.robots.disallows(f"http://h{h}.test/private/p")
            assert not mw.robots.disallows(f"http://h{h}.test/public/p")
            assert len(mw.robots.answers) <= 16
    mw.robots.rules["http://h39.test:80"] = parse_robots(b"User-agent: *\nDisallow: /public/", UA,
                                                         1e12)
    assert not mw.robots.disallows("http://h39.test/private/p")
    assert mw.robots.disallows("http://h39.test/public/p")


def test_a_request_sent_back_to_wait_teaches_the_learned_order_nothing():
    """It was never tried: an error's 0 would say its link leads nowhere."""
    from types import SimpleNamespace

    from scrapy import Spider

    from focuscrawl.seam import signals as focus_signals
    from focuscrawl.seam.scheduler import FocusScheduler
    from tests.support.project import SCHEDULER_PARTS

    crawler = get_crawler(Spider, {"FOCUS_STRATEGY": "learned", "FOCUS_KEYWORDS": "alpha",
                                   "FOCUS_DELAY": 0, "FOCUS_MAX_PAGES": 0, **SCHEDULER_PARTS})
    crawler.engine = SimpleNamespace(_slot=None)
    sched = FocusScheduler.from_crawler(crawler)
    spider = Spider("wait")
    spider.crawler = crawler
    sched.open(spider)
    for url in ("http://a.test/waits", "http://a.test/fails"):
        sched.enqueue_request(Request(url))
    for wait in (True, False):
        request = sched.next_request()
        sched.policy.unreserve("a.test")
        if wait:
            request.meta[ROBOTS_WAIT] = True  # as RobotsTxtMiddleware sets it
        crawler.signals.send_catch_log(focus_signals.request_finished, request=request,
                                       status=None, html=True)
        assert (request.url in sched.frontier.valuation.labels) is not wait
    again = request.replace(dont_filter=True)
    again.meta[ROBOTS_WAIT] = True
    assert sched.enqueue_request(again) and ROBOTS_WAIT not in again.meta  # not carried on


@pytest_twisted.ensureDeferred
async def test_seeds_are_pending_until_start_is_exhausted_or_fails() -> None:
    crawler = get_crawler(settings_dict=SERVICES)
    services = FocusServices.of(crawler)
    middleware = SeedsPendingMiddleware.from_crawler(crawler)
    seen: list[bool] = []

    async def seeds(fail: bool):
        for url in ("https://a.test/", "https://b.test/"):
            seen.append(services.seeds_pending)
            yield Request(url)
        if fail:
            raise ValueError("the seed source broke")

    assert not services.seeds_pending  # no start() read yet: nothing to wait for
    assert [r.url async for r in middleware.process_start(seeds(False))] == [
        "https://a.test/", "https://b.test/"]
    assert seen == [True, True] and not services.seeds_pending
    with pytest.raises(ValueError):
        async for _ in middleware.process_start(seeds(True)):
            assert services.seeds_pending
    assert not services.seeds_pending
