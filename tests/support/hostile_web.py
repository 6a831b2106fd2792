"""A hostile little web for the tests: what the open web does that a polite test server doesn't.

One asyncio server (standard library only) answers for many ``*.test`` hosts, reached as an
HTTP proxy (``http_proxy=http://127.0.0.1:PORT``), and can misbehave at the byte level: drip a
body one byte a second, reset the connection, send a gzip bomb, stream 50 MB, serve binary as
text/html.  Each *case* is one host, so politeness never makes one case wait for another; each
host also serves ``/good.html``, a page on the topic, so a test can check that the rest of a
misbehaving server is still crawled.

Run by :class:`HostileWeb` in a subprocess (the crawl's reactor keeps its CPU); the access log
is JSON lines: ``{"t", "host", "path", "status", "bytes", "outcome", "ms"}``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

TOPIC = "garden compost"
HUB = "hub.test"


def page(title: str, body: str = "", links: list[str] = (), charset: str = "utf-8") -> bytes:
    anchors = " ".join(f'<a href="{u}">{title} link {i}</a>' for i, u in enumerate(links))
    return (f"<!DOCTYPE html><html><head><meta charset={charset}><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>{body}</p>{anchors}</body></html>\n").encode()


GOOD = page("Garden compost guide", "garden compost soil worms " * 20)


@dataclass
class Case:
    host: str
    what: str  # one line for the report


CASES = [
    Case("malformed.test", "malformed HTML: unclosed tags, NUL bytes, stray </html>, bad attrs"),
    Case("nested.test", "100,000 nested <div>s"),
    Case("binary.test", "200 KB of random bytes served as text/html"),
    Case("encoding.test", "wrong, unknown, mixed and undeclared UTF-16 encodings"),
    Case("huge.test", "50 MB page, streamed (no Content-Length) and announced"),
    Case("bomb.test", "gzip bomb: 1 MB on the wire, 1 GB inflated"),
    Case("redirect.test", "redirect loop, and a chain of 30 redirects"),
    Case("drip.test", "a body dripped one byte a second"),
    Case("storm.test", "5xx storm: every page but one answers 500/503"),
    Case("reset.test", "connection reset after the request"),
    Case("trap.test", "infinite calendar and session-id trap"),
    Case("links.test", "javascript:, mailto:, data:, file: links and 10 KB URLs"),
    Case("robots.test", "robots.txt that is binary garbage"),
]


def hub_page() -> bytes:
    links = [f"http://{c.host}/" for c in CASES]
    # the cases whose first page yields no links: their good page is linked from here
    links += [f"http://{h}/good.html" for h in ("drip.test", "bomb.test", "reset.test",
                                                "storm.test", "binary.test")]
    links += [f"http://storm.test/p{i}" for i in range(6)]
    return page("Hostile web garden hub", "garden compost " * 5, links)


def bomb() -> bytes:
    """~1 MB of gzip members inflating to 1 GiB (gzip readers concatenate members)."""
    head = gzip.compress(b"<html><head><title>garden</title></head><body><p>garden compost"
                         + b" " * (1 << 20), 9)
    member = gzip.compress(b" " * (1 << 20), 9)
    return head + member * 1023


def random_bytes(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


# ----------------------------------------------------------------------------- the server
Writer = asyncio.StreamWriter
Handler = Callable[[str, str, Writer], Awaitable[tuple[int, int]]]


class Hostile:
    def __init__(self, log_path: str) -> None:
        self.log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed at exit
        self.bomb = bomb()

    def write_log(self, **row: Any) -> None:
        self.log.write(json.dumps(row) + "\n")
        self.log.flush()

    async def handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        t0 = time.time()
        host = path = ""
        status, sent, outcome = 0, 0, "ok"
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in
                       (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
            if target.startswith("http://"):
                parts = urlsplit(target)
                host = (parts.hostname or "").lower()
                path = parts.path or "/"
                query = parts.query
            else:
                host = headers.get("host", "").split(":")[0].lower()
                parts = urlsplit(target)
                path, query = parts.path or "/", parts.query
            status, sent = await self.route(host, path, query, writer)
            if status == 0:
                outcome = "reset by server"
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, OSError):
            outcome = "client went away"
        finally:
            self.write_log(t=t0, host=host, path=path, status=status, bytes=sent,
                           outcome=outcome, ms=round((time.time() - t0) * 1000, 1))
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - a reset socket may refuse even this
                pass

    async def send(self, writer: Writer, status: int, body: bytes = b"", *,
                   ctype: str = "text/html; charset=utf-8", headers: dict[str, str] | None = None,
                   length: int | None = None) -> tuple[int, int]:
        reason = {200: "OK", 301: "Moved", 302: "Found", 404: "Not Found", 500: "Server Error",
                  503: "Unavailable"}.get(status, "X")
        hdrs = {"Content-Type": ctype, "Connection": "close"}
        if length is not None or body is not None:
            hdrs["Content-Length"] = str(len(body) if length is None else length)
        hdrs.update(headers or {})
        head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        writer.write(head.encode("latin-1") + body)
        await writer.drain()
        return status, len(body)

    async def route(self, host: str, path: str, query: str, writer: Writer) -> tuple[int, int]:
        if path == "/robots.txt":
            if host == "robots.test":
                return await self.send(writer, 200, random_bytes(3000, 3) + b"\nDisallow: /\n",
                                       ctype="text/plain")
            return await self.send(writer, 200, b"User-agent: *\nAllow: /\n", ctype="text/plain")
        if path == "/good.html":
            return await self.send(writer, 200, GOOD)
        handler = getattr(self, "case_" + host.split(".")[0], None)
        if host == HUB:
            return await self.send(writer, 200, hub_page())
        if handler is None:
            return await self.send(writer, 404, b"no such host")
        return await handler(path, query, writer)

    # -- the cases --------------------------------------------------------------------
    async def case_malformed(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        body = (b"<html><head><title>Garden <b>compost</title><body><div><p>garden compost "
                b"<b><i>soil</div></p>\x00\x00<table><tr><td><a href='/good.html'>good garden"
                b"</td></a></html><<<>>><a href=\"/x\"\"\"y>\xff\xfe<p>garden compost<![CDATA["
                b"<script>never closed")
        return await self.send(w, 200, body)

    async def case_nested(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        body = (b"<html><head><title>Nested garden</title></head><body><a href='/good.html'>"
                b"garden compost</a>" + b"<div>" * 100_000 + b"garden compost deep"
                + b"</div>" * 100_000 + b"</body></html>")
        return await self.send(w, 200, body)

    async def case_binary(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        return await self.send(w, 200, random_bytes(200_000))

    async def case_encoding(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        links = ["/latin1", "/unknown", "/mixed", "/utf16", "/metalie"]
        text = "garden compost café naïve "
        if path == "/":
            return await self.send(w, 200, page("Encodings garden", text, links))
        body = page(f"Garden {path[1:]}", text * 4, ["/good.html"])
        if path == "/latin1":  # declared UTF-8, sent as Latin-1
            return await self.send(w, 200, body.decode().encode("latin-1"))
        if path == "/unknown":
            return await self.send(w, 200, body, ctype="text/html; charset=x-no-such-charset")
        if path == "/mixed":  # UTF-8 and cp1252 in one body
            return await self.send(w, 200, body + "garden €€ “quotes”".encode("cp1252"))
        if path == "/utf16":  # no charset anywhere, a BOM only
            raw = body.decode().replace("<meta charset=utf-8>", "")
            return await self.send(w, 200, raw.encode("utf-16"), ctype="text/html")
        if path == "/metalie":  # meta says Shift_JIS, bytes are UTF-8
            raw = body.decode().replace("charset=utf-8", "charset=shift_jis")
            return await self.send(w, 200, raw.encode(), ctype="text/html")
        return await self.send(w, 404, b"")

    async def case_huge(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        size = 50 * 1024 * 1024
        if path == "/":
            return await self.send(w, 200, page("Huge garden", "garden", [
                "/stream", "/announced", "/good.html"]))
        chunk = page("Huge garden", "garden compost " * 4000)
        if path == "/announced":  # Content-Length says 50 MB
            head = ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                    f"Content-Length: {size}\r\n\r\n")
        else:  # no length: read until the connection closes
            head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"
        w.write(head.encode())
        sent = 0
        while sent < size:
            w.write(chunk)
            sent += len(chunk)
            await w.drain()
        return 200, sent

    async def case_bomb(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        return await self.send(w, 200, self.bomb, headers={"Content-Encoding": "gzip"})

    async def case_redirect(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        if path == "/":
            return await self.send(w, 200, page("Redirect garden", "garden", [
                "/loop/a", "/chain/1", "/good.html"]))
        if path == "/loop/a":
            return await self.send(w, 302, b"", headers={"Location": "/loop/b"})
        if path == "/loop/b":
            return await self.send(w, 302, b"", headers={"Location": "/loop/a"})
        if path.startswith("/chain/"):
            n = int(path.rsplit("/", 1)[1])
            target = "/good.html" if n >= 30 else f"/chain/{n + 1}"
            return await self.send(w, 301, b"", headers={"Location": target})
        return await self.send(w, 404, b"")

    async def case_drip(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        body = page("Drip garden", "garden compost", ["/good.html"])
        w.write(("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n").encode())
        sent = 0
        for byte in body:
            w.write(bytes([byte]))
            await w.drain()
            sent += 1
            await asyncio.sleep(1.0)  # the drip itself
        return 200, sent

    async def case_storm(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        if path == "/":
            return await self.send(w, 503, page("Unavailable", "", [f"/p{i}" for i in range(6)]),
                                   headers={"Retry-After": "0"})
        return await self.send(w, 500, b"<html>error</html>")

    async def case_reset(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        sock = w.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        w.transport.abort()  # RST, no response at all
        return 0, 0

    async def case_trap(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        sid = f"{random.getrandbits(32):08x}"
        links = ["/calendar/2024/01/", "/events?month=1&year=2024", f"/shop;jsessionid={sid}",
                 f"/cart?sid={sid}", "/good.html"]
        if path.startswith("/calendar/"):
            parts = [p for p in path.split("/") if p]
            year, month = int(parts[1]), int(parts[2])
            nxt = (year + month // 12, month % 12 + 1)
            links = [f"/calendar/{nxt[0]}/{nxt[1]:02d}/", f"/calendar/{year}/{month:02d}/01/"]
        elif path == "/events":
            q = dict(p.split("=") for p in query.split("&") if "=" in p)
            m = int(q.get("month", 1))
            links = [f"/events?month={m % 12 + 1}&year={int(q.get('year', 2024)) + m // 12}"]
        elif path.startswith(("/shop", "/cart")):
            links = [f"/shop;jsessionid={sid}/item", f"/cart?sid={sid}&item=1"]
        return await self.send(w, 200, page("Trap garden", "garden archive", links))

    async def case_links(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        long_url = "/long/" + "a" * 10_240
        links = ["javascript:alert('garden')", "mailto:garden@links.test",
                 "data:text/html,<a href=http://links.test/x>x</a>", "file:///etc/passwd",
                 long_url, "http://links.test/?" + "q=" * 5000, "/good.html"]
        return await self.send(w, 200, page("Links garden", "garden", links))

    async def case_robots(self, path: str, query: str, w: Writer) -> tuple[int, int]:
        return await self.send(w, 200, page("Robots garden", "garden", ["/good.html"]))


async def serve(port_file: str, log_path: str) -> None:
    app = Hostile(log_path)
    server = await asyncio.start_server(app.handle, "127.0.0.1", 0, limit=1 << 20)
    port = server.sockets[0].getsockname()[1]
    tmp = port_file + ".tmp"
    Path(tmp).write_text(str(port))
    os.replace(tmp, port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()


class HostileWeb:
    """Run the hostile server in a subprocess; a context manager."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="hostile-"))
        self.log_path = self.tmp / "access.jsonl"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def __enter__(self) -> HostileWeb:
        port_file = self.tmp / "port"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--port-file", str(port_file), "--log",
             str(self.log_path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("hostile web server did not start")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def read_log(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    asyncio.run(serve(args.port_file, args.log))
