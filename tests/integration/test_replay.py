"""Replay download handler: a spider crawls a hand-written WARC of hosts that do not resolve."""

from __future__ import annotations

import gzip
import io
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy.crawler import CrawlerRunner
from scrapy.http import TextResponse
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.evaluation import Repository, WarcIndex, canonical_url

A = "http://site-a.invalid"
B = "https://site-b.invalid"
DEAD = "http://dead.invalid/"
BINARY = bytes(range(256)) * 4
GZ_HTML = b"<html><head><title>Zipped</title></head><body>compressed page</body></html>"
# compressed once: gzip.compress stamps the current second into the header, so two calls
# a second apart give different bytes
GZ_BODY = gzip.compress(GZ_HTML, mtime=0)
HOME = f"""<html><head><title>Home</title></head><body>
<a href="/page2.html">two</a> <a href="/old">old</a> <a href="/missing">missing</a>
<a href="/private/secret.html">secret</a> <a href="/notrecorded.html">not recorded</a>
<a href="{B}/doc.bin">binary</a> <a href="/q?b=2&amp;a=1#frag">query</a>
<a href="/flaky.html">flaky</a> <a href="/retried.html">retried</a>
<a href="/chunked.html">chunked</a> <a href="/gz.html">gz</a>
</body></html>""".encode()


def html(title: str, text: str) -> bytes:
    return f"<html><head><title>{title}</title></head><body><p>{text}</p></body></html>".encode()


