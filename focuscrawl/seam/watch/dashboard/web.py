"""The dashboard's HTTP side: one read-only Twisted resource for ``/``, ``/status.json`` and
``/metrics``, served by the crawl's own reactor.

Only GET and HEAD; with a token, a request must carry it (``?token=`` or
``Authorization: Bearer``) or gets 401.  Without a token (loopback only: the extension
refuses any other address without one) the ``Host`` header must name an address or
``localhost``, so that a web page in the user's browser cannot read the status through a
host name it rebinds to 127.0.0.1.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Callable
from functools import lru_cache
from importlib.resources import files
from typing import Any

from twisted.web.http import Request as HTTPRequest
from twisted.web.resource import Resource
from twisted.web.server import Request, Site

from focuscrawl.seam.watch.dashboard.metrics import CONTENT_TYPE

#: no network for the page: its own script and styles, answers from this origin only
_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'")


@lru_cache(maxsize=1)
def page() -> bytes:
    """The dashboard page: HTML with its script and styles inline (``page.html``)."""
    return (files(__package__) / "page.html").read_bytes()


def loopback(host: str) -> bool:
    """An address in 127.0.0.0/8 or ::1, or ``localhost``: nothing else can reach it."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_is_address(header: bytes | None) -> bool:
    if not header:
        return True  # HTTP/1.0: no Host header, no host name to rebind
    text = header.decode("latin-1").strip()
    name = text[1:].split("]", 1)[0] if text.startswith("[") else text.rsplit(":", 1)[0]
    if name.lower() == "localhost":
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class DashboardResource(Resource):
    isLeaf = True

    def __init__(self, status: Callable[[], dict[str, Any]], metrics: Callable[[], bytes],
                 token: str = "") -> None:
        super().__init__()
        self.status = status
        self.metrics = metrics
        self.token = token.encode()

    def _authorized(self, request: Request) -> bool:
        if not self.token:
            return _host_is_address(request.getHeader(b"host"))
        given = (request.args or {}).get(b"token", [b""])[0]
        auth = request.getHeader(b"authorization") or b""
        if isinstance(auth, str):
            auth = auth.encode("latin-1")
        if not given and auth[:7].lower() == b"bearer ":
            given = auth[7:].strip()
        return hmac.compare_digest(given, self.token)

    def render(self, request: Request) -> bytes:
        request.setHeader(b"cache-control", b"no-store")
        request.setHeader(b"x-content-type-options", b"nosniff")
        if request.method not in (b"GET", b"HEAD"):
            request.setResponseCode(405)
            request.setHeader(b"allow", b"GET, HEAD")
            return b"read only: GET\n"
        if not self._authorized(request):
            request.setResponseCode(401)
            request.setHeader(b"www-authenticate", b'Bearer realm="focuscrawl"')
            return b"401: the dashboard's token is missing or wrong\n"
        path = request.path
        if path in (b"/", b"/index.html"):
            request.setHeader(b"content-type", b"text/html; charset=utf-8")
            request.setHeader(b"content-security-policy", _CSP.encode())
            return page()
        if path == b"/status.json":
            request.setHeader(b"content-type", b"application/json")
            return json.dumps(self.status(), separators=(",", ":")).encode()
        if path == b"/metrics":
            request.setHeader(b"content-type", CONTENT_TYPE.encode())
            return self.metrics()
        request.setResponseCode(404)
        return b"not found\n"


class QuietSite(Site):
    """No access log line per request (the page polls every second)."""

    def log(self, request: HTTPRequest) -> None:
        pass
