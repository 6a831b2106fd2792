"""Pant et al.'s fetch rules: 100 KB kept (truncated, still scored), HTML only, errors counted."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, signals
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import IgnoreRequest, NotConfigured, StopDownload
from scrapy.http import Headers, HtmlResponse
from scrapy.utils.test import get_crawler

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam.engine import download_error
from focuscrawl.seam.meta import ROBOTS, SITEMAP, WHOLE_BODY
from focuscrawl.seam.middlewares.fetchrules import FetchRulesMiddleware
from focuscrawl.seam.middlewares.robots import ROBOTS_MAX_BYTES
from spiders.topic import TopicSpider
from tests.support.project import project_settings

#: what a download that timed out raises on the Scrapy under test
DownloadTimeoutError = download_error("DownloadTimeoutError")

LIMIT = 100 * 1024
HOST = "fetch.test"
KEPT = "whole body kept"
LAST_WORDS = "The closing paragraph of the long page, far past its first hundred kilobytes."


def html(size: int, title: str, head: str = "", tail: str = "") -> str:
    """An HTML page of exactly ``size`` bytes (ASCII), ``head`` first and ``tail`` last."""
    start = f"<html><head><title>{title}</title></head><body><p>{head}</p><p>"
    end = f"</p>{tail}</body></html>"
    return start + "x " * ((size - len(start) - len(end)) // 2) + "x" * (
        (size - len(start) - len(end)) % 2) + end


PAGES = {
    HOST: {
        "/": Page("<html><title>regex hub</title><body>regex "
                  + "".join(f'<a href="{p}">regex {p}</a>' for p in (
                      "/big.html", "/small.html", "/exact.html", "/doc.pdf", "/missing.html",
                      "/gone.html", "/moved.html", "/plain.txt"))
                  + "</body></html>"),
        "/big.html": Page(html(300 * 1024, "regex big", "regex regex pattern",
                               f"<p>{LAST_WORDS}</p>" '<a href="/tail.html">regex tail</a>')),
        "/small.html": Page(html(50 * 1024, "regex small", "regex")),
        "/exact.html": Page(html(LIMIT, "regex exact", "regex",
                                 '<a href="/after-exact.html">regex</a>')),
        "/doc.pdf": Page(b"%PDF-1.4 " + b"\x00" * 200 * 1024, content_type="application/pdf"),
        "/plain.txt": Page("regex " * 100, content_type="text/plain; charset=utf-8"),
        "/gone.html": Page("<html>gone</html>", status=410),
        "/moved.html": Page.redirect("/landing.html"),
        "/landing.html": Page("<html><title>regex landing</title><body>regex</body></html>"),
        "/tail.html": Page("<html>never linked from a kept byte</html>"),
        "/after-exact.html": Page("<html><title>regex after</title><body>regex</body></html>"),
    },
}


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=PAGES) as srv:
        yield srv


@pytest_twisted.ensureDeferred
async def test_fetch_rules_end_to_end(server, proxy_to) -> None:
    proxy_to(server)
    runner = CrawlerRunner(project_settings(FOCUS_DELAY=0, FOCUS_MAX_PAGES=100))
    crawler = runner.create_crawler(TopicSpider)
    items: dict[str, dict[str, Any]] = {}
    bodies: dict[str, tuple[int, list[str]]] = {}
    crawler.signals.connect(lambda item: items.__setitem__(item.url, asdict(item)),
                            signal=signals.item_scraped, weak=False)
    crawler.signals.connect(
        lambda response, request: bodies.__setitem__(
            response.url, (len(response.body), list(response.flags))),
        signal=signals.response_received, weak=False)
    await runner.crawl(crawler, keywords="regex", seeds=server.url(HOST, "/"))
    stats = crawler.stats.get_stats()
    url = lambda p: server.url(HOST, p)  # noqa: E731

    # a page over 100 KB: exactly the first 100 KB kept, flagged, scored and exported
    size, flags = bodies[url("/big.html")]
    assert size == LIMIT and "truncated" in flags
    big = items[url("/big.html")]
    assert big["truncated"] and big["score"] > 0
    paths = [r["path"] for r in server.read_log()]
    assert "/tail.html" not in paths  # its only link was after the first 100 KB
    # pages up to 100 KB are whole
    assert bodies[url("/small.html")] == (50 * 1024, [])
    assert bodies[url("/exact.html")] == (LIMIT, [])
    assert not items[url("/exact.html")]["truncated"]
    assert "/after-exact.html" in paths
    assert stats["focus/fetch/truncated"] == 1
    # not HTML: stopped at the headers, nothing scored
    assert bodies[url("/doc.pdf")][0] == 0 and url("/doc.pdf") not in items
    assert url("/plain.txt") not in items
    assert stats["focus/fetch/not_html"] == 2
    # errors counted and dropped, redirects followed
    assert stats["focus/fetch/error_status/404"] == 1
    assert stats["focus/fetch/error_status/410"] == 1
    assert stats["focus/fetch/errors"] == 2
    assert url("/missing.html") not in items and url("/gone.html") not in items
    assert url("/landing.html") in items
    assert crawler.settings.getint("DOWNLOAD_TIMEOUT") == 10


async def _crawl(server: Any, **settings: Any) -> tuple[dict[str, dict[str, Any]],
                                                       dict[str, int], dict[str, Any]]:
    """The items, the bodies' sizes as downloaded (before the middlewares) and the stats."""
    runner = CrawlerRunner(project_settings(FOCUS_DELAY=0, **settings))
    crawler = runner.create_crawler(TopicSpider)
    items: dict[str, dict[str, Any]] = {}
    downloaded: dict[str, int] = {}

    def scraped(item: Any, response: Any) -> None:
        # KEPT: whether the whole body outlived the page's parse (it must not)
        items[item.url] = {**asdict(item), KEPT: WHOLE_BODY in response.meta}

    crawler.signals.connect(scraped, signal=signals.item_scraped, weak=False)
    crawler.signals.connect(scraped, signal=signals.item_dropped, weak=False)  # FOCUS_MIN_SCORE
    crawler.signals.connect(
        lambda response, request: downloaded.__setitem__(response.url, len(response.body)),
        signal=signals.response_downloaded, weak=False)
    await runner.crawl(crawler, keywords="regex", seeds=server.url(HOST, "/"))
    return items, downloaded, crawler.stats.get_stats()


