"""A local multi-host web server for the demo and the tests (standard library only, no Scrapy).

One process serves several *virtual hosts* (``docs.demo.test``, ``a.test``, ...) so a crawler
can be exercised on a realistic little web without DNS or internet.  A request finds its host
in this order:

1. **proxy mode** -- an absolute-form request line (``GET http://docs.demo.test/x.html``), which is
   what any client sends to an HTTP proxy: set ``http_proxy=http://127.0.0.1:PORT`` and Scrapy
   (or urllib, curl) reaches every host through this one port;
2. the ``Host`` header (its port ignored), or a per-host loopback address given as Host;
3. the listening address, when ``--bind-hosts`` gives host *i* (sorted) its own address
   ``127.0.0.(10+i)`` on the same port, so tests can see distinct server IPs.

CONNECT gets 501 (no TLS here).  Unknown host or path -> 404.

Sites come from a directory tree ``ROOT/<host>/<path>`` (``dir/`` serves ``dir/index.html``,
``ROOT/<host>/_redirects.json`` maps a path to a Location, ``ROOT/<host>/robots.txt`` is served
as is) or from a JSON pages file ``{"hosts": {host: {path: page}}}`` written by
:class:`ServerProcess` from a Python dict of :class:`Page`.  Per-host options
(:class:`HostOptions`: latency, robots.txt, an in-flight cap answered with 503, an error rate,
crawler traps) come from ``--config hosts.json``.

The access log is TSV, one flushed line per request, with a ``#fields`` header; its columns are
docweb's (see :data:`LOG_FIELDS`).  ``inflight_host`` counts the requests for that host in flight
when this one arrived, this one included, and ``time_epoch`` is the arrival time, so
:func:`analyze` can check a crawler's politeness from the server's side.  A request stops being
in flight, and its line is written, just before its response goes out: a client that holds a
response finds its line in the log, and the count never shows an overlap the client did not make.
``duration_ms`` runs from arrival to that moment, to the microsecond like ``time_epoch`` (so a
window rebuilt as arrival + duration ends before the next request a client sent after the
response); ``bytes`` counts the body; status 499 means the client closed the connection while
the response was delayed.

Run it as ``python -m focuscrawl.demo.webserver --root DIR --port 0 --port-file F --log F``;
in tests use :class:`ServerProcess`, which runs the server in a subprocess so that server
threads do not compete with the crawl's reactor for the GIL.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import mimetypes
import os
import random
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit

LOG_FIELDS = (
    "time_iso", "time_epoch", "host", "method", "path", "status", "bytes",
    "inflight_host", "inflight_total", "duration_ms", "client", "user_agent",
)
_INT_FIELDS = ("status", "bytes", "inflight_host", "inflight_total")
_FLOAT_FIELDS = ("time_epoch", "duration_ms")
DEFAULT_ROBOTS = "User-agent: *\nAllow: /\n"
HTML_TYPE = "text/html; charset=utf-8"
LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1", ""})
HIDDEN_FILES = frozenset({"_redirects.json"})  # at a host's root: never served
BIND_HOSTS_BASE = 10  # host i listens on 127.0.0.(BIND_HOSTS_BASE + i) with --bind-hosts


# --------------------------------------------------------------------------- site model
@dataclass
class Page:
    """One canned response.  ``body`` may be str (sent as UTF-8) or bytes."""

    body: str | bytes = ""
    status: int = 200
    content_type: str = HTML_TYPE
    headers: dict[str, str] = field(default_factory=dict)
    delay_ms: float = 0.0  # extra latency for this page only (a slow page)

    @classmethod
    def redirect(cls, location: str, status: int = 301) -> Page:
        """A redirect to ``location`` (absolute URL or path)."""
        return cls(body="", status=status, headers={"Location": location})

    def body_bytes(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else bytes(self.body)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"status": self.status, "content_type": self.content_type,
                             "headers": dict(self.headers), "delay_ms": self.delay_ms}
        if isinstance(self.body, str):
            d["body"] = self.body
        else:
            d["body_b64"] = base64.b64encode(bytes(self.body)).decode("ascii")
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Page:
        body: str | bytes = d.get("body", "")
        if "body_b64" in d:
            body = base64.b64decode(d["body_b64"])
        return cls(body=body, status=int(d.get("status", 200)),
                   content_type=d.get("content_type", HTML_TYPE),
                   headers=dict(d.get("headers", {})), delay_ms=float(d.get("delay_ms", 0.0)))


@dataclass
class HostOptions:
    """Per-host behaviour; the config file's ``defaults`` and ``hosts.<name>`` objects."""

    delay_ms: float = 0.0       # fixed latency added to every response
    jitter_ms: float = 0.0      # plus uniform(0, jitter_ms), drawn from a seeded per-host RNG
    robots: str | None = None   # robots.txt text; None: the site's file or DEFAULT_ROBOTS
    max_inflight: int = 0       # >0: answer 503 + Retry-After while more requests are in flight
    retry_after: int = 1        # the Retry-After seconds of those 503s
    error_rate: float = 0.0     # fraction of page requests (not robots.txt) answered 503
    robots_failures: int = 0    # the first this many robots.txt requests answered 503
    traps: list[str] = field(default_factory=list)  # path prefixes serving an endless link tree

    @classmethod
    def from_json(cls, d: Mapping[str, Any], base: HostOptions | None = None) -> HostOptions:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown host option(s): {sorted(unknown)}")
        merged = asdict(base) if base is not None else {}
        merged.update(d)
        return cls(**merged)


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = HTML_TYPE
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def _error_page(status: int, message: str) -> bytes:
    msg = html.escape(message)
    return (f"<!DOCTYPE html><html><head><title>{status} {msg}</title></head>"
            f"<body><h1>{status} {msg}</h1></body></html>\n").encode()


