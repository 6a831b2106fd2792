"""The topic spider through the real Scrapy engine against a local multi-host web server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_twisted
from scrapy.http import HtmlResponse, Request

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam.services import KnownUrls
from spiders.topic import TopicSpider
from tests.support.project import crawl, project_settings

ROOT = Path(__file__).resolve().parents[2]


def html(title: str, body: str, links: list[tuple[str, str]] = ()) -> str:
    anchors = " ".join(f'<a href="{href}">{text}</a>' for href, text in links)
    return (f"<html><head><title>{title}</title><style>p {{color: red}}</style>"
            f"<script>var regex = 'regex regex regex';</script></head>"
            f"<body><p>{body}</p>{anchors}</body></html>")


PAGES = {
    "a.test": {
        "/index.html": Page(html("Welcome", "An index of things.", [
            ("/regex.html", "Regular expressions"), ("/cooking.html", "Cooking"),
            ("http://b.test/old.html", "moved"), ("mailto:x@a.test", "mail us"),
            ("/file.pdf", "a pdf"), ("/regex.html#syntax", "same page, another anchor"),
        ])),
        "/regex.html": Page(html("Regex guide", "regex " * 12 + "patterns and matching", [
            ("/index.html", "home"), ("http://b.test/deep/regex-more.html", "more"),
        ])),
        "/cooking.html": Page(html("Cooking", "Pasta, bread and soup recipes.")),
        "/file.pdf": Page(b"%PDF-1.4 binary", content_type="application/pdf"),
    },
    "b.test": {
        "/old.html": Page.redirect("/new.html"),
        "/new.html": Page(html("New page", "Fresh content about gardening.")),
        "/deep/regex-more.html": Page(html("More regex", "Lookahead regex syntax.")),
    },
}


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=PAGES) as srv:
        yield srv


@pytest_twisted.ensureDeferred
async def test_items_fields_redirects_and_order(server, proxy_to):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="regex",
                         seeds="http://a.test/index.html", strategy="best-first")
    by_url = {i["url"]: i for i in result.items}
    assert set(by_url) == {
        "http://a.test/index.html", "http://a.test/regex.html", "http://a.test/cooking.html",
        "http://b.test/new.html", "http://b.test/deep/regex-more.html",
    }  # the PDF is fetched but not parsed; the fragment link is the same page
    assert result.stats["focus/skipped/not_html"] == 1
    assert result.stats["focus/links/not_http"] >= 1  # mailto:
    # outlinks are kept as compact records (Referer included); only the redirect, which
    # carries Scrapy's redirect bookkeeping in meta, is stored as a whole request
    assert result.stats["focus/requests_stored_whole"] == 1

    page = by_url["http://a.test/regex.html"]
    assert page["status"] == 200
    assert page["title"] == "Regex guide"
    assert page["hot"] is True  # 12 occurrences in the body (the script's don't count)
    assert page["score"] > 0.9
    assert page["depth"] == 1
    assert page["parent"] == "http://a.test/index.html"
    assert page["anchor"] == "Regular expressions"
    assert page["content_type"].startswith("text/html")
    # content=text (the default): the main text, and its length
    assert page["text"].startswith("regex " * 11 + "regex patterns and matching")
    assert page["text_length"] == len(page["text"])
    assert page["outlinks"] == 2
    assert page["truncated"] is False
    assert page["fetched_at"].endswith("+00:00")
    assert "why" not in page  # only with FOCUS_EXPLAIN

    cooking = by_url["http://a.test/cooking.html"]
    assert cooking["score"] == 0.0 and cooking["hot"] is False

    moved = by_url["http://b.test/new.html"]  # the URL after the redirect
    assert moved["parent"] == "http://a.test/index.html" and moved["anchor"] == "moved"

    # crawl order: every page numbered once; best-first fetched the regex page (linked by the
    # index with a parent score) before the pages linked from the irrelevant cooking page
    orders = sorted(i["order"] for i in result.items)
    assert len(set(orders)) == len(orders) and orders[0] == 1
    assert by_url["http://a.test/index.html"]["order"] == 1
    assert by_url["http://b.test/deep/regex-more.html"]["priority"] == page["score"]


@pytest_twisted.ensureDeferred
async def test_explain_adds_why_each_url_was_chosen(server, proxy_to, tmp_path):
    """FOCUS_EXPLAIN: each item of the learned order says why its URL was chosen (the parts
    of its priority), in the JSON lines too; an order without parts adds nothing."""
    proxy_to(server)
    out = tmp_path / "pages.jsonl"
    result = await crawl(project_settings(FOCUS_DELAY=0, FOCUS_EXPLAIN=True,
                                          FEEDS={str(out): {"format": "jsonlines"}}),
                         keywords="regex", seeds="http://a.test/index.html", strategy="learned")
    assert len(result.items) == 5
    for item in result.items:
        assert {"bias", "words", "profile"} <= set(item["why"])
    regex = next(i for i in result.items if i["url"] == "http://a.test/regex.html")
    assert regex["why"]["kw_url"] > 0  # the keyword is in its URL
    exported = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [line["why"] for line in exported] == [item["why"] for item in result.items]

    plain = await crawl(project_settings(FOCUS_DELAY=0, FOCUS_EXPLAIN=True), keywords="regex",
                        seeds="http://a.test/index.html", strategy="best-first")
    assert plain.items and all("why" not in item for item in plain.items)


@pytest_twisted.ensureDeferred
async def test_max_pages_is_exact(server, proxy_to):
    proxy_to(server)
    before = len(server.read_log())
    result = await crawl(project_settings(FOCUS_DELAY=0, CONCURRENT_REQUESTS=8),
                         keywords="regex", seeds="http://a.test/index.html", max_pages="3")
    assert len(result.items) == 3
    # a redirect is a hop, not a page: MAX_PAGES counts the pages (2xx) the server sent
    fetched = [r for r in server.read_log()[before:]
               if r["path"] != "/robots.txt" and 200 <= int(r["status"]) < 300]
    assert len(fetched) == 3
    assert result.stats["focus/pages_fetched"] == 3


@pytest_twisted.ensureDeferred
async def test_max_pages_counts_pages_not_errors(proxy_to):
    """An error status gives no page: MAX_PAGES=3 ends with three pages to show however many
    of the links the crawl tried first were broken (Pant et al. count "only good links")."""
    broken = [(f"/regex-{i}.html", "regex notes") for i in range(4)]  # the best links, all 404
    pages = {"e.test": {
        "/index.html": Page(html("Regex index", "regex " * 3, [
            *broken, ("/down.html", "regex down"), ("/p1.html", "one"), ("/p2.html", "two"),
            ("/p3.html", "three")])),
        "/down.html": Page(html("Down", "regex"), status=503),
        **{f"/p{i}.html": Page(html(f"Page {i}", "text")) for i in (1, 2, 3)},
    }}
    with ServerProcess(pages=pages) as srv:
        proxy_to(srv)
        result = await crawl(project_settings(FOCUS_DELAY=0, RETRY_TIMES=0), keywords="regex",
                             seeds="http://e.test/index.html", strategy="best-first",
                             max_pages="3")
        rows = [r for r in srv.read_log() if r["path"] != "/robots.txt"]
    assert [r["status"] for r in rows if r["status"] >= 400] == [404] * 4 + [503]
    assert len(result.items) == 3 and result.stats["focus/pages_fetched"] == 3
    assert sorted(r["path"] for r in rows if r["status"] == 200) == sorted(
        i["url"].removeprefix("http://e.test") for i in result.items)


@pytest.mark.parametrize("strategy", ["best-first", "learned"])
@pytest_twisted.ensureDeferred
async def test_a_file_that_is_not_html_is_no_page(proxy_to, strategy):
    """A text file (a documentation site's page sources, say) is fetched but is no page: it
    uses none of MAX_PAGES, and the learned order learns from it as from an error (its link
    is labelled: it was not worth a fetch), so that it does not spend a crawl on such links."""
    sources = [(f"/_sources/regex-{i}.txt", "regex notes") for i in range(4)]  # the best links
    pages = {"e.test": {
        "/index.html": Page(html("Regex index", "regex " * 3, [
            *sources, ("/p1.html", "one"), ("/p2.html", "two"), ("/p3.html", "three")])),
        **{path: Page("regex notes " * 20, content_type="text/plain") for path, _ in sources},
        **{f"/p{i}.html": Page(html(f"Page {i}", "text")) for i in (1, 2, 3)},
    }}
    with ServerProcess(pages=pages) as srv:
        proxy_to(srv)
        result = await crawl(project_settings(FOCUS_DELAY=0), keywords="regex",
                             seeds="http://e.test/index.html", strategy=strategy,
                             max_pages="4")
        rows = [r for r in srv.read_log() if r["path"] != "/robots.txt"]
    assert sorted(r["path"] for r in rows if r["path"].endswith(".txt")) == sorted(
        path for path, _ in sources)
    assert all(r["status"] == 200 for r in rows) and len(rows) == 8
    assert len(result.items) == 4 and result.stats["focus/pages_fetched"] == 4
    assert result.stats["focus/skipped/not_html"] == 4
    if strategy == "learned":  # every URL handed out taught a label, the text files too
        assert result.stats["focus/learned_examples"] == len(rows)


@pytest_twisted.ensureDeferred
async def test_the_log_ends_with_a_focus_summary(server, proxy_to, caplog, tmp_path):
    proxy_to(server)
    caplog.set_level("INFO")
    out = tmp_path / "out.jsonl"
    result = await crawl(project_settings(FOCUS_DELAY=0, FEEDS={str(out): {"format": "jsonl"}}),
                         keywords="regex", seeds="http://a.test/index.html", max_pages="4")
    relevant = result.stats["focus/relevant_pages"]
    lines = [r.getMessage() for r in caplog.records if r.name == "focuscrawl.seam.watch.logstats"
             and r.getMessage().startswith("Focus finished")]  # not the periodic lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("Focus finished (finished) in ")
    assert f": 4 pages, {relevant} relevant (harvest {relevant / 4:.2f}), " in lines[0]
    assert lines[0].endswith(f"output: {out}")
    assert len(out.read_text().splitlines()) == len(result.items)


def test_focus_line_says_share_harvest_and_eta():
    from focuscrawl.seam.watch.logstats import focus_line

    p = {"pages": 120, "max_pages": 500, "queued": 2345, "hot": 37, "servers": 9,
         "servers_busy": 3}
    assert focus_line(p, 51, 2.0) == ("120/500 pages (24%), 51 relevant (harvest 0.42), 37 hot, "
                                      "2345 queued, servers 3 busy of 9, 120 pages/min, ETA 3m10s")
    assert focus_line(dict(p, queued=0), 51, None, final=True) == (
        "120 pages, 51 relevant (harvest 0.42), 37 hot, 0 queued, servers 3 busy of 9")


def configured_spider(values: dict, **settings) -> TopicSpider:
    """A topic spider for "regex", configured without a crawl: its stats go to ``values``."""
    spider = TopicSpider(keywords="regex", seeds="http://a.test/index.html")
    spider.settings = project_settings(**settings)

    class FakeCrawler:
        class stats:  # noqa: N801 - a minimal stats collector
            @staticmethod
            def inc_value(key, count=1, start=0):
                values[key] = values.get(key, start) + count

            @staticmethod
            def set_value(key, value):
                values[key] = value

        class signals:  # noqa: N801
            @staticmethod
            def send_catch_log(*args, **kwargs):
                return []

    spider.crawler = FakeCrawler
    spider._configure()
    return spider


def test_outlink_requests_carry_what_the_scheduler_needs():
    spider = configured_spider({})
    body = PAGES["a.test"]["/regex.html"].body
    request = Request("http://a.test/regex.html", meta={"depth": 1, "focus_order": 7, "focus": {
        "anchor": "Regular expressions", "parent": "http://a.test/index.html"}})
    response = HtmlResponse(request.url, body=body.encode(), encoding="utf-8", request=request,
                            headers={"Content-Type": "text/html"})
    out = list(spider.parse(response))
    item, requests = out[0], out[1:]
    assert item.order == 7 and item.anchor == "Regular expressions"
    assert [r.url for r in requests] == ["http://a.test/index.html",
                                         "http://b.test/deep/regex-more.html"]
    meta = requests[1].meta["focus"]
    assert meta["parent"] == "http://a.test/regex.html"
    assert meta["parent_score"] == pytest.approx(item.score)
    assert meta["parent_hot"] is True
    assert meta["anchor"] == "more"
    assert meta["keyword"] is True  # "regex" is in the URL
    assert requests[0].meta["focus"]["keyword"] is False


def test_links_the_crawl_order_ignores_are_dropped_before_a_request_is_built():
    """A link to a URL the scheduler's frontier ignores (``KnownUrls``) yields nothing; the
    page's count of them goes to ``focus/links/known`` once.  The answer is asked with the
    page's URL (the learned order counts an in-link from it)."""
    values: dict = {}
    spider = configured_spider(values)
    spider.known_urls = KnownUrls()
    asked: list[str] = []
    parents: set[str] = set()
    spider.known_urls.register(
        lambda url, score, parent, anchor, context: asked.append(url) or parents.add(parent)
        or url.endswith("/index.html") and score > 0)
    body = PAGES["a.test"]["/regex.html"].body
    response = HtmlResponse("http://a.test/regex.html", body=body.encode(), encoding="utf-8",
                            headers={"Content-Type": "text/html"},
                            request=Request("http://a.test/regex.html"))
    requests = list(spider.parse(response))[1:]
    assert [r.url for r in requests] == ["http://b.test/deep/regex-more.html"]
    assert asked == ["http://a.test/index.html", "http://b.test/deep/regex-more.html"]
    assert parents == {"http://a.test/regex.html"}
    assert values["focus/links/known"] == 1
    spider.known_urls.register(None)  # the scheduler closed: every link is built again
    assert len(list(spider.parse(response))) == 3


def test_the_question_about_a_link_carries_its_anchor_and_context():
    """The learned order keeps, for a queued URL, the keyword matches of its best in-link, so
    ``KnownUrls`` is asked with the link's anchor text and the text around it."""
    spider = configured_spider({})
    spider.known_urls = KnownUrls()
    asked: dict[str, tuple[str, str]] = {}
    spider.known_urls.register(
        lambda url, score, parent, anchor, context: asked.setdefault(url, (anchor, str(context)))
        and False)
    response = HtmlResponse("http://a.test/regex.html", encoding="utf-8",
                            body=PAGES["a.test"]["/regex.html"].body.encode(),
                            headers={"Content-Type": "text/html"},
                            request=Request("http://a.test/regex.html"))
    assert len(list(spider.parse(response))) == 3  # the page and both links: none dropped
    anchor, context = asked["http://b.test/deep/regex-more.html"]
    assert anchor == "more"
    assert "regex" in context  # the page's text about regex, around the link


@pytest.mark.parametrize("args, message", [
    ({"seeds": "http://a.test/"}, "keywords are required"),
    ({"keywords": "  ", "seeds": "http://a.test/"}, "keywords are required"),
    ({"keywords": "the of", "seeds": "http://a.test/"}, "only stop words"),
    ({"keywords": "regex", "seeds": "htp:/broken"}, "malformed seed URL"),
    ({"keywords": "regex"}, "no seed URLs"),
    ({"keywords": "regex", "seeds": "http://a.test/", "strategy": "dfs"}, "unknown strategy"),
    ({"keywords": "regex", "seeds": "http://a.test/", "max_pages": "many"}, "must be an integer"),
    ({"keywords": "regex", "seeds": "http://a.test/", "max_page": "5"},
     "unknown argument 'max_page'; did you mean max_pages?"),
])
@pytest_twisted.ensureDeferred
async def test_argument_errors_stop_the_crawl_at_start(args, message):
    result = await crawl(project_settings(), **args)
    assert result.items == []
    assert result.stats["finish_reason"] == "bad_arguments"
    assert message in result.stats["focus/argument_error"]
    assert "downloader/request_count" not in result.stats


@pytest.mark.parametrize("argument, message", [
    ("keywords=", "focuscrawl: keywords are required"),
    ("max_page=5", "focuscrawl: unknown argument 'max_page'; did you mean max_pages?"),
])
def test_argument_error_is_one_line_on_the_command_line(tmp_path, argument, message):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    keywords = [] if argument.startswith("keywords=") else ["-a", "keywords=x"]
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topic", *keywords, "-a", argument,
         "-a", "seeds=http://a.test/", "-s", "LOG_LEVEL=ERROR",
         # the default feed (no -o) in this test's directory, not the tree's output/
         "-s", f"FOCUS_DEFAULT_FEED={tmp_path / 'output' / '%(name)s-%(time)s.jsonl'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert message in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1  # a crawl that cannot start does not report success


def test_a_jobdir_resumed_with_another_crawl_order_stops_with_one_line(tmp_path):
    """The first run is a crawl (its seed is a local address: it ends at once, exit 0); the
    second asks another strategy of the same JOBDIR: one line naming it, exit 1."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("http_proxy", None)

    def run(strategy: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "keywords=alpha",
             "-a", "seeds=http://127.0.0.1:9/", "-a", f"strategy={strategy}",
             "-s", f"JOBDIR={tmp_path / 'job'}", "-s", "LOG_LEVEL=ERROR",
             "-o", str(tmp_path / "out.jsonl")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )

    first = run("best-first")
    assert first.returncode == 0, first.stderr
    again = run("cho")
    lines = [ln for ln in again.stderr.splitlines() if ln.strip()]
    assert again.returncode == 1
    assert len(lines) == 1 and "Traceback" not in again.stderr, again.stderr
    assert "strategy='best-first'" in lines[0] and "strategy='cho'" in lines[0]
    assert run("best-first").returncode == 0  # the same order resumes


def test_seeds_from_a_file(tmp_path):
    from focuscrawl.seam.arguments import parse_seeds

    f = tmp_path / "seeds.txt"
    f.write_text("# my seeds\nhttp://a.test/x#frag\n\nhttp://b.test/?b=2&a=1\n")
    assert parse_seeds(str(f)) == ["http://a.test/x", "http://b.test/?a=1&b=2"]
