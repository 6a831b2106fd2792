"""Fuzzing URL handling and HTML extraction with hypothesis: no exception escapes the spider.

Bounded for the suite: a fixed number of examples, derandomized (the same examples every run,
so a failure is reproducible).  ``FOCUS_FUZZ_EXAMPLES=20000 FOCUS_FUZZ_RANDOM=1 pytest
tests/integration/test_fuzz.py`` fuzzes longer with fresh examples.

Found so far, and fixed: ``canonical`` returned ``https:///`` (no host) for a host made of
control characters; ``extract`` raised on ``<base href="http://[::1">``.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urljoin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.test import get_crawler

from focuscrawl.core.extract import ExtractedPage, _Joiner, extract
from focuscrawl.core.urls import canonical
from focuscrawl.seam.scheduler import FocusScheduler
from spiders.topic import TopicSpider
from tests.support.project import SCHEDULER_PARTS, project_settings

EXAMPLES = int(os.environ.get("FOCUS_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                derandomize=not os.environ.get("FOCUS_FUZZ_RANDOM"),
                suppress_health_check=list(HealthCheck))

# -- strategies: URLs a hostile page can write -------------------------------------------
SCHEMES = st.sampled_from(["http", "https", "HTTP", "hTtPs", "ftp", "javascript", "mailto",
                           "data", "file", "", "h\u0442tp", " http"])
HOSTS = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["a.test", "[::1]", "[::1", "[zz]", "127.0.0.1", "xn--", "xn--a.test",
                     "\u00c4\u00d6.com", "a..b", "%41.com", "a.test:99999", "a.test:abc",
                     "u:p@a.test", "[fe80::1%25eth0]", ".", "a.test:", ":80", "\x02\x02",
                     "a\u3002test", "\u200b.test", "A.TEST."]),
)
PATHS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["/", "/a b", "/%zz", "/?q=%", "/#frag", "/\x00", "/..", "//x", "?a=1&a=2",
                     "/%E2%82", "/\ud800", "/" + "a" * 3000, "/;jsessionid=1?sid=2"]),
)
URLS = st.one_of(st.text(max_size=80),
                 st.builds(lambda s, h, p: f"{s}://{h}{p}", SCHEMES, HOSTS, PATHS),
                 st.builds(lambda h, p: f"//{h}{p}", HOSTS, PATHS))

TAGS = st.sampled_from(["a", "area", "base", "title", "meta", "p", "div", "script", "style",
                        "body", "head", "html", "svg", "template", "noscript", "iframe",
                        "!--", "![CDATA[", "?xml", "!DOCTYPE", "table", "frameset"])
ATTRS = st.lists(st.tuples(
    st.sampled_from(["href", "rel", "http-equiv", "content", "alt", "title", "charset"]),
    st.one_of(URLS, st.sampled_from(["refresh", "nofollow", "0;url=http://b.test/",
                                     "&amp;&#0;&#xD800;&#99999999;", "\"'<>"]))), max_size=3)


def _element(tag: str, attrs: list[tuple[str, str]], text: str, close: bool) -> str:
    rendered = "".join(f' {k}="{v}"' for k, v in attrs)
    return f"<{tag}{rendered}>{text}" + (f"</{tag}>" if close else "")


HTML = st.one_of(
    st.text(max_size=300),
    st.lists(st.builds(_element, TAGS, ATTRS, st.text(max_size=20), st.booleans()),
             max_size=25).map("".join),
)
PAGE_URLS = st.sampled_from(["http://a.test/", "http://a.test/x/y.html?q=1", "https://b.test",
                             "http://[::1]/", "http://xn--nxasmq6b.test/", "http://a.test:8080/"])


# -- URL handling ---------------------------------------------------------------------------
@FUZZ
@given(URLS)
def test_canonical_returns_a_fetchable_url_or_raises_value_error(url: str) -> None:
    try:
        result = canonical(url)
    except ValueError:
        return
    assert result.split(":", 1)[0] in ("http", "https")
    assert canonical(result) == result  # stable: the scheduler canonicalises again
    Request(result)  # Scrapy accepts it


def test_canonical_regressions() -> None:
    for url in ("https://\x02\x02", "http://\x00/", "http:// /x"):
        try:
            canonical(url)
        except ValueError:
            continue
        raise AssertionError(f"{url!r} was accepted")


# -- HTML extraction ------------------------------------------------------------------------
@FUZZ
@given(HTML, PAGE_URLS)
def test_extract_never_raises(html: str, url: str) -> None:
    page = extract(html, url)
    assert isinstance(page, ExtractedPage)
    assert all(isinstance(link.url, str) for link in page.links)


BASES = st.one_of(PAGE_URLS, st.sampled_from([
    "http://a.test/d/p.html?q=1#top", "https://a.test?x", "http://a.test/d/#", "http://a.test/a b",
    "http://[::1", "mailto:x@a.test"]), URLS)
HREFS = st.one_of(URLS, PATHS, st.builds(lambda t: "#" + t, st.text(max_size=20)),
                  st.sampled_from(["#", "##", "#a#b", "#\t", "#x\x01", "#é", "#/../x"]))


@FUZZ
@given(BASES, st.lists(HREFS, min_size=1, max_size=5))
def test_the_link_joiner_answers_as_urljoin(base: str, hrefs: list[str]) -> None:
    """The cached and fragment shortcuts of ``_Joiner`` give urljoin's answer, errors too."""
    join = _Joiner(base)
    for href in [h for h in hrefs if h]:
        try:
            expected: str | type = urljoin(base, href)
        except ValueError:
            expected = ValueError
        try:
            got: str | type = join(href)
        except ValueError:
            got = ValueError
        assert got == expected, (base, href)