def _split_host(value: str | None) -> str:
    """Host name of a Host header / netloc, lower-cased, port dropped."""
    h = (value or "").strip().lower()
    if h.startswith("["):  # [::1]:8080
        return h[1:h.index("]")] if "]" in h else h
    if h.count(":") == 1:
        h = h.split(":", 1)[0]
    return h.rstrip(".")


def _norm_path(raw: str) -> tuple[str, str] | None:
    """(decoded path, query) of a request target; None for a path escaping the root."""
    parts = urlsplit(raw)
    path = unquote(parts.path or "/")
    if not path.startswith("/"):
        path = "/" + path
    segs = path.split("/")
    if any(s == ".." for s in segs):
        return None
    return path, parts.query


class Sites:
    """Hosts and their pages, from a directory tree and/or a dict of :class:`Page`."""

    def __init__(self, root: str | Path | None = None,
                 pages: Mapping[str, Mapping[str, Page]] | None = None) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self.pages: dict[str, dict[str, Page]] = {
            h.lower(): dict(p) for h, p in (pages or {}).items()}
        self._redirects: dict[str, dict[str, Any]] = {}
        hosts = set(self.pages)
        if self.root is not None:
            if not self.root.is_dir():
                raise FileNotFoundError(f"site root is not a directory: {self.root}")
            hosts.update(p.name.lower() for p in self.root.iterdir()
                         if p.is_dir() and not p.name.startswith(("_", ".")))
        self.hosts: list[str] = sorted(hosts)

    @classmethod
    def from_pages_file(cls, path: str | Path, root: str | Path | None = None) -> Sites:
        data = json.loads(Path(path).read_text("utf-8"))
        pages = {h: {p: Page.from_json(d) for p, d in ps.items()}
                 for h, ps in data.get("hosts", {}).items()}
        return cls(root=root, pages=pages)

    @staticmethod
    def write_pages_file(pages: Mapping[str, Mapping[str, Page]], path: str | Path) -> None:
        data = {"hosts": {h: {p: pg.to_json() for p, pg in ps.items()} for h, ps in pages.items()}}
        Path(path).write_text(json.dumps(data), "utf-8")

    def redirects(self, host: str) -> dict[str, Any]:
        """``ROOT/<host>/_redirects.json``: {path: location | {"location", "status"}}."""
        if host not in self._redirects:
            red: dict[str, Any] = {}
            if self.root is not None:
                f = self.root / host / "_redirects.json"
                if f.is_file():
                    red = json.loads(f.read_text("utf-8"))
            self._redirects[host] = red
        return self._redirects[host]

    def paths(self, host: str) -> list[str]:
        """The paths of ``host``'s HTML pages (its tree's ``.html`` files and its pages)."""
        found = {p for p, pg in self.pages.get(host, {}).items()
                 if pg.status == 200 and pg.content_type.startswith("text/html")}
        base = self.root / host if self.root is not None else None
        if base is not None and base.is_dir():
            found.update("/" + f.relative_to(base).as_posix() for f in base.rglob("*.html"))
        return sorted(found)

    def robots_file(self, host: str) -> str | None:
        pg = self.pages.get(host, {}).get("/robots.txt")
        if pg is not None:
            return pg.body_bytes().decode("utf-8", "replace")
        if self.root is not None:
            f = self.root / host / "robots.txt"
            if f.is_file():
                return f.read_text("utf-8")
        return None

    def lookup(self, host: str, path: str, query: str) -> Response | None:
        """The response for a page of a known host, or None (-> 404)."""
        pages = self.pages.get(host)
        if pages:
            pg = pages.get(f"{path}?{query}") if query else None
            if pg is None:
                pg = pages.get(path)
            if pg is not None:
                hdrs = dict(pg.headers)
                return Response(pg.status, pg.body_bytes(), pg.content_type, hdrs,
                                pg.delay_ms / 1000.0)
        red = self.redirects(host).get(path)
        if red is not None:
            loc, status = (red, 301) if isinstance(red, str) else (red["location"],
                                                                   int(red.get("status", 301)))
            return Response(status, b"", HTML_TYPE, {"Location": loc})
        if self.root is None:
            return None
        base = self.root / host
        if not base.is_dir():
            return None
        fs = base / path.lstrip("/")
        if path.lstrip("/") in HIDDEN_FILES:
            return None  # configuration, not a page
        if fs.is_dir():
            if not path.endswith("/"):
                return Response(301, b"", HTML_TYPE, {"Location": path + "/"})
            fs = fs / "index.html"
        if not fs.is_file():
            return None
        ctype = mimetypes.guess_type(fs.name)[0] or "application/octet-stream"
        if ctype.startswith("text/"):
            ctype += "; charset=utf-8"
        return Response(200, fs.read_bytes(), ctype)


