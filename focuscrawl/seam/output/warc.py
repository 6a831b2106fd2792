"""Record a crawl as a WARC file, so that it can be judged and replayed later (the virtual crawler).

Enable with ``FOCUS_WARC = "crawl.warc.gz"`` (``%(name)s`` and ``%(time)s`` are filled in as in
FEEDS) and ``DOWNLOADER_MIDDLEWARES = {"focuscrawl.seam.output.warc.WarcRecorder": 990}``; with
FOCUS_WARC unset the component is off. It is a downloader middleware only to see download
*failures* (``process_exception``: any position above RetryMiddleware's 550 works); responses
are taken from the ``response_downloaded`` signal, so their recording does not depend on the
position. Listed in EXTENSIONS instead it records everything but failures.

What is written, per download, as the downloader got it (the ``response_downloaded`` signal, before
any downloader middleware):

* a ``response`` record with the status line, headers and body *as received*: compressed bodies
  keep their ``Content-Encoding``; redirects (3xx with ``Location``) and error statuses are
  recorded like any answer; ``Transfer-Encoding`` is dropped since the body is already de-chunked;
* a ``request`` record (method, path, headers as sent, body) concurrent to it;
* a download that failed without any response (refused connection, DNS failure, timeout, proxy
  tunnel refused) as a ``metadata`` record with ``WARC-Focus-Error`` (the exception's class),
  which the replay raises again, so a replayed crawl spends its page budget as the live one did;
* once the page's relevance is known, a small ``metadata`` record that refers to the response
  (``WARC-Refers-To``) and carries ``WARC-Focus-Score`` (and ``WARC-Focus-Hot``).  The score comes
  from a scraped item with ``url`` and ``score`` (and optionally ``hot``), or from
  ``response.meta["focus_score"]`` (``"focus_hot"``) set by the callback.

Every record is flushed as soon as it is written (one gzip member per record), so a crawl that
dies leaves a WARC that reads up to its last complete record.  The file is opened for append: a
resumed crawl (JOBDIR) adds to it instead of clobbering what it recorded.
"""

from __future__ import annotations

import io
import logging
import os
import time
import weakref
from collections import deque
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import urlsplit

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl import config
from focuscrawl.evaluation.text import canonical_url
from focuscrawl.evaluation.warcindex import ERROR_HEADER, HOT_HEADER, SCORE_HEADER
from focuscrawl.seam.meta import HOT, SCORE

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

SCORE_META = SCORE
HOT_META = HOT
_DROP_RESPONSE_HEADERS = frozenset({"transfer-encoding"})
_recorders: weakref.WeakKeyDictionary[Any, WarcRecorder] = weakref.WeakKeyDictionary()


def _text(b: bytes | str) -> str:
    if isinstance(b, str):
        return b
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("latin-1")