@pytest_twisted.ensureDeferred
async def test_content_comes_from_the_whole_page_and_the_crawl_from_its_first_100_kb(
        server, proxy_to) -> None:
    proxy_to(server)
    big = server.url(HOST, "/big.html")
    text, text_sizes, text_stats = await _crawl(server)  # content=text, the default
    none, none_sizes, _ = await _crawl(server, FOCUS_CONTENT="none")
    # the crawl saw the same pages: the same scores, hotness and links (Pant's 100 KB)
    assert set(text) == set(none)
    crawl_fields = ("score", "hot", "outlinks", "truncated", "depth", "parent")
    for url in none:
        assert {k: text[url][k] for k in crawl_fields} == {k: none[url][k] for k in crawl_fields}
    assert text[big]["truncated"] and text[big]["score"] > 0
    assert server.url(HOST, "/tail.html") not in text  # its link lies past the first 100 KB
    # the content is the whole page's: its closing paragraph is in the text
    assert text_sizes[big] == 300 * 1024
    assert LAST_WORDS in text[big]["text"]
    assert text_stats["focus/content/extracted"] == len(text)
    assert not any(item[KEPT] for item in (*text.values(), *none.values()))
    assert "focus/content/failed" not in text_stats
    # without content the download stops once past 100 KB, as Pant's rule has it
    assert LIMIT < none_sizes[big] < 300 * 1024
    # a page longer than the content's bound is downloaded to it and gets its visible text
    bounded, bounded_sizes, bounded_stats = await _crawl(
        server, FOCUS_CONTENT_MAX_CHARS=200 * 1024)
    assert 200 * 1024 < bounded_sizes[big] < 300 * 1024
    assert bounded_stats["focus/content/failed/too_large"] == 1
    assert bounded[big]["text"].startswith("regex regex pattern x x x")
    assert LAST_WORDS not in bounded[big]["text"]
    assert bounded[big]["score"] == none[big]["score"]
    assert not any(item[KEPT] for item in bounded.values())
    # a page below FOCUS_MIN_SCORE is not extracted, and its whole body goes all the same
    dropped, _, dropped_stats = await _crawl(server, FOCUS_MIN_SCORE=0.999)
    kept = [d for d in dropped.values() if d["score"] >= 0.999]
    assert dropped[big]["score"] < 0.999 and dropped[big] not in kept
    assert dropped_stats.get("focus/content/extracted", 0) == len(kept)
    assert not any(item[KEPT] for item in dropped.values())