def _trap_page(host: str, path: str) -> bytes:
    """A page of an endless generated link tree (a calendar-like crawler trap)."""
    base = path if path.endswith("/") else path + "/"
    depth = base.count("/")
    links = "".join(f'<li><a href="{html.escape(base)}{n}/">{n} {depth}</a></li>'
                    for n in ("next", "prev", "day"))
    return (f"<!DOCTYPE html><html><head><title>Archive {html.escape(path)}</title></head>"
            f"<body><h1>Archive of {html.escape(host)} at depth {depth}</h1>"
            f"<ul>{links}</ul></body></html>\n").encode()


# --------------------------------------------------------------------------- the server
class WebServer:
    """The in-process server: routing, per-host options, in-flight counters and the log.

    Used by the CLI (and so by :class:`ServerProcess`); call :meth:`start` then :meth:`stop`.
    """

    def __init__(self, sites: Sites, *, options: Mapping[str, HostOptions] | None = None,
                 defaults: HostOptions | None = None, log_path: str | Path | None = None,
                 seed: int = 0, bind: str = "127.0.0.1", port: int = 0,
                 bind_hosts: bool = False, changing: Any = None) -> None:
        self.sites = sites
        self.changing = changing  # a changing.ChangingWeb: pages that change as time goes
        self.defaults = defaults or HostOptions()
        self.options = {h.lower(): o for h, o in (options or {}).items()}
        self.seed = seed
        self.bind = bind
        self.port = port
        self.bind_hosts = bind_hosts
        self.addresses: dict[str, str] = {}  # host -> its own loopback address (--bind-hosts)
        self._addr_host: dict[str, str] = {}
        self._lock = threading.Lock()
        self.inflight: dict[str, int] = defaultdict(int)
        self.max_inflight: dict[str, int] = defaultdict(int)
        self.total_inflight = 0
        self._robots_failed: dict[str, int] = defaultdict(int)  # host -> 503s given (robots)
        self._rngs: dict[str, random.Random] = {}
        self._servers: list[ThreadingHTTPServer] = []
        self._threads: list[threading.Thread] = []
        self._log_lock = threading.Lock()
        self._log = None
        if log_path is not None:
            new = not os.path.exists(log_path) or os.path.getsize(log_path) == 0
            self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in stop()
            if new:
                self._log.write("#fields\t" + "\t".join(LOG_FIELDS) + "\n")
                self._log.flush()

    # -- per-host state
    def host_options(self, host: str) -> HostOptions:
        return self.options.get(host, self.defaults)

    def robots(self, host: str) -> str:
        opt = self.host_options(host)
        if opt.robots is not None:
            return opt.robots
        return self.sites.robots_file(host) or DEFAULT_ROBOTS

    def _rng(self, host: str) -> random.Random:
        rng = self._rngs.get(host)
        if rng is None:
            rng = self._rngs[host] = random.Random(f"{self.seed}:{host}")
        return rng

    def enter(self, host: str) -> tuple[int, int]:
        with self._lock:
            self.inflight[host] += 1
            self.total_inflight += 1
            n = self.inflight[host]
            self.max_inflight[host] = max(self.max_inflight[host], n)
            return n, self.total_inflight

    def leave(self, host: str) -> None:
        with self._lock:
            self.inflight[host] -= 1
            self.total_inflight -= 1

    # -- routing
    def route(self, target: str, host_header: str | None, listener_host: str | None) -> tuple[
            str, str]:
        """(host, origin-form target) of a request: proxy form, then Host, then listener."""
        if target.lower().startswith(("http://", "https://")):
            u = urlsplit(target)
            rest = (u.path or "/") + (f"?{u.query}" if u.query else "")
            return _split_host(u.netloc), rest
        h = _split_host(host_header)
        h = self._addr_host.get(h, h)
        if listener_host is not None and (h in LOCAL_NAMES or h not in self.sites.hosts):
            h = listener_host
        return h, target

    def respond(self, host: str, target: str, inflight_host: int,
                headers: Any = None) -> Response:
        """The response for one GET/HEAD, latency included (not yet slept)."""
        known = host in self.sites.hosts
        opt = self.host_options(host)
        delay = 0.0
        if known and (opt.delay_ms or opt.jitter_ms):
            with self._lock:
                jitter = self._rng(host).uniform(0, opt.jitter_ms) if opt.jitter_ms else 0.0
            delay = (opt.delay_ms + jitter) / 1000.0
        resp = self._respond(host, target, inflight_host, known, opt, headers)
        resp.delay_s += delay
        return resp

    def _respond(self, host: str, target: str, inflight_host: int, known: bool,
                 opt: HostOptions, headers: Any = None) -> Response:
        norm = _norm_path(target)
        if norm is None:
            return Response(400, _error_page(400, "Bad path"))
        path, query = norm
        if not known:
            if host in LOCAL_NAMES and path == "/":
                return Response(200, self._portal())
            if host in LOCAL_NAMES and path == "/_changes.json" and self.changing is not None:
                return Response(200, json.dumps(self.changing.report()).encode(),
                                "application/json")
            return Response(404, _error_page(404, f"Unknown host {host}"))
        if opt.max_inflight and inflight_host > opt.max_inflight:
            return Response(503, _error_page(503, "Too many requests"),
                            headers={"Retry-After": str(opt.retry_after)})
        if path == "/robots.txt":
            page = self.sites.lookup(host, path, "")
            if page is not None and page.status != 200:  # a site whose robots.txt fails
                return page
            if opt.robots_failures:  # ... or fails for a while
                with self._lock:
                    failing = self._robots_failed[host] < opt.robots_failures
                    self._robots_failed[host] += failing
                if failing:
                    return Response(503, _error_page(503, "Service unavailable"))
            text = self.robots(host)
            if self.changing is not None and self.changing.config.sitemaps:
                text = text.rstrip("\n") + f"\nSitemap: http://{host}/sitemap.xml\n"
            return Response(200, text.encode("utf-8"), "text/plain; charset=utf-8")
        if opt.error_rate:
            with self._lock:
                fail = self._rng("error:" + host).random() < opt.error_rate
            if fail:
                return Response(503, _error_page(503, "Service unavailable"),
                                headers={"Retry-After": str(opt.retry_after)})
        for prefix in opt.traps:
            if path.startswith(prefix):
                return Response(200, _trap_page(host, path))
        if (path == "/sitemap.xml" and self.changing is not None
                and self.changing.config.sitemaps):
            return Response(200, self.changing.sitemap(host, self.sites.paths(host)),
                            "application/xml")
        resp = self.sites.lookup(host, path, query)
        if resp is None:
            return Response(404, _error_page(404, f"Not found: {path}"))
        if self.changing is not None:
            resp = self.changing.serve(host, path, resp, headers)
        return resp

    def _portal(self) -> bytes:
        items = "".join(f'<li><a href="http://{h}/">{h}</a></li>' for h in self.sites.hosts)
        return (f"<!DOCTYPE html><html><head><title>focuscrawl web server</title></head>"
                f"<body><h1>Hosts served</h1><ul>{items}</ul></body></html>\n").encode()

    # -- log
    def log(self, t0: float, host: str, method: str, path: str, status: int, nbytes: int,
            inf_h: int, inf_t: int, client: str, ua: str, t_end: float | None = None) -> None:
        """One access-log line; ``t0`` the arrival, ``t_end`` when the response was ready."""
        if self._log is None:
            return
        dur = ((time.time() if t_end is None else t_end) - t0) * 1000.0
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0)) + f".{int(t0 * 1000) % 1000:03d}Z"
        path = path.replace("\t", "%09").replace("\n", "%0A")
        ua = (ua or "-").replace("\t", " ").replace("\n", " ")
        line = (f"{iso}\t{t0:.6f}\t{host or '-'}\t{method}\t{path}\t{status}\t{nbytes}\t"
                f"{inf_h}\t{inf_t}\t{dur:.3f}\t{client}\t{ua}\n")
        with self._log_lock:
            if self._log is not None:
                self._log.write(line)
                self._log.flush()

    # -- lifecycle
    def _make_server(self, addr: str, port: int, host: str | None) -> ThreadingHTTPServer:
        srv = _HTTPServer((addr, port), _Handler)
        srv.app = self
        srv.listener_host = host
        return srv

    def start(self) -> WebServer:
        """Bind every listening socket (they accept at once), then serve in daemon threads."""
        for attempt in range(20):
            servers: list[ThreadingHTTPServer] = []
            try:
                main = self._make_server(self.bind, self.port, None)
                servers.append(main)
                port = main.server_address[1]
                addresses = {}
                if self.bind_hosts:
                    if len(self.sites.hosts) > 255 - BIND_HOSTS_BASE:
                        raise ValueError("too many hosts for --bind-hosts")
                    for i, h in enumerate(self.sites.hosts):
                        addr = f"127.0.0.{BIND_HOSTS_BASE + i}"
                        servers.append(self._make_server(addr, port, h))
                        addresses[h] = addr
            except OSError:
                for s in servers:
                    s.server_close()
                if self.port or attempt == 19:
                    raise
                continue  # a random port taken on one of the host addresses: try another
            break
        self._servers = servers
        self.port = port
        self.addresses = addresses
        self._addr_host = {a: h for h, a in addresses.items()}
        for s in servers:
            t = threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05},
                                 name=f"webserver-{s.server_address[0]!s}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        stoppers = [threading.Thread(target=s.shutdown) for s in self._servers]  # in parallel
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()
        for s in self._servers:
            s.server_close()
        self._servers = []
        with self._log_lock:
            if self._log is not None:
                self._log.close()
                self._log = None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    app: WebServer
    listener_host: str | None

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can hang
        # offline; the name is never used here.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "focuscrawl-webserver/1"
    disable_nagle_algorithm = True  # a response goes out at once, never held for an ACK
    timeout = 120                   # idle keep-alive connections are closed after this
    server: _HTTPServer

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # our own access log replaces http.server's stderr lines

    @property
    def _client(self) -> str:
        return f"{self.client_address[0]}:{self.client_address[1]}"

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._serve(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head=True)

    def _not_allowed(self) -> None:
        """405 for methods a static web does not take, logged like any other request."""
        t0 = time.time()
        host, target = self.server.app.route(self.path, self.headers.get("Host"),
                                             self.server.listener_host)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)  # keep the connection usable
        self._answer(t0, host, target, Response(405, _error_page(405, "Method not allowed"),
                                                headers={"Allow": "GET, HEAD"}), head=False)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815

    def do_CONNECT(self) -> None:  # noqa: N802
        t0 = time.time()
        self.close_connection = True
        self._answer(t0, _split_host(self.path), self.path, Response(
            501, _error_page(501, "CONNECT not supported: use http:// URLs"),
            headers={"Connection": "close"}), head=False)

    def _serve(self, head: bool) -> None:
        t0 = time.time()
        host, target = self.server.app.route(self.path, self.headers.get("Host"),
                                             self.server.listener_host)
        self._answer(t0, host, target, None, head)

    def _answer(self, t0: float, host: str, target: str, fixed: Response | None,
                head: bool) -> None:
        """Count the request in flight, build the response, log it, send it.

        The request leaves the in-flight count (and its duration ends) just *before* the
        response is written, and its log line is written then too: the client cannot send a
        follow-up request before it has the response, so the count never shows an overlap the
        client did not make, and a client holding a response always finds its log line.
        """
        app = self.server.app
        inf_h, inf_t = app.enter(host)
        left = False
        status, nbytes, t_end = 500, 0, t0
        try:
            resp = fixed if fixed is not None else app.respond(host, target, inf_h,
                                                               self.headers)
            if resp.delay_s > 0:
                time.sleep(resp.delay_s)  # simulated server latency, not synchronisation
            if self._peer_closed():
                status = 499  # the client gave up (a timeout) while we were "working"
                self.close_connection = True
                return
            status = resp.status
            data = self._raw(resp, head)
            nbytes = 0 if head else len(resp.body)
            t_end = time.time()
            app.leave(host)
            left = True
            app.log(t0, host, self.command, target, status, nbytes, inf_h, inf_t,
                    self._client, self.headers.get("User-Agent", "-"), t_end=t_end)
            try:
                self.wfile.write(data)
            except OSError:
                self.close_connection = True
        finally:
            if not left:
                app.leave(host)
                app.log(t0, host, self.command, target, status, nbytes, inf_h, inf_t,
                        self._client, self.headers.get("User-Agent", "-"))

    def _peer_closed(self) -> bool:
        """True when the client has closed its end (EOF is readable, no pipelined request)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _raw(self, resp: Response, head: bool) -> bytes:
        """Status line, headers and body as one buffer: one write, no Nagle stall."""
        reason = self.responses.get(resp.status, ("",))[0]
        lines = [f"{self.protocol_version} {resp.status} {reason}",
                 f"Server: {self.server_version}", f"Date: {self.date_time_string()}",
                 f"Content-Type: {resp.content_type}", f"Content-Length: {len(resp.body)}"]
        for k, v in resp.headers.items():
            lines.append(f"{k}: {v}")
            if k.lower() == "connection" and v.lower() == "close":
                self.close_connection = True
        if self.close_connection and "connection" not in {k.lower() for k in resp.headers}:
            lines.append("Connection: close")
        head_bytes = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head_bytes if head else head_bytes + resp.body


# --------------------------------------------------------------------------- log analysis
def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Rows of an access log as dicts keyed by :data:`LOG_FIELDS`, numbers typed."""
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < len(LOG_FIELDS):
                continue  # a line being written while we read
            row: dict[str, Any] = dict(zip(LOG_FIELDS, parts[:len(LOG_FIELDS)], strict=True))
            for k in _INT_FIELDS:
                row[k] = int(row[k])
            for k in _FLOAT_FIELDS:
                row[k] = float(row[k])
            rows.append(row)
    return rows


