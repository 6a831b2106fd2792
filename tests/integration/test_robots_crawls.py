"""Our robots.txt middleware in real crawls (its parts: tests/unit/test_robots.py).

The first test reproduces the situation where Scrapy 2.19's RobotsTxtMiddleware lets requests
through (several requests for one host arrive while its slow robots.txt is loading) and checks
from the server's access log that no disallowed URL was fetched, and that robots.txt was the
host's first request and was fetched once.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
import pytest_twisted

from focuscrawl.demo.webserver import Page, ServerProcess
from spiders.topic import TopicSpider
from tests.support.project import crawl, project_settings

# -- end to end, from the server's side ---------------------------------------------------------
ROBOTS = "User-agent: *\nDisallow: /private/\n"
SLOW_HOST = "slowrobots.test"
PAGES = {
    SLOW_HOST: {
        **{f"/pub{i}.html": Page(f"<html><title>public {i}</title><body>alpha</body></html>")
           for i in range(8)},
        **{f"/private/p{i}.html": Page(f"<html><title>secret {i}</title><body>alpha</body></html>")
           for i in range(8)},
    },
}
CONFIG = {"hosts": {SLOW_HOST: {"delay_ms": 400, "robots": ROBOTS}}}


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=PAGES, config=CONFIG) as srv:
        yield srv


@pytest.mark.parametrize("scheduler", ["focuscrawl.seam.scheduler.FocusScheduler",
                                       "scrapy.core.scheduler.Scheduler"])
@pytest_twisted.ensureDeferred
async def test_no_disallowed_fetch_while_a_slow_robots_txt_loads(server, proxy_to, scheduler):
    proxy_to(server)
    start = len(server.read_log())
    seeds = [server.url(SLOW_HOST, p) for p in sorted(PAGES[SLOW_HOST])]
    settings = project_settings(
        SCHEDULER=scheduler,
        FOCUS_CONCURRENCY_PER_SERVER=16,  # all seeds wait for robots.txt at the same time
        FOCUS_DELAY=0,
        FOCUS_MAX_PAGES=100,
    )
    result = await crawl(settings, keywords="alpha", seeds=",".join(seeds))
    rows = server.read_log()[start:]
    paths = [r["path"] for r in rows]
    assert paths[0] == "/robots.txt"
    assert paths.count("/robots.txt") == 1
    assert not [p for p in paths if p.startswith("/private/")]
    assert sorted(p for p in paths if p != "/robots.txt") == [f"/pub{i}.html" for i in range(8)]
    assert max(r["inflight_host"] for r in rows) > 1  # the requests really were concurrent
    assert result.stats["focus/robots/disallowed"] == 8
    assert sorted(i["url"] for i in result.items) == sorted(s for s in seeds if "pub" in s)


DOWN_HOST = "downrobots.test"
DOWN_PAGES = {DOWN_HOST: {"/robots.txt": Page("busy", status=503),
                          "/a.html": Page("<html><title>alpha</title><body>alpha</body></html>")}}


@pytest_twisted.ensureDeferred
async def test_an_unreachable_robots_txt_is_one_info_line_not_an_error(proxy_to, caplog):
    """robots.txt answering 503 is retried RETRY_TIMES times by the middleware itself (Scrapy's
    retry middleware would log ERROR with a traceback), then one INFO line disallows the host."""
    with ServerProcess(pages=DOWN_PAGES) as srv:
        proxy_to(srv)
        caplog.set_level("INFO")
        settings = project_settings(FOCUS_DELAY=0, RETRY_TIMES=2, FOCUS_MAX_PAGES=5)
        result = await crawl(settings, keywords="alpha", seeds=srv.url(DOWN_HOST, "/a.html"))
        paths = [r["path"] for r in srv.read_log()]
    # the page waits, held; with nothing else to crawl the hold ends and it is refused
    assert paths == ["/robots.txt"] * 3
    assert result.stats["focus/robots/retries"] == 2
    assert [result.stats.get(f"focus/robots/{k}") for k in ("held", "holds_ended",
                                                            "unreachable")] == [1, 1, 1]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    lines = [r.getMessage() for r in caplog.records if "robots.txt of" in r.getMessage()]
    assert len(lines) == 1 and "503" in lines[0] and "disallowing" in lines[0]


FLAKY_HOST = "flakyrobots.test"
STEADY_HOST = "steady.test"
ALPHA = "<html><title>alpha {}</title><body>alpha {}</body></html>"
FLAKY_PAGES = {
    FLAKY_HOST: {"/a.html": Page(ALPHA.format("flaky", ""))},
    STEADY_HOST: {"/index.html": Page(ALPHA.format("index", "".join(
        f'<a href="/p{i}.html">alpha {i}</a>' for i in range(8)))),
                  **{f"/p{i}.html": Page(ALPHA.format(i, "")) for i in range(8)}},
}


@pytest.mark.parametrize("strategy", ["best-first", "learned"])
@pytest_twisted.ensureDeferred
async def test_a_page_waits_for_a_robots_txt_that_comes_back(proxy_to, caplog, strategy):
    """robots.txt answers 503 once: the host's page is not lost but waits, its server held,
    until the rules expire (1 s here) and robots.txt is fetched again.  The other host's nine
    pages, 0.3 s apart, keep the crawl busy for longer than that whatever the machine's load."""
    config = {"hosts": {FLAKY_HOST: {"robots_failures": 1}}}
    caplog.set_level("INFO")
    with ServerProcess(pages=FLAKY_PAGES, config=config) as srv:
        proxy_to(srv)
        settings = project_settings(FOCUS_DELAY=0.3, RETRY_TIMES=0, FOCUS_MAX_PAGES=50,
                                    FOCUS_ROBOTSTXT_ERROR_TTL=1, FOCUS_STRATEGY=strategy)
        seeds = [srv.url(FLAKY_HOST, "/a.html"), srv.url(STEADY_HOST, "/index.html")]
        result = await crawl(settings, keywords="alpha", seeds=",".join(seeds))
        rows = srv.read_log()
    flaky = [(r["path"], r["status"]) for r in rows if r["host"] == FLAKY_HOST]
    assert flaky == [("/robots.txt", 503), ("/robots.txt", 200), ("/a.html", 200)]
    steady = [r["path"] for r in rows if r["host"] == STEADY_HOST and r["path"] != "/robots.txt"]
    assert len(steady) == 9
    assert (result.stats["focus/robots/held"], result.stats.get("focus/robots/unreachable")
            ) == (1, None)
    assert "focus/robots/holds_ended" not in result.stats
    held = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Server ")]
    assert len(held) == 1 and FLAKY_HOST in held[0] and "hold 1 of at most 3" in held[0]
    assert seeds[0] in {i["url"] for i in result.items} and len(result.items) == 10