# -- unit: the middleware on its own ----------------------------------------------------------
def mw(**settings: Any) -> FetchRulesMiddleware:
    return FetchRulesMiddleware.from_crawler(get_crawler(settings_dict=settings))


def test_a_long_decompressed_body_is_cut_to_the_limit() -> None:
    m = mw()
    request = Request("http://a.test/x")
    m.process_request(request)
    response = HtmlResponse(request.url, body=b"a" * (LIMIT + 5000), request=request)
    out = m.process_response(request, response)
    assert len(out.body) == LIMIT and "truncated" in out.flags
    short = HtmlResponse(request.url, body=b"a" * 10, request=request)
    assert m.process_response(request, short) is short


def test_bytes_received_stops_the_download_past_the_limit() -> None:
    m = mw(FOCUS_MAX_PAGE_BYTES=1000)
    request = Request("http://a.test/x")
    m.process_request(request)
    m._bytes_received(b"a" * 600, request)
    with pytest.raises(StopDownload) as e:
        m._bytes_received(b"a" * 600, request)
    assert e.value.fail is False  # a partial response, not an error
    response = HtmlResponse(request.url, body=b"a" * 1200, request=request,
                            flags=["download_stopped"])
    out = m.process_response(request, response)
    assert len(out.body) == 1000 and out.flags == ["download_stopped", "truncated"]
    # a retry of the same request starts counting again
    m.process_request(request)
    m._bytes_received(b"a" * 600, request)


def test_robots_txt_gets_googles_500_kib() -> None:
    m = mw()
    request = Request("http://a.test/robots.txt", meta={"focus_robots": True})
    m._bytes_received(b"a" * (ROBOTS_MAX_BYTES - 1), request)
    with pytest.raises(StopDownload):
        m._bytes_received(b"aa", request)
    # and is never stopped for its Content-Type
    m._headers_received(Headers({"Content-Type": "text/plain"}), request=request)


@pytest.mark.parametrize(("ctype", "stopped"), [
    ("text/html; charset=utf-8", False),
    ("application/xhtml+xml", False),
    ("TEXT/HTML", False),
    ("", False),  # unknown: the spider sniffs it
    ("application/pdf", True),
    ("image/png", True),
    ("text/plain", True),
])
def test_headers_received_stops_non_html(ctype: str, stopped: bool) -> None:
    m = mw()
    headers = Headers({"Content-Type": ctype} if ctype else {})
    request = Request("http://a.test/x")
    if stopped:
        with pytest.raises(StopDownload):
            m._headers_received(headers, request=request)
    else:
        m._headers_received(headers, request=request)


def test_errors_are_counted_but_not_ignored_requests() -> None:
    m = mw()
    request = Request("http://a.test/x")
    m.process_exception(request, DownloadTimeoutError("slow"))
    m.process_exception(request, IgnoreRequest("robots"))
    assert m.stats.get_value("focus/fetch/failed") == 1
    assert m.stats.get_value(f"focus/fetch/failed/{DownloadTimeoutError.__name__}") == 1