def write_warc(path: str) -> None:
    """The repository, written with warcio directly (not with focuscrawl's recorder)."""
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)

        def resp(url: str, status: str, headers: list[tuple[str, str]], body: bytes) -> None:
            http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http))

        page = [("Content-Type", "text/html; charset=utf-8")]
        w.write_record(w.create_warcinfo_record("test.warc.gz", {"software": "test"}))
        # a fetch that failed without a response, as focuscrawl.seam.output.warc records it
        data = b"error: scrapy.exceptions.CannotResolveHostError\r\n"
        w.write_record(w.create_warc_record(
            DEAD, "metadata", payload=io.BytesIO(data), length=len(data),
            warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Focus-Error": "scrapy.exceptions.CannotResolveHostError"}))
        resp(f"{A}/robots.txt", "200 OK", [("Content-Type", "text/plain")],
             b"User-agent: *\nDisallow: /private/\n")
        resp(f"{A}/", "200 OK", [*page, ("X-Multi", "one"), ("X-Multi", "two")], HOME)
        resp(f"{A}/page2.html", "200 OK", page, html("Two", "page two"))
        resp(f"{A}/old", "301 Moved Permanently", [("Location", "/target.html")], b"")
        resp(f"{A}/target.html", "200 OK", page, html("Target", "redirect target"))
        resp(f"{A}/missing", "404 Not Found", page, html("Gone", "gone"))
        resp(f"{B}/doc.bin", "200 OK", [("Content-Type", "application/octet-stream")], BINARY)
        resp(f"{A}/q?a=1&b=2", "200 OK", page, html("Query", "query page"))
        resp(f"{A}/flaky.html", "200 OK", page, html("Flaky", "good flaky"))
        resp(f"{A}/flaky.html", "503 Service Unavailable", page, html("Busy", "busy"))
        resp(f"{A}/retried.html", "503 Service Unavailable", page, html("Busy", "busy"))
        resp(f"{A}/retried.html", "200 OK", page, html("Retried", "second try"))
        resp(f"{A}/chunked.html", "200 OK", [*page, ("Transfer-Encoding", "chunked")],
             b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        resp(f"{A}/gz.html", "200 OK", [*page, ("Content-Encoding", "gzip")],
             GZ_BODY)
        resp(f"{A}/private/secret.html", "200 OK", page, html("Secret", "never fetched"))


@pytest.fixture
def warc(tmp_path) -> str:
    path = str(tmp_path / "repo.warc.gz")
    write_warc(path)
    return path


class RecordingSpider(scrapy.Spider):
    """Follows every link of HTML pages; keeps what it received by canonical URL."""

    name = "recording"

    def __init__(self, seeds: list[str], seen: dict[str, dict[str, Any]], **kw: Any) -> None:
        super().__init__(**kw)
        self.seeds = seeds
        self.seen = seen

    async def start(self):
        for url in self.seeds:
            yield scrapy.Request(url, meta={"handle_httpstatus_list": [404, 500, 503]},
                                 errback=self.failed)

    def failed(self, failure):
        self.seen[canonical_url(failure.request.url)] = {"error": type(failure.value).__name__}

    def parse(self, response):
        self.seen[canonical_url(response.url)] = {
            "status": response.status,
            "body": response.body,
            "headers": {k.decode(): [v.decode("latin-1") for v in vs]
                        for k, vs in response.headers.items()},
            "redirects": response.meta.get("redirect_urls", []),
            "flags": list(response.flags),
            "text": isinstance(response, TextResponse),
        }
        if isinstance(response, TextResponse) and response.status == 200:
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, meta={"handle_httpstatus_list": [404, 500, 503]})


def settings(**extra: Any) -> dict[str, Any]:
    return {
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "WARNING",
        "DOWNLOAD_HANDLERS": {"http": "focuscrawl.seam.replay.ReplayDownloadHandler",
                              "https": "focuscrawl.seam.replay.ReplayDownloadHandler"},
        **extra,
    }


async def crawl(seeds: list[str], **extra: Any) -> tuple[dict[str, dict[str, Any]], Any]:
    seen: dict[str, dict[str, Any]] = {}
    runner = CrawlerRunner(settings(**extra))
    crawler = runner.create_crawler(RecordingSpider)
    await runner.crawl(crawler, seeds=seeds, seen=seen)
    return seen, crawler


@pytest_twisted.ensureDeferred
async def test_replay_serves_the_warc_without_network(warc: str) -> None:
    seen, crawler = await crawl([f"{A}/"], FOCUS_REPLAY=warc)
    stats = crawler.stats.get_stats()

    home = seen[f"{A}/"]
    assert home["status"] == 200 and home["body"] == HOME
    assert home["headers"]["X-Multi"] == ["one", "two"]  # repeated headers kept, in order
    assert "replay" in home["flags"]
    # a recorded 301 is replayed and followed by RedirectMiddleware
    target = seen[f"{A}/target.html"]
    assert target["redirects"] == [f"{A}/old"] and b"redirect target" in target["body"]
    assert f"{A}/old" not in seen
    # recorded 404 as recorded; unrecorded URL -> synthetic 404
    assert seen[f"{A}/missing"]["status"] == 404 and b"gone" in seen[f"{A}/missing"]["body"]
    assert seen[f"{A}/notrecorded.html"]["status"] == 404
    assert "replay-miss" in seen[f"{A}/notrecorded.html"]["flags"]
    # binary body byte for byte, not a text response
    doc = seen[f"{B}/doc.bin"]
    assert doc["body"] == BINARY and not doc["text"]
    # query order and fragment do not matter
    assert b"query page" in seen[canonical_url(f"{A}/q?b=2&a=1")]["body"]
    # a transient error never hides an earlier good answer; a later good one wins
    assert b"good flaky" in seen[f"{A}/flaky.html"]["body"]
    assert b"second try" in seen[f"{A}/retried.html"]["body"]
    # a foreign WARC's chunked body is de-chunked; a gzip body is decompressed by Scrapy
    assert seen[f"{A}/chunked.html"]["body"] == b"hello world"
    assert seen[f"{A}/gz.html"]["body"] == GZ_HTML
    # robots.txt came from the WARC (site-a forbids /private/); site-b's is not recorded -> 404
    assert f"{A}/private/secret.html" not in seen
    assert stats.get("robotstxt/forbidden") == 1
    assert stats.get("robotstxt/response_status_count/404") == 1
    assert stats.get("replay/miss") == 2  # site-b robots.txt and notrecorded.html
    # nothing touched the network (these hosts do not even resolve): the only downloader
    # "exception" is robots.txt's IgnoreRequest for /private/
    errors = {k: v for k, v in stats.items() if k.startswith("downloader/exception_type")}
    assert errors == {"downloader/exception_type_count/scrapy.exceptions.IgnoreRequest": 1}
    assert len(seen) == 11


@pytest_twisted.ensureDeferred
async def test_recorded_failure_fails_again(warc: str) -> None:
    seen, crawler = await crawl([DEAD, f"{A}/page2.html"], FOCUS_REPLAY=warc)
    assert seen[DEAD] == {"error": "CannotResolveHostError"}
    assert seen[f"{A}/page2.html"]["status"] == 200
    assert crawler.stats.get_value("replay/failure") == 1


@pytest_twisted.ensureDeferred
async def test_http_and_https_handlers_share_one_index(warc: str) -> None:
    _seen, crawler = await crawl([f"{A}/page2.html", f"{B}/doc.bin"], FOCUS_REPLAY=warc)
    handlers = crawler.engine.downloader.handlers._handlers
    assert handlers["http"] is not handlers["https"]
    assert handlers["http"].index is handlers["https"].index


@pytest_twisted.ensureDeferred
async def test_replay_is_deterministic(warc: str) -> None:
    first, _ = await crawl([f"{A}/"], FOCUS_REPLAY=warc)
    second, _ = await crawl([f"{A}/"], FOCUS_REPLAY=warc)
    assert first == second


def test_index_picks_records_and_reads_bodies(warc: str) -> None:
    with WarcIndex(warc) as idx:
        assert len(idx) == 13 and not idx.truncated
        assert idx.get(f"{A}/flaky.html").status == 200
        assert idx.get(f"{A}/retried.html").status == 200
        assert idx.get(f"{A}/q?b=2&a=1#x").url == f"{A}/q?a=1&b=2"
        old = idx.get(f"{A}/old")
        assert old.status == 301 and old.header("location") == "/target.html"
        gz = idx.get(f"{A}/gz.html")
        assert idx.body(gz) == GZ_BODY  # as on the wire
        assert idx.body(gz, decode_content=True) == GZ_HTML
        assert idx.get(f"{A}/nothing") is None
        assert idx.error(DEAD) == "scrapy.exceptions.CannotResolveHostError"
        assert idx.error(f"{A}/old") is None


def test_truncated_warc_keeps_complete_records(warc: str, tmp_path) -> None:
    data = open(warc, "rb").read()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[:-30])  # the last record (private/secret.html) loses its end
    with WarcIndex(cut) as idx:
        assert idx.truncated
        assert idx.get(f"{A}/gz.html") is not None
        assert idx.get(f"{A}/private/secret.html") is None


def test_repository_from_handwritten_warc(warc: str) -> None:
    repo = Repository.from_warc(warc)
    # HTML 2xx pages only: not the binary, not the 404, not robots.txt
    assert f"{B}/doc.bin" not in repo and f"{A}/missing" not in repo
    assert repo[f"{A}/gz.html"].title == "Zipped"
    assert repo[f"{A}/old"].title == "Target"  # a recorded redirect resolves to its target
    home = repo[f"{A}/"]
    # links land on pages of the WARC, through redirects; unrecorded and non-page links dropped
    assert f"{A}/target.html" in home.outlinks and f"{A}/page2.html" in home.outlinks
    assert f"{A}/notrecorded.html" not in home.outlinks and f"{B}/doc.bin" not in home.outlinks
    assert repo[f"{A}/chunked.html"].text == "hello world"
