"""WARC recording: crawl a real loopback server, read the WARC back with warcio, replay it."""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest_twisted
import scrapy
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse, Request, TextResponse
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.evaluation import Repository, WarcIndex, canonical_url
from focuscrawl.seam.output.warc import WarcRecorder

BINARY = bytes(range(256)) * 8
GZ_HTML = b"<html><head><title>Zipped</title></head><body>compressed words</body></html>"
HOME = b"""<html><head><title>Home</title></head><body>
<a href="/a.html">a</a> <a href="/old">old</a> <a href="/missing">missing</a>
<a href="/error">error</a> <a href="/img.bin">img</a> <a href="/gz.html">gz</a>
<a href="/chunked.html">chunked</a> <a href="/private/x.html">private</a>
</body></html>"""
PAGE = "text/html; charset=utf-8"
ROUTES: dict[str, tuple[int, list[tuple[str, str]], bytes]] = {
    "/robots.txt": (200, [("Content-Type", "text/plain")], b"User-agent: *\nDisallow: /private/\n"),
    "/": (200, [("Content-Type", PAGE)], HOME),
    "/a.html": (200, [("Content-Type", PAGE)],
                b"<html><head><title>A</title></head><body><a href='/'>home</a> a</body></html>"),
    "/old": (301, [("Location", "/target.html")], b""),
    "/target.html": (200, [("Content-Type", PAGE), ("X-Extra", "1"), ("X-Extra", "2")],
                     b"<html><head><title>Target</title></head><body>moved here</body></html>"),
    "/missing": (404, [("Content-Type", PAGE)], b"<html><body>not here</body></html>"),
    "/error": (500, [("Content-Type", PAGE)], b"<html><body>broken</body></html>"),
    "/img.bin": (200, [("Content-Type", "application/octet-stream")], BINARY),
    "/gz.html": (200, [("Content-Type", PAGE), ("Content-Encoding", "gzip")],
                 gzip.compress(GZ_HTML)),
    "/private/x.html": (200, [("Content-Type", PAGE)], b"<html><body>private</body></html>"),
}
CHUNKS = [b"<html><head><title>Chunked</title></head><body>", b"sent in chunks", b"</body></html>"]
STATUSES = [404, 500]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 -- http.server's naming
        Handler.hits.append(self.path)
        if self.path == "/chunked.html":
            self.send_response(200)
            self.send_header("Content-Type", PAGE)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for c in CHUNKS:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            self.wfile.write(b"0\r\n\r\n")
            return
        status, headers, body = ROUTES.get(self.path, (404, [], b"no route"))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


class ScoringSpider(scrapy.Spider):
    """Scores pages the three ways a spider may: item, dropped item, or response.meta only."""

    name = "scoring"
    scores = {"/": (0.75, True), "/a.html": (0.5, False)}

    def __init__(self, base: str, dead: str, seen: dict[str, dict[str, Any]], **kw: Any) -> None:
        super().__init__(**kw)
        self.base = base
        self.dead = dead
        self.seen = seen

    async def start(self):
        yield scrapy.Request(self.base + "/", meta={"handle_httpstatus_list": STATUSES})
        yield scrapy.Request(self.dead, errback=self.failed)

    def failed(self, failure):
        self.seen[canonical_url(failure.request.url)] = {"error": type(failure.value).__name__}

    def parse(self, response):
        self.seen[canonical_url(response.url)] = {
            "status": response.status,
            "body": response.body,
            "headers": {k.decode(): vs for k, vs in response.headers.items()
                        if k.lower() != b"transfer-encoding"},  # de-chunked: not recorded
            "redirects": response.meta.get("redirect_urls", []),
        }
        path = response.url[len(self.base):]
        if path in self.scores:
            score, hot = self.scores[path]
            yield {"url": response.url, "score": score, "hot": hot}
        elif path == "/target.html":
            response.meta["focus_score"] = 0.25  # no item: the recorder reads the meta
        if isinstance(response, TextResponse) and response.status == 200:
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, meta={"handle_httpstatus_list": STATUSES})