def _headers(headers: Any, drop: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    out = []
    for name, values in headers.items():
        k = _text(name)
        if k.lower() in drop:
            continue
        for v in values:
            out.append((k, _text(v)))
    return out


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class WarcRecorder:
    """Extension writing every downloaded response (+ request, + score metadata) to a WARC."""

    def __init__(self, path: str, crawler: Crawler | None = None) -> None:
        self.path_template = path
        self.path: str | None = None
        self.crawler = crawler
        self._fh: BinaryIO | None = None
        self._writer: WARCWriter | None = None
        self._last: dict[str, str] = {}  # canonical URL -> id of its last response record
        self._scored: set[str] = set()  # response record ids that already got their score
        self._ready: deque[tuple[str, str, dict[str, Any]]] = deque()
        self._watch: dict[str, weakref.finalize] = {}
        self._sent: weakref.WeakSet[Request] = weakref.WeakSet()  # handed to a download handler
        self.records = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcRecorder:
        path = config.get(crawler.settings, "FOCUS_WARC")
        if not path:
            raise NotConfigured  # FOCUS_WARC is not set: nothing to record
        if crawler in _recorders:
            raise NotConfigured("a WarcRecorder already records this crawl")
        ext = cls(str(path), crawler)
        _recorders[crawler] = ext
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(
            ext.request_reached_downloader, signal=signals.request_reached_downloader
        )
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.item_dropped, signal=signals.item_dropped)
        return ext

    # -- file ---------------------------------------------------------------------------------
    def open(self, spider_name: str = "crawl") -> None:
        path = self.path_template
        if "%(" in path:
            path = path % {"name": spider_name, "time": time.strftime("%Y-%m-%dT%H-%M-%S")}
        self.path = path
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        self._fh = open(path, "ab")  # noqa: SIM115 -- open for the whole crawl
        self._writer = WARCWriter(self._fh, gzip=path.endswith(".gz"))
        info = self._writer.create_warcinfo_record(
            os.path.basename(path),
            {"software": "focuscrawl (Scrapy)", "format": "WARC File Format 1.0",
             "description": f"crawl of spider {spider_name}"},
        )
        self._write(info)
        logger.info("Recording responses to WARC %s", path)

    def close(self) -> None:
        if self._fh is None:
            return
        for fin in list(self._watch.values()):
            fin()  # pages still alive: take whatever score their meta has now
        self._drain()
        self._fh.close()
        self._fh = None
        self._writer = None
        logger.info("WARC %s: %d records", self.path, self.records)

    def _write(self, record: Any) -> None:
        assert self._writer is not None and self._fh is not None
        self._writer.write_record(record)
        self._fh.flush()
        self.records += 1

    # -- signals ------------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.open(spider.name)

    def spider_closed(self, spider: Spider, reason: str = "") -> None:
        self.close()

    def request_reached_downloader(self, request: Request, spider: Spider) -> None:
        self._sent.add(request)

    def process_exception(self, request: Request, exception: Exception) -> None:
        """Record a download that ended without a response (not a middleware's IgnoreRequest)."""
        if request not in self._sent or self._writer is None:
            return
        self._sent.discard(request)
        self._drain()
        self.write_failure(request.url, exception)

    def response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        self._sent.discard(request)
        if self._writer is None:
            return
        self._drain()
        rid = self.write_exchange(response, request)
        try:
            key = canonical_url(response.url)
        except ValueError:
            return
        self._last[key] = rid
        if 300 <= response.status < 400:
            return  # a redirect has no page to score
        meta = request.meta
        # When the response object dies the callback is done with it: read its meta then.
        # The finalizer only queues; the write happens at the next signal (never re-entrantly).
        self._watch[rid] = weakref.finalize(response, self._queue, rid, response.url, meta)

    def item_scraped(self, item: Any, response: Response | None, spider: Spider) -> None:
        if self._writer is None:
            return
        self._drain()
        adapter = ItemAdapter(item)
        meta = response.meta if response is not None else {}
        url = adapter.get("url") or (response.url if response is not None else None)
        score = adapter.get("score")
        if score is None:
            score = meta.get(SCORE_META)
        hot = adapter.get("hot")
        if hot is None:
            hot = meta.get(HOT_META)
        if url is None or score is None:
            return
        try:
            rid = self._last.get(canonical_url(str(url)))
        except ValueError:
            return
        if rid is not None:
            self.write_score(str(url), rid, score, hot)

    def item_dropped(
        self, item: Any, response: Response | None, exception: BaseException, spider: Spider
    ) -> None:
        """A page a pipeline dropped (say, under FOCUS_MIN_SCORE) still has its score."""
        self.item_scraped(item, response, spider)

    # -- records ------------------------------------------------------------------------------
    def write_exchange(self, response: Response, request: Request) -> str:
        """Write the response record and its request record; return the response record id."""
        assert self._writer is not None
        url = response.url
        status = int(response.status)
        http = StatusAndHeaders(
            f"{status} {_reason(status)}".rstrip(),
            _headers(response.headers, _DROP_RESPONSE_HEADERS),
            protocol=response.protocol or "HTTP/1.1",
        )
        warc_headers: dict[str, str] = {}
        if response.ip_address is not None:
            warc_headers["WARC-IP-Address"] = str(response.ip_address)
        body = response.body or b""
        resp = self._writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), length=len(body),
            http_headers=http, warc_headers_dict=warc_headers,
        )
        parts = urlsplit(request.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        req_headers = _headers(request.headers)
        if not any(k.lower() == "host" for k, _ in req_headers):
            req_headers.insert(0, ("Host", parts.netloc))
        req_http = StatusAndHeaders(
            f"{request.method} {target} HTTP/1.1", req_headers, is_http_request=True
        )
        req_body = request.body or b""
        req = self._writer.create_warc_record(
            url, "request", payload=io.BytesIO(req_body), length=len(req_body),
            http_headers=req_http,
        )
        assert self._fh is not None
        self._writer.write_request_response_pair(req, resp)
        self._fh.flush()
        self.records += 2
        return str(resp.rec_headers.get_header("WARC-Record-ID"))

    def write_score(self, url: str, response_id: str, score: Any, hot: Any = None) -> None:
        """A metadata record with the page's relevance, once per response record."""
        if response_id in self._scored or self._writer is None:
            return
        try:
            value = f"{float(score):.6g}"
        except (TypeError, ValueError):
            return
        self._scored.add(response_id)
        fields = {SCORE_HEADER: value, "WARC-Refers-To": response_id}
        body = f"focus-score: {value}\r\n"
        if hot is not None:
            fields[HOT_HEADER] = "true" if hot else "false"
            body += f"focus-hot: {fields[HOT_HEADER]}\r\n"
        data = body.encode()
        rec = self._writer.create_warc_record(
            url, "metadata", payload=io.BytesIO(data), length=len(data),
            warc_content_type="application/warc-fields", warc_headers_dict=fields,
        )
        self._write(rec)

    def write_failure(self, url: str, exception: BaseException) -> None:
        """A metadata record saying that fetching ``url`` failed with ``exception``."""
        cls = type(exception)
        name = f"{cls.__module__}.{cls.__qualname__}"
        message = " ".join(str(exception).split())[:500]
        data = f"error: {name}\r\nmessage: {message}\r\n".encode()
        rec = self._writer.create_warc_record(  # type: ignore[union-attr]
            url, "metadata", payload=io.BytesIO(data), length=len(data),
            warc_content_type="application/warc-fields", warc_headers_dict={ERROR_HEADER: name},
        )
        self._write(rec)

    def _queue(self, rid: str, url: str, meta: dict[str, Any]) -> None:
        self._watch.pop(rid, None)
        if SCORE_META in meta and rid not in self._scored:
            self._ready.append((rid, url, meta))

    def _drain(self) -> None:
        while self._ready:
            rid, url, meta = self._ready.popleft()
            self.write_score(url, rid, meta.get(SCORE_META), meta.get(HOT_META))