def test_switched_off() -> None:
    with pytest.raises(NotConfigured):
        mw(FOCUS_MAX_PAGE_BYTES=0, FOCUS_FETCH_HTML_ONLY=False)
    only_types = mw(FOCUS_MAX_PAGE_BYTES=0)
    request = Request("http://a.test/x")
    big = HtmlResponse(request.url, body=b"a" * (LIMIT * 2), request=request)
    assert only_types.process_response(request, big) is big


def test_pages_are_downloaded_whole_only_for_a_spider_that_exports_content() -> None:
    from scrapy import Spider

    from focuscrawl.seam.arguments import CrawlArguments, SpiderArguments

    def whole_bytes(content: str | None, maxsize: int = 0, **settings: Any) -> int:
        m = mw(**settings)
        spider = Spider("s")
        if maxsize:
            spider.download_maxsize = maxsize  # type: ignore[attr-defined]
        if content != "another project":
            spider.focus_arguments = SpiderArguments(  # type: ignore[attr-defined]
                parsed=CrawlArguments(keywords=["x"], content=content))
        m._spider_opened(spider)
        return m.whole_bytes

    assert whole_bytes(None) == 2_000_000  # FOCUS_CONTENT's text, to its bound
    assert whole_bytes("markdown") == 2_000_000
    assert whole_bytes("none") == 0
    assert whole_bytes(None, FOCUS_CONTENT="none") == 0
    assert whole_bytes("another project") == 0  # it publishes no arguments: no content
    assert whole_bytes(None, DOWNLOAD_MAXSIZE=1_000_000) == 1_000_000  # never dropped for it
    assert whole_bytes(None, DOWNLOAD_MAXSIZE=0) == 2_000_000  # 0: Scrapy's "no bound"
    assert whole_bytes(None, maxsize=1_500_000) == 1_500_000  # the spider's own, as Scrapy's
    assert whole_bytes(None, FOCUS_CONTENT_MAX_CHARS=50_000) == 0  # the cut is longer


def test_a_cut_page_keeps_its_whole_body_for_the_content_alone() -> None:
    m = mw(FOCUS_MAX_PAGE_BYTES=1000)
    m.whole_bytes = 5000
    request = Request("http://a.test/x")
    m.process_request(request)
    m._bytes_received(b"a" * 4000, request)  # past the cut: not stopped
    out = m.process_response(request, HtmlResponse(request.url, body=b"a" * 4000,
                                                   request=request))
    assert len(out.body) == 1000 and "truncated" in out.flags
    assert request.meta[WHOLE_BODY] == b"a" * 4000
    m.process_request(request)  # a retry forgets it
    assert WHOLE_BODY not in request.meta
    with pytest.raises(StopDownload):
        m._bytes_received(b"a" * 5001, request)  # past the content's bound
    out = m.process_response(request, HtmlResponse(request.url, body=b"a" * 5001,
                                                   request=request))
    assert len(out.body) == 1000 and request.meta[WHOLE_BODY] is None
    robots = Request("http://a.test/robots.txt", meta={ROBOTS: True})
    m.process_response(robots, HtmlResponse(robots.url, body=b"a" * 600_000, request=robots))
    assert WHOLE_BODY not in robots.meta  # robots.txt has its own bound and no content
    sitemap = Request("http://a.test/sitemap.xml", meta={SITEMAP: True})
    m.process_response(sitemap, HtmlResponse(sitemap.url, body=b"a" * 4000, request=sitemap))
    assert WHOLE_BODY not in sitemap.meta
    # a request's own download_maxsize: Scrapy drops a body past it, so the download stops there
    small = Request("http://a.test/y", meta={"download_maxsize": 3000})
    m.process_request(small)
    with pytest.raises(StopDownload):
        m._bytes_received(b"a" * 3001, small)
    out = m.process_response(small, HtmlResponse(small.url, body=b"a" * 3001, request=small))
    assert len(out.body) == 1000 and small.meta[WHOLE_BODY] is None