class DropLowPipeline:
    def process_item(self, item: Any) -> Any:
        if item["score"] < 0.6:
            raise DropItem("low score")
        return item


def settings(**extra: Any) -> dict[str, Any]:
    return {
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "RETRY_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "WARNING",
        "DOWNLOADER_MIDDLEWARES": {"focuscrawl.seam.output.warc.WarcRecorder": 990},
        "ITEM_PIPELINES": {DropLowPipeline: 100},
        # registered in both runs: without FOCUS_REPLAY it hands requests to Scrapy's handler
        "DOWNLOAD_HANDLERS": {"http": "focuscrawl.seam.replay.ReplayDownloadHandler",
                              "https": "focuscrawl.seam.replay.ReplayDownloadHandler"},
        **extra,
    }


async def crawl(base: str, dead: str, **extra: Any) -> tuple[dict[str, dict[str, Any]], Any]:
    seen: dict[str, dict[str, Any]] = {}
    runner = CrawlerRunner(settings(**extra))
    crawler = runner.create_crawler(ScoringSpider)
    await runner.crawl(crawler, base=base, dead=dead, seen=seen)
    return seen, crawler


def closed_port_url() -> str:
    """A loopback URL nobody listens on: the connection is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/dead.html"


def read_records(path: str) -> list[dict[str, Any]]:
    out = []
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh):
            h = rec.http_headers
            out.append({
                "type": rec.rec_type,
                "url": rec.rec_headers.get_header("WARC-Target-URI"),
                "id": rec.rec_headers.get_header("WARC-Record-ID"),
                "warc": dict(rec.rec_headers.headers),
                "status": int(h.get_statuscode()) if h is not None and rec.rec_type == "response"
                else None,
                "http": h,
                "raw": rec.raw_stream.read(),
            })
    return out


@pytest_twisted.ensureDeferred
async def test_record_a_live_crawl_then_replay_it(tmp_path) -> None:
    path = str(tmp_path / "crawl.warc.gz")
    Handler.hits = []
    dead = closed_port_url()
    with server() as base:
        live, crawler = await crawl(base, dead, FOCUS_WARC=path)
    assert live[dead] == {"error": "DownloadConnectionRefusedError"}
    assert "/" in Handler.hits and "/private/x.html" not in Handler.hits
    assert crawler.stats.get_value("item_dropped_count") == 1

    records = read_records(path)
    assert records[0]["type"] == "warcinfo"
    resp = {r["url"][len(base):]: r for r in records if r["type"] == "response"}
    reqs = {r["url"][len(base):]: r for r in records if r["type"] == "request"}
    meta = {r["url"][len(base):]: r for r in records
            if r["type"] == "metadata" and "WARC-Focus-Score" in r["warc"]}
    failures = [r for r in records if "WARC-Focus-Error" in r["warc"]]

    fetched = {"/robots.txt", "/", "/a.html", "/old", "/target.html", "/missing", "/error",
               "/img.bin", "/gz.html", "/chunked.html"}
    assert set(resp) == fetched and set(reqs) == fetched
    # redirects and error statuses are recorded as answered
    assert resp["/old"]["status"] == 301
    assert resp["/old"]["http"].get_header("Location") == "/target.html"
    assert resp["/missing"]["status"] == 404 and resp["/error"]["status"] == 500
    assert [v for k, v in resp["/target.html"]["http"].headers if k == "X-Extra"] == ["1", "2"]
    # bodies as on the wire: binary exact, gzip still compressed, chunks joined
    assert resp["/img.bin"]["raw"] == BINARY
    assert resp["/gz.html"]["http"].get_header("Content-Encoding") == "gzip"
    assert gzip.decompress(resp["/gz.html"]["raw"]) == GZ_HTML
    assert resp["/chunked.html"]["raw"] == b"".join(CHUNKS)
    assert resp["/chunked.html"]["http"].get_header("Transfer-Encoding") is None
    assert resp["/"]["warc"]["WARC-IP-Address"] == "127.0.0.1"
    # each request record is concurrent to its response, with the headers sent
    for p, r in reqs.items():
        assert r["warc"]["WARC-Concurrent-To"] == resp[p]["id"]
        assert r["http"].protocol == "GET" and r["http"].get_header("Host") == base[7:]
        assert r["http"].get_header("User-Agent")
    # refused connections (the dead server's robots.txt, then the page) are recorded as
    # failures; the IgnoreRequest of robots.txt rules is no failure
    dead_robots = dead.replace("/dead.html", "/robots.txt")
    assert {(r["url"], r["warc"]["WARC-Focus-Error"]) for r in failures} == {
        (dead_robots, "scrapy.exceptions.DownloadConnectionRefusedError"),
        (dead, "scrapy.exceptions.DownloadConnectionRefusedError")}
    # scores: from an item, from a dropped item, from response.meta; none for unscored pages
    assert set(meta) == {"/", "/a.html", "/target.html"}
    assert meta["/"]["warc"]["WARC-Focus-Score"] == "0.75"
    assert meta["/"]["warc"]["WARC-Focus-Hot"] == "true"
    assert meta["/"]["warc"]["WARC-Refers-To"] == resp["/"]["id"]
    assert meta["/a.html"]["warc"]["WARC-Focus-Score"] == "0.5"
    assert meta["/target.html"]["warc"]["WARC-Focus-Score"] == "0.25"
    assert meta["/target.html"]["warc"]["WARC-Refers-To"] == resp["/target.html"]["id"]
    assert WarcIndex(path).scores == {
        f"{base}/": 0.75, f"{base}/a.html": 0.5, f"{base}/target.html": 0.25}

    # The WARC as a repository: HTML pages, redirect aliases, links among recorded pages.
    repo = Repository.from_warc(path)
    assert sorted(p.url[len(base):] for p in repo) == [
        "/", "/a.html", "/chunked.html", "/gz.html", "/target.html"]
    assert repo[f"{base}/old"].title == "Target"
    assert repo[f"{base}/gz.html"].text == "compressed words"
    assert set(repo[f"{base}/"].outlinks) == {
        f"{base}/a.html", f"{base}/target.html", f"{base}/gz.html", f"{base}/chunked.html"}

    # Replay with the server gone: the same answers, nothing new written to the network.
    Handler.hits = []
    replayed, crawler2 = await crawl(base, dead, FOCUS_REPLAY=path)
    assert Handler.hits == []
    assert replayed == live
    assert crawler2.stats.get_value("replay/miss") is None
    assert crawler2.stats.get_value("replay/hit") == len(fetched)
    assert crawler2.stats.get_value("replay/failure") == 2


def test_records_are_flushed_before_close(tmp_path) -> None:
    """A crawl killed mid-way leaves a readable WARC: every record is on disk when written."""
    path = str(tmp_path / "partial.warc.gz")
    rec = WarcRecorder(path)
    rec.open("partial")
    for i in range(3):
        req = Request(f"http://h.test/{i}.html")
        resp = HtmlResponse(req.url, status=200, body=b"<title>x</title>%d" % i, request=req,
                            headers={"Content-Type": "text/html"})
        rid = rec.write_exchange(resp, req)
        rec.write_score(req.url, rid, 0.1 * i)
    idx = WarcIndex(path)  # read while the recorder is still open
    assert len(idx) == 3 and not idx.truncated
    assert idx.body(idx.get("http://h.test/2.html")) == b"<title>x</title>2"
    assert idx.scores["http://h.test/1.html"] == 0.1
    rec.close()
    assert len(WarcIndex(path)) == 3