class SlowSeedsSpider(TopicSpider):
    """A seed source slower than a robots.txt's 503: each seed after the first comes only
    once the first one's fate is known (its page parsed, or its request refused)."""

    name = "slowseeds"

    async def start(self):
        first = True
        async for request in super().start():
            if not first:
                for _ in range(600):  # at most 30 s: a clear failure, not a hang
                    if self.pages or self.crawler.stats.get_value("focus/robots/unreachable"):
                        break
                    await asyncio.sleep(0.05)
            first = False
            yield request


@pytest_twisted.ensureDeferred
async def test_a_held_server_waits_for_seeds_still_to_come(proxy_to):
    """The first seed's robots.txt answers 503 once; the second seed comes only after the first
    one is settled.  While a seed may still come, the held server is not all that is left: its
    hold runs its course and its page is fetched after the second robots.txt.  Ending the holds
    at once (the code before SeedsPendingMiddleware) refused that page for good."""
    config = {"hosts": {FLAKY_HOST: {"robots_failures": 1}}}
    with ServerProcess(pages=FLAKY_PAGES, config=config) as srv:
        proxy_to(srv)
        settings = project_settings(FOCUS_DELAY=0.1, RETRY_TIMES=0, FOCUS_MAX_PAGES=50,
                                    FOCUS_ROBOTSTXT_ERROR_TTL=1)
        seeds = [srv.url(FLAKY_HOST, "/a.html"), srv.url(STEADY_HOST, "/index.html")]
        result = await crawl(settings, spider=SlowSeedsSpider, keywords="alpha",
                             seeds=",".join(seeds))
        rows = srv.read_log()
    flaky = [(r["path"], r["status"]) for r in rows if r["host"] == FLAKY_HOST]
    assert flaky == [("/robots.txt", 503), ("/robots.txt", 200), ("/a.html", 200)]
    assert "focus/robots/holds_ended" not in result.stats
    assert result.stats.get("focus/robots/unreachable") is None
    assert seeds[0] in {i["url"] for i in result.items} and len(result.items) == 10