def analyze(path: str | Path | list[dict[str, Any]],
            robots: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Per-host politeness report of an access log (or of :func:`read_log` rows).

    For each host: ``requests``, ``statuses`` ({status: count}), ``max_inflight``,
    ``min_gap_s``/``median_gap_s`` between request arrivals, ``min_idle_s`` from the end of one
    response to the next arrival, ``robots_first`` (the first request was /robots.txt),
    ``robots_fetches``, ``first``/``last`` arrival epochs and, when ``robots`` texts are
    given, ``disallowed_fetches`` (fetches robots.txt forbids for the logged user agent).
    CONNECT lines are left out: they fetch no page.
    """
    from urllib.robotparser import RobotFileParser

    rows = read_log(path) if not isinstance(path, list) else path
    by_host: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["method"] != "CONNECT":
            by_host[r["host"]].append(r)
    report: dict[str, dict[str, Any]] = {}
    for host, rs in sorted(by_host.items()):
        rs.sort(key=lambda r: r["time_epoch"])
        starts = [r["time_epoch"] for r in rs]
        gaps = sorted(b - a for a, b in zip(starts, starts[1:], strict=False))
        ends = [r["time_epoch"] + r["duration_ms"] / 1000.0 for r in rs]
        idle, done = [], float("-inf")  # arrival minus the latest end of earlier requests
        for i in range(len(rs) - 1):
            done = max(done, ends[i])
            idle.append(starts[i + 1] - done)
        statuses: dict[int, int] = defaultdict(int)
        for r in rs:
            statuses[r["status"]] += 1
        rep: dict[str, Any] = {
            "requests": len(rs),
            "statuses": dict(statuses),
            "max_inflight": max(r["inflight_host"] for r in rs),
            "min_gap_s": gaps[0] if gaps else None,
            "median_gap_s": gaps[len(gaps) // 2] if gaps else None,
            "min_idle_s": min(idle) if idle else None,
            "robots_first": rs[0]["path"] == "/robots.txt",
            "robots_fetches": sum(r["path"] == "/robots.txt" for r in rs),
            "first": starts[0],
            "last": starts[-1],
        }
        if robots is not None:
            parser = RobotFileParser()
            parser.parse((robots.get(host) or DEFAULT_ROBOTS).splitlines())
            rep["disallowed_fetches"] = sum(
                1 for r in rs if r["path"] != "/robots.txt" and not parser.can_fetch(
                    r["user_agent"] if r["user_agent"] != "-" else "*",
                    f"http://{host}{r['path']}"))
        report[host] = rep
    return report


# --------------------------------------------------------------------------- config
def load_config(path: str | Path | None, defaults: HostOptions | None = None) -> tuple[
        HostOptions, dict[str, HostOptions]]:
    """``{"defaults": {...}, "hosts": {host: {...}}}`` -> (defaults, per-host options).

    A host's options start from the defaults, so a host only states what differs.
    """
    if path is None:
        return defaults or HostOptions(), {}
    return config_from_dict(json.loads(Path(path).read_text("utf-8")), defaults)


def config_from_dict(data: Mapping[str, Any], defaults: HostOptions | None = None) -> tuple[
        HostOptions, dict[str, HostOptions]]:
    """The parsed form of a config object (see :func:`load_config`)."""
    base = defaults or HostOptions()
    unknown = set(data) - {"defaults", "hosts"}
    if unknown:
        raise ValueError(f"unknown config key(s): {sorted(unknown)}")
    base = HostOptions.from_json(data.get("defaults", {}), base)
    per = {h.lower(): HostOptions.from_json(o, base) for h, o in data.get("hosts", {}).items()}
    return base, per


def _write_atomic(path: str | Path, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m focuscrawl.demo.webserver",
                                 description="Serve several virtual hosts on loopback.")
    ap.add_argument("--root", help="site tree ROOT/<host>/<path>")
    ap.add_argument("--pages", help='JSON pages file {"hosts": {host: {path: page}}}')
    ap.add_argument("--bind", default="127.0.0.1", help="listening address (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8800, help="listening port; 0 picks a free one")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--addr-file", help="write {host: 'ADDR:PORT'} JSON here (--bind-hosts)")
    ap.add_argument("--bind-hosts", action="store_true",
                    help=f"also listen on 127.0.0.({BIND_HOSTS_BASE}+i) for the i-th host")
    ap.add_argument("--log", help="access log (TSV), '-' for stdout")
    ap.add_argument("--config", help='per-host options {"defaults": {...}, "hosts": {...}}')
    ap.add_argument("--delay-ms", type=float, default=0.0, help="latency of every response")
    ap.add_argument("--jitter-ms", type=float, default=0.0, help="plus uniform(0, J) ms")
    ap.add_argument("--seed", type=int, default=0, help="seed of the jitter and error draws")
    ap.add_argument("--max-seconds", type=float, default=0.0, help="stop after S seconds")
    ap.add_argument("--changing", metavar="JSON",
                    help="pages change as time goes: a JSON object or file of "
                    "focuscrawl.demo.changing.ChangeConfig options ('{}': the defaults)")
    ap.add_argument("--analyze", metavar="LOG",
                    help="print the per-host politeness report of an access log and exit "
                    "(with --root/--pages/--config: count robots-disallowed fetches too)")
    args = ap.parse_args(argv)
    # short GIL slices: request threads get scheduled promptly, so arrival times stay sharp
    sys.setswitchinterval(0.0005)
    if args.analyze:
        robots = None
        if args.root or args.pages:
            s = (Sites.from_pages_file(args.pages, root=args.root) if args.pages
                 else Sites(root=args.root))
            d, per = load_config(args.config)
            ws = WebServer(s, options=per, defaults=d)
            robots = {h: ws.robots(h) for h in s.hosts}
        json.dump(analyze(args.analyze, robots), sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    if not args.root and not args.pages:
        ap.error("give --root or --pages")
    sites = (Sites.from_pages_file(args.pages, root=args.root) if args.pages
             else Sites(root=args.root))
    defaults, per_host = load_config(
        args.config, HostOptions(delay_ms=args.delay_ms, jitter_ms=args.jitter_ms))
    log_path = args.log
    if log_path == "-":
        log_path = "/dev/stdout"
    server = WebServer(sites, options=per_host, defaults=defaults, log_path=log_path,
                       seed=args.seed, bind=args.bind, port=args.port,
                       bind_hosts=args.bind_hosts,
                       changing=changing_web(args.changing) if args.changing else None)
    server.start()

    def ready() -> None:  # once signals are handled: the port file says "stoppable now"
        if args.addr_file:
            _write_atomic(args.addr_file, json.dumps(
                {h: f"{a}:{server.port}" for h, a in server.addresses.items()}))
        if args.port_file:
            _write_atomic(args.port_file, f"{server.port}\n")
        print(f"serving {len(sites.hosts)} host(s) on http://{args.bind}:{server.port}/ "
              f"(use http_proxy=http://{args.bind}:{server.port})", file=sys.stderr, flush=True)

    serve_until_signal(server, args.max_seconds, ready)
    return 0


def changing_web(spec: str | Mapping[str, Any]) -> Any:
    """A :class:`focuscrawl.demo.changing.ChangingWeb` from a JSON object, its text or a file.

    The module is loaded from beside this file, as this file is in the server's subprocess.
    """
    import importlib.util

    if isinstance(spec, str):
        text = spec if spec.lstrip().startswith("{") else Path(spec).read_text("utf-8")
        options = dict(json.loads(text))
    else:
        options = dict(spec)
    name = "focuscrawl_demo_changing"
    mod = sys.modules.get(name)
    if mod is None:
        loader = importlib.util.spec_from_file_location(name, Path(__file__).with_name(
            "changing.py"))
        assert loader is not None and loader.loader is not None
        mod = importlib.util.module_from_spec(loader)
        sys.modules[name] = mod  # dataclasses look their module up while the file runs
        loader.loader.exec_module(mod)
    return mod.ChangingWeb(mod.ChangeConfig.from_json(options))


def serve_until_signal(server: WebServer, max_seconds: float = 0.0,
                       ready: Callable[[], None] | None = None) -> None:
    """Block until SIGTERM/SIGINT (or ``max_seconds``), then stop the server and close its log.

    ``ready`` runs once the signal handlers are in place (write port files there).
    """
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if ready is not None:
            ready()
        deadline = time.monotonic() + max_seconds if max_seconds else None
        while not stop.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            stop.wait(0.1 if left is None else min(left, 0.1))
    finally:
        server.stop()
        for s, h in old.items():
            signal.signal(s, h)


# --------------------------------------------------------------------------- test harness
_CHILD_MAIN = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("focuscrawl_webserver_child", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mod
spec.loader.exec_module(mod)
sys.exit(mod.main(sys.argv[2:]))
"""


class ServerProcess:
    """Run the server in a subprocess for a test or the demo; a context manager.

    Give ``root`` (a site tree) and/or ``pages`` ({host: {path: Page}}).  ``config`` is a dict
    in the ``--config`` format (``{"defaults": {...}, "hosts": {host: {...}}}``).  Without
    ``log_path`` the log goes to a temporary directory that :meth:`stop` removes, after keeping
    the rows for :meth:`read_log`.  ``changing`` (ChangeConfig options) makes the pages change
    as time goes (:mod:`focuscrawl.demo.changing`; the truth at :meth:`changes`).
    """

    def __init__(self, root: str | Path | None = None,
                 pages: Mapping[str, Mapping[str, Page]] | None = None, *,
                 config: Mapping[str, Any] | None = None, delay_ms: float = 0.0,
                 jitter_ms: float = 0.0, seed: int = 0, log_path: str | Path | None = None,
                 bind_hosts: bool = False, port: int = 0, startup_timeout: float = 20.0,
                 changing: Mapping[str, Any] | None = None) -> None:
        if root is None and not pages:
            raise ValueError("give root and/or pages")
        self.root = root
        self.pages = pages or {}
        self.config = dict(config) if config else None
        self.delay_ms, self.jitter_ms, self.seed = delay_ms, jitter_ms, seed
        self.bind_hosts = bind_hosts
        self.changing = dict(changing) if changing is not None else None
        self.requested_port = port
        self.startup_timeout = startup_timeout
        self._tmp: str | None = None
        self._log_arg = log_path
        self.log_path: Path | None = None
        self.port: int = 0
        self.addresses: dict[str, str] = {}  # host -> "127.0.0.x:PORT" with bind_hosts
        self.proc: subprocess.Popen[bytes] | None = None
        self._final_rows: list[dict[str, Any]] | None = None
        self._robots: dict[str, str] | None = None

    # -- lifecycle
    def start(self) -> ServerProcess:
        self._tmp = tempfile.mkdtemp(prefix="focusweb-")
        tmp = Path(self._tmp)
        self.log_path = Path(self._log_arg) if self._log_arg else tmp / "access.log"
        port_file = tmp / "port"
        # Load this file by path: importing the focuscrawl package could pull in Scrapy, and
        # running the file as a script would put focuscrawl/ first on sys.path.
        cmd = [sys.executable, "-u", "-c", _CHILD_MAIN, str(Path(__file__).resolve()), "--port",
               str(self.requested_port), "--port-file", str(port_file), "--log",
               str(self.log_path), "--delay-ms", str(self.delay_ms), "--jitter-ms",
               str(self.jitter_ms), "--seed", str(self.seed)]
        if self.root is not None:
            cmd += ["--root", str(self.root)]
        if self.pages:
            Sites.write_pages_file(self.pages, tmp / "pages.json")
            cmd += ["--pages", str(tmp / "pages.json")]
        if self.config:
            (tmp / "config.json").write_text(json.dumps(self.config), "utf-8")
            cmd += ["--config", str(tmp / "config.json")]
        if self.bind_hosts:
            cmd += ["--bind-hosts", "--addr-file", str(tmp / "addresses.json")]
        if self.changing is not None:
            cmd += ["--changing", json.dumps(self.changing)]
        # closed in stop()
        self._stderr: BinaryIO | None = open(tmp / "stderr.txt", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self._stderr, cwd=tmp)
        deadline = time.monotonic() + self.startup_timeout
        while not port_file.exists():  # the server writes it once its sockets listen
            if self.proc.poll() is not None:
                err = (tmp / "stderr.txt").read_text("utf-8", "replace")
                self.stop()
                raise RuntimeError(f"web server exited with {self.proc.returncode}: {err}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("web server did not start in time")
            time.sleep(0.02)
        self.port = int(port_file.read_text().strip())
        if self.bind_hosts:
            self.addresses = json.loads((tmp / "addresses.json").read_text("utf-8"))
        return self

    def stop(self) -> None:
        """SIGTERM the server and wait for it; idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        stderr = getattr(self, "_stderr", None)
        if stderr is not None:
            stderr.close()
            self._stderr = None
        if self._tmp is not None:
            if self._log_arg is None and self.log_path is not None and self.log_path.exists():
                self._final_rows = read_log(self.log_path)
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses
    @property
    def proxy_url(self) -> str:
        """The value for ``http_proxy`` (and Scrapy's ``meta['proxy']``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def proxy_env(self) -> dict[str, str]:
        """Environment entries routing a crawler's http:// requests here."""
        return {"http_proxy": self.proxy_url, "HTTP_PROXY": self.proxy_url,
                "no_proxy": "", "NO_PROXY": ""}

    @staticmethod
    def url(host: str, path: str = "/") -> str:
        """The URL a crawler uses for a page (reached through the proxy)."""
        return f"http://{host}{path if path.startswith('/') else '/' + path}"

    def direct_url(self, host: str, path: str = "/") -> str:
        """The URL of a page on the host's own address (``bind_hosts=True``)."""
        if host not in self.addresses:
            raise KeyError(f"{host} has no address of its own (start with bind_hosts=True)")
        return f"http://{self.addresses[host]}{path if path.startswith('/') else '/' + path}"

    # -- client helpers for tests
    def get(self, host: str, path: str = "/", *, method: str = "GET",
            headers: Mapping[str, str] | None = None, proxy_form: bool = True,
            timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
        """One request without following redirects -> (status, headers, body)."""
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            target = self.url(host, path) if proxy_form else path
            hdrs = {"Host": host, "User-Agent": "focuscrawl-test"}
            hdrs.update(headers or {})
            conn.request(method, target, headers=hdrs)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def read_log(self) -> list[dict[str, Any]]:
        if self._final_rows is not None:
            return list(self._final_rows)
        if self.log_path is None:
            raise RuntimeError("server not started")
        return read_log(self.log_path)

    def robots_texts(self) -> dict[str, str]:
        """Each host's robots.txt as the server serves it (for analyze's disallowed count)."""
        if self._robots is None:
            sites = Sites(root=self.root, pages=self.pages)
            defaults, per = config_from_dict(self.config or {})
            srv = WebServer(sites, options=per, defaults=defaults)
            self._robots = {h: srv.robots(h) for h in sites.hosts}
        return self._robots

    def changes(self) -> dict[str, Any]:
        """The changing web's truth so far (``changing`` given): rates and change times."""
        status, _, body = self.get("127.0.0.1", "/_changes.json")
        if status != 200:
            raise RuntimeError(f"no change report (status {status}): start with changing=")
        return dict(json.loads(body))

    def analyze(self) -> dict[str, dict[str, Any]]:
        """:func:`analyze` of this server's log, with ``disallowed_fetches``."""
        return analyze(self.read_log(), robots=self.robots_texts())

    @property
    def hosts(self) -> list[str]:
        """The served host names, sorted (host i gets 127.0.0.(10+i) with bind_hosts)."""
        return Sites(root=self.root, pages=self.pages).hosts


if __name__ == "__main__":
    sys.exit(main())