def test_extract_regression_invalid_base() -> None:
    page = extract('<base href="http://[::1"><a href="/x">x</a>', "http://a.test/p.html")
    assert [link.url for link in page.links] == ["http://a.test/x"]


# -- the spider's parse and its outlinks through the scheduler --------------------------------
class _Stats:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.get(key, start) + count

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value


class _Signals:
    @staticmethod
    def send_catch_log(*args: Any, **kwargs: Any) -> list:
        return []


class _Crawler:
    stats = _Stats()
    signals = _Signals()


def _spider(**kwargs: Any) -> TopicSpider:
    spider = TopicSpider(keywords="garden compost", seeds="http://a.test/", **kwargs)
    spider.settings = project_settings()
    spider.crawler = _Crawler
    spider._configure()
    return spider


SPIDERS = [_spider(), _spider(allowed_domains="a.test")]
_crawler = get_crawler(Spider, {"FOCUS_STRATEGY": "cho-distance", "FOCUS_MAX_PAGES": 0,
                                **SCHEDULER_PARTS})
_crawler.engine = type("NoEngine", (), {"_slot": None})()
SCHEDULER = FocusScheduler.from_crawler(_crawler)
SCHEDULER.open(Spider("fuzz"))

CONTENT_TYPES = st.sampled_from([
    b"text/html", b"text/html; charset=utf-8", b"text/html; charset=x-bogus",
    b"text/html; charset=utf-16", b"", b"application/xhtml+xml", b'text/html; charset="',
    b"text/plain", b"text/html; charset=shift_jis",
])
BODIES = st.one_of(HTML.map(lambda s: s.encode("utf-8", "surrogatepass")),
                   st.binary(max_size=600),
                   HTML.map(lambda s: s.encode("utf-16", "surrogatepass")))


@FUZZ
@given(BODIES, CONTENT_TYPES, PAGE_URLS, st.booleans(), st.integers(0, 1))
def test_spider_parse_and_link_handling_never_raise(body: bytes, ctype: bytes, url: str,
                                                    as_html: bool, which: int) -> None:
    request = Request(url, meta={"depth": 1, "focus_order": 3,
                                 "focus": {"anchor": "x", "parent": "http://a.test/"}})
    cls = HtmlResponse if as_html else TextResponse
    response = cls(url, body=body, headers={"Content-Type": ctype} if ctype else {},
                   request=request)
    for out in SPIDERS[which].parse(response):
        if isinstance(out, Request):
            SCHEDULER.enqueue_request(out)  # canonical again, server key, frontier.add
    while (handed := SCHEDULER.next_request()) is not None:
        SCHEDULER.policy.unreserve(handed.meta["focus_server"])
