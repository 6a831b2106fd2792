"""Trap, junk, nearness and irrelevant-directory filters: the rules and the spider middleware."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from focuscrawl.core.traps import DirectoryStats, ServerCap, UrlRules, is_near
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.middlewares.filters import GateMiddleware, LinkFilterMiddleware
from tests.support.project import SERVICES


# -- the rules ------------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "reason"), [
    ("http://a.test/docs/page.html", None),
    ("https://a.test/?q=search", None),
    ("http://a.test/a/b/a/c.html", None),  # twice is fine
    ("mailto:someone@a.test", "scheme"),
    ("javascript:void(0)", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("data:text/html,hello", "scheme"),
    ("ftp://a.test/file", "scheme"),
    ("http://a.test/" + "x" * 300, "url_length"),
    ("http://a.test/cgi-bin/vote.pl?id=3", "cgi"),
    ("http://a.test/CGI-BIN/x", "cgi"),
    ("http://a.test/a/b/a/c/a/", "repeated_segment"),
    ("http://a.test/x/x/x", "repeated_segment"),
    ("http://a.test/events/?month=5&year=2024", "calendar"),
    ("http://a.test/events?date=2024-05-01", "calendar"),
    ("http://a.test/events?from=2024-05", "calendar"),
    ("http://a.test/calendar/", None),  # the calendar page itself
    ("http://a.test/calendar/next/", "calendar"),  # its endless navigation
    ("http://a.test/shop;jsessionid=A1B2C3?item=4", "session_id"),
    ("http://a.test/index.php?PHPSESSID=0123456789abcdef", "session_id"),
    ("http://a.test/page?sid=99&x=1", "session_id"),
    ("http://a.test/(S(abcdef123))/page.aspx", "session_id"),
])
def test_url_rules(url: str, reason: str | None) -> None:
    assert UrlRules().reason(url) == reason


def test_each_rule_switches_off() -> None:
    off = UrlRules(schemes=False, cgi=False, repeat=0, max_length=0, calendar=False,
                   session=False)
    for url in ("mailto:x@a.test", "http://a.test/cgi-bin/x", "http://a.test/x/x/x",
                "http://a.test/" + "y" * 400, "http://a.test/?month=1",
                "http://a.test/?sid=1"):
        assert off.reason(url) is None
    assert UrlRules(repeat=2).reason("http://a.test/a/b/a/") == "repeated_segment"
    assert UrlRules(max_length=20).reason("http://a.test/123456789") == "url_length"


def test_nearness() -> None:
    page = "http://a.test/A/B/page.html"
    assert is_near(page, "http://a.test/A/B/other.html", keyword=False)
    assert is_near(page, "http://a.test/A/B/C/deeper.html", keyword=False)
    assert is_near(page, "http://a.test:8080/A/B/x.html", keyword=False)  # port ignored
    assert not is_near(page, "http://a.test/A/sibling.html", keyword=True)  # same site: no
    assert not is_near(page, "http://a.test/", keyword=False)
    assert not is_near(page, "http://b.test/A/B/x.html", keyword=False)  # off-site: keyword
    assert is_near(page, "http://b.test/anything.html", keyword=True)
    assert is_near("http://a.test/", "http://a.test/deep/x.html", keyword=False)  # root dir


def test_directory_stats_reject_after_enough_irrelevant_pages() -> None:
    dirs = DirectoryStats(min_pages=25, share=0.9)
    for i in range(23):
        assert not dirs.record(f"http://a.test/junk/{i}.html", relevant=False)
    for i in range(2):
        dirs.record(f"http://a.test/junk/r{i}.html", relevant=True)
    # 25 pages, 23 irrelevant: not "more than 25" yet
    assert not dirs.is_rejected("http://a.test/junk/new.html")
    assert dirs.record("http://a.test/junk/23.html", relevant=False)  # 26 pages, 24 irrelevant
    assert dirs.is_rejected("http://a.test/junk/new.html")
    assert not dirs.is_rejected("http://a.test/junk/sub/new.html")  # its own directory
    assert not dirs.is_rejected("http://a.test/other.html")
    assert not dirs.record("http://a.test/junk/24.html", relevant=False)  # rejected only once


def test_directory_with_enough_relevant_pages_stays() -> None:
    dirs = DirectoryStats(min_pages=10, share=0.9)
    for i in range(40):
        dirs.record(f"http://a.test/mixed/{i}.html", relevant=i % 5 == 0)  # 80% irrelevant
    assert not dirs.is_rejected("http://a.test/mixed/x.html")


def test_server_cap_counts_distinct_urls() -> None:
    cap = ServerCap(3)
    assert [cap.admit("a", f"http://a.test/{i}") for i in range(5)] == [
        True, True, True, False, False]
    assert cap.admit("a", "http://a.test/1")  # admitted before: rediscovery passes
    assert cap.admit("b", "http://b.test/1")
    assert cap.full_servers() == 1
    assert all(ServerCap(0).admit("a", f"u{i}") for i in range(100))


# -- the spider middleware ------------------------------------------------------------------
def response(url: str = "http://a.test/A/B/page.html") -> HtmlResponse:
    return HtmlResponse(url, body=b"<html></html>", request=Request(url))


def outlink(url: str, keyword: bool = False, **kw) -> Request:
    return Request(url, meta={"focus": {"keyword": keyword}}, **kw)


def middleware(**settings) -> LinkFilterMiddleware:
    return LinkFilterMiddleware.from_crawler(get_crawler(settings_dict={**SERVICES, **settings}))


def run(mw: LinkFilterMiddleware, resp: HtmlResponse | None, requests: list) -> list[str]:
    out = mw.process_spider_output(resp, requests)
    return [r.url if isinstance(r, Request) else r for r in out]


def test_middleware_drops_and_counts_each_reason() -> None:
    mw = middleware()
    links = [
        outlink("http://a.test/ok.html"),
        outlink("file:///etc/passwd"),
        outlink("http://a.test/cgi-bin/x"),
        outlink("http://a.test/z/z/z/"),
        outlink("http://a.test/?month=3&year=2020"),
        outlink("http://a.test/?sid=3"),
        outlink("http://a.test/" + "q" * 300),
        {"url": "an item passes"},
    ]
    assert run(mw, response(), links) == ["http://a.test/ok.html", {"url": "an item passes"}]
    stats = mw.stats
    for reason in ("scheme", "cgi", "repeated_segment", "calendar", "session_id", "url_length"):
        assert stats.get_value(f"focus/filtered/{reason}") == 1, reason
    assert stats.get_value("focus/links/considered") == 7


def test_seeds_and_dont_filter_requests_pass() -> None:
    mw = middleware()
    trap = "http://a.test/cgi-bin/seed"
    assert run(mw, None, [outlink(trap)]) == [trap]  # start requests have no response
    assert run(mw, response(), [outlink(trap, dont_filter=True)]) == [trap]


def test_switched_off_entirely() -> None:
    with pytest.raises(NotConfigured):
        middleware(FOCUS_FILTERS_ENABLED=False)


def test_server_cap_in_the_middleware() -> None:
    mw = middleware(FOCUS_MAX_PAGES_PER_SERVER=2)
    links = [outlink(f"http://a.test/{i}.html") for i in range(4)] + [outlink("http://b.test/")]
    assert run(mw, response(), links) == [
        "http://a.test/0.html", "http://a.test/1.html", "http://b.test/"]
    assert mw.stats.get_value("focus/filtered/server_cap") == 2


def test_nearness_option_and_its_percentage() -> None:
    mw = middleware(FOCUS_NEARNESS=True)
    page = response("http://a.test/A/B/page.html")
    links = [
        outlink("http://a.test/A/B/near.html"),
        outlink("http://a.test/A/far.html"),  # refused here ...
        outlink("http://b.test/x.html"),
        outlink("http://b.test/regex.html", keyword=True),
    ]
    assert run(mw, page, links) == ["http://a.test/A/B/near.html", "http://b.test/regex.html"]
    # ... but near to another page: fetched after all, so not counted as "not fetched"
    assert run(mw, response("http://a.test/A/index.html"), [outlink("http://a.test/A/far.html")]
               ) == ["http://a.test/A/far.html"]
    assert mw.stats.get_value("focus/filtered/nearness") == 2
    mw._spider_closed()
    assert mw.stats.get_value("focus/not_fetched/nearness") == 1  # b.test/x.html
    assert mw.stats.get_value("focus/not_fetched/nearness_pct") == 25.0  # of 4 distinct URLs


def test_nearness_is_off_by_default() -> None:
    mw = middleware()
    assert run(mw, response(), [outlink("http://b.test/x.html")]) == ["http://b.test/x.html"]


def test_irrelevant_directories_from_page_scores_and_the_gate() -> None:
    crawler = get_crawler(settings_dict={
        **SERVICES, "FOCUS_IRRELEVANT_DIRS": True, "FOCUS_IRRELEVANT_DIR_PAGES": 3,
        "FOCUS_IRRELEVANT_DIR_SHARE": 0.75, "FOCUS_RELEVANT_SCORE": 0.2})
    mw = LinkFilterMiddleware.from_crawler(crawler)
    gate = GateMiddleware.from_crawler(crawler)
    queued = Request("http://a.test/junk/queued.html", meta={"focus_lease": 1})
    for i, score in enumerate([0.0, 0.1, 0.5, 0.05]):
        assert gate.process_request(queued) is None  # not rejected yet
        crawler.signals.send_catch_log(focus_signals.page_scored,
                                       url=f"http://a.test/junk/{i}.html", score=score, hot=False)
    # 4 pages > 3, 3 of 4 irrelevant >= 75%: rejected
    assert crawler.stats.get_value("focus/dirs/rejected") == 1
    assert run(mw, response("http://a.test/junk/0.html"), [
        outlink("http://a.test/junk/more.html"), outlink("http://a.test/good/x.html")]
    ) == ["http://a.test/good/x.html"]
    with pytest.raises(IgnoreRequest):
        gate.process_request(queued)
    robots = Request("http://a.test/junk/x", meta={"dont_obey_robotstxt": True})
    assert gate.process_request(robots) is None  # only requests the scheduler handed out
    mw._spider_closed()
    assert crawler.stats.get_value("focus/filtered/irrelevant_dir") == 1
    assert crawler.stats.get_value("focus/filtered/irrelevant_dir_queued") == 1
    # distinct outlinks seen: junk/more, good/x; not fetched: junk/more and the queued one
    assert crawler.stats.get_value("focus/not_fetched/irrelevant_dir") == 2


def test_gate_is_off_without_filters_and_directories() -> None:
    with pytest.raises(NotConfigured):
        GateMiddleware.from_crawler(get_crawler(settings_dict={**SERVICES,
                                                               "FOCUS_FILTERS_ENABLED": False}))
    gate = GateMiddleware.from_crawler(get_crawler(settings_dict=SERVICES))  # redirect targets
    assert gate.dirs is None
    assert gate.process_request(Request("http://a.test/x/x/x", meta={"focus_lease": 1})) is None


def test_gate_applies_the_trap_rules_to_redirect_targets() -> None:
    gate = GateMiddleware.from_crawler(get_crawler(settings_dict=SERVICES))
    redirected = Request("http://a.test/shop;jsessionid=99",
                         meta={"redirect_urls": ["http://a.test/shop"], "focus_lease": 2})
    with pytest.raises(IgnoreRequest):
        gate.process_request(redirected)
    fine = Request("http://a.test/shop/", meta={"redirect_urls": ["http://a.test/shop"]})
    assert gate.process_request(fine) is None
    robots = Request("http://a.test/cgi-bin/robots", meta={
        "redirect_urls": ["http://a.test/robots.txt"], "dont_obey_robotstxt": True})
    assert gate.process_request(robots) is None
    assert gate.stats.get_value("focus/filtered/session_id") == 1
    assert gate.stats.get_value("focus/filtered/redirect_targets") == 1


