"""Safety middlewares: no private addresses through links, no binary bodies parsed as HTML.

PrivateAddressMiddleware: a public page cannot steer the crawler into a private network.

A crawler follows links written by strangers.  A link (or a redirect) to ``http://10.0.0.5/``,
``http://localhost:8080/admin`` or ``http://169.254.169.254/`` (a cloud's metadata service) would
make the crawler fetch from inside the network it runs in.  This downloader middleware refuses
such requests with IgnoreRequest, counted as ``focus/safety/blocked/<reason>``:

* ``scheme``: anything but http and https (Scrapy also fetches file:, s3:, ftp:, data:; the
  project disables those handlers too);
* ``loopback``, ``private``, ``link_local``, ``reserved``: a literal IP address that is not
  globally routable -- including the forms ``getaddrinfo`` still accepts (``127.1``,
  ``2130706433``, ``0x7f.0.0.1``) and IPv4-mapped IPv6 (``[::ffff:10.0.0.1]``);
* ``local_name``: ``localhost`` and ``*.localhost``, ``*.local`` (mDNS), ``*.internal``,
  ``*.home.arpa``, ``*.lan``, and single-label names (``http://intranet/``), which a resolver
  completes with the local search domain;
* ``resolved_<reason>``: a host name whose address is one of the above.  Checked only when the
  request does not go through an HTTP proxy: a proxy resolves names itself, in its own network,
  and the crawler never learns the address (literal addresses and local names are refused
  whether proxied or not).  The lookup goes through the reactor's resolver, the one Scrapy's
  download handler uses and caches, so the connection uses the address that was checked.

The guard is for links found on pages: the spider's own start requests (whatever the spider;
Scrapy marks them ``is_start_request``) are the user's intent and pass, and so do later requests
to the hosts they name -- a crawl started on an intranet host stays on it -- while a redirect
away from them is a link like any other.  ``FOCUS_BLOCK_PRIVATE = "auto"`` (the default)
switches the guard on unless a seed URL (``-a seeds`` / ``FOCUS_SEEDS``, a file of URLs too) is
itself on a private network or a local name -- a crawl of an intranet, or the tests' loopback
servers; ``True`` always, ``False`` never.  Order 50: before robots.txt is fetched for such a
host.  Each reason for a refusal is said once in the log (INFO), every refusal counted.

BinaryBodyMiddleware: a body declared HTML that is binary (an image, an archive, random bytes
behind a wrong Content-Type) is dropped as ``focus/safety/binary_as_html`` instead of being
scored as a page of mojibake.  The test is the WHATWG sniffing rule's "binary data bytes"
(control characters no text uses) in the first KB, unless a BOM announces UTF-16/32.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached

from focuscrawl import config
from focuscrawl.seam.arguments import ArgumentError, arguments_of, parse_seeds
from focuscrawl.seam.meta import ROBOTS
from focuscrawl.seam.refusals import Refusals

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

FETCH_SCHEMES = frozenset({"http", "https"})
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                         "broadcasthost"})
LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".lan", ".localdomain")
_LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip(host: str) -> IPAddress | None:
    """The address a literal host denotes, as a resolver would read it; None for a name."""
    h = host.strip().rstrip(".").lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    h = h.split("%", 1)[0]  # fe80::1%eth0
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if _LEGACY_IPV4.match(h):  # inet_aton's forms: 127.1, 2130706433, 0x7f000001, 0177.0.0.1
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def address_reason(ip: IPAddress) -> str | None:
    """Why an address must not be fetched, or None for a globally routable one."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.is_unspecified or ip.is_reserved or ip.is_multicast:
        return "reserved"
    if ip.is_private or not ip.is_global:
        return "private"
    return None


def host_reason(host: str | None) -> str | None:
    """Why a URL's host must not be fetched, judged without DNS; None if it may be."""
    if not host:
        return "local_name"
    ip = parse_ip(host)
    if ip is not None:
        return address_reason(ip)
    name = host.strip().rstrip(".").lower()
    if name in LOCAL_NAMES or name.endswith(LOCAL_SUFFIXES) or "." not in name:
        return "local_name"
    return None


def is_private_url(url: str) -> bool:
    """True for a URL on a private/loopback/local host by its literal form (no DNS)."""
    try:
        return host_reason(urlsplit(url).hostname) is not None
    except ValueError:
        return False


BYPASS_CACHE = 10_000  # hosts whose no_proxy answer is kept


class PrivateAddressMiddleware:
    def __init__(self, crawler: Crawler, mode: str) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.mode = mode
        self.active = mode == "on"
        self.proxies = {k: v for k, v in getproxies().items() if k in FETCH_SCHEMES}
        # host -> no_proxy exempts it: proxy_bypass reads the whole environment per call, a
        # cost per request through a proxy (4% of a worker's CPU in bench/distributed.py)
        self._bypass: dict[str, bool] = {}
        self.refusals = Refusals(crawler.stats, "focus/safety/blocked", "FOCUS_BLOCK_PRIVATE",
                                 logger)
        #: hosts the spider's start requests named: the user's intent, never refused
        self.trusted: set[str] = set()
        if mode == "auto":
            crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PrivateAddressMiddleware:
        raw = config.get(crawler.settings, "FOCUS_BLOCK_PRIVATE")
        mode = str(raw).strip().lower()
        if mode in ("0", "false", "no", "off", "none", ""):
            raise NotConfigured
        mode = "auto" if mode == "auto" else "on"
        return cls(crawler, mode)

    # -- auto: on unless a seed is private ----------------------------------------------------
    def _spider_opened(self, spider: Spider) -> None:
        seeds = self._seeds(spider)
        private = [u for u in seeds if is_private_url(u)]
        self.active = not private
        if private:
            logger.info("FOCUS_BLOCK_PRIVATE=auto: off, the seeds are on a private or loopback "
                        "network (%s)", private[0])
        self.stats.set_value("focus/safety/block_private", int(self.active))

    def _seeds(self, spider: Spider) -> list[str]:
        published = arguments_of(spider)
        args = published.parsed if published is not None else None
        seeds = list(args.seeds) if args is not None else []
        if not seeds:
            try:  # a list, a comma-separated string or a file of URLs, as the spider reads it
                seeds = parse_seeds(config.get(self.crawler.settings, "FOCUS_SEEDS") or None)
            except ArgumentError:
                seeds = []  # the spider reports its bad seeds itself
        return seeds

    # -- the check ------------------------------------------------------------------------
    async def process_request(self, request: Request) -> None:
        if not self.active:
            return None
        parsed = urlparse_cached(request)
        meta = request.meta
        if meta.get("is_start_request") and "redirect_urls" not in meta:
            self.trusted.add(parsed.hostname or "")
            return None  # the user's own request
        if parsed.hostname in self.trusted and parsed.scheme in FETCH_SCHEMES:
            return None
        if parsed.scheme not in FETCH_SCHEMES:
            self._block(request, "scheme")
        host = parsed.hostname
        reason = host_reason(host)
        if reason is not None:
            self._block(request, reason)
        assert host is not None
        if parse_ip(host) is None and not self._proxied(request, parsed.scheme, host):
            for address in await self._resolve(host):
                reason = address_reason(address)
                if reason is not None:
                    self._block(request, f"resolved_{reason}")
        return None

    def _proxied(self, request: Request, scheme: str, host: str) -> bool:
        """Would this request go through an HTTP proxy (as Scrapy's HttpProxyMiddleware)?"""
        if "proxy" in request.meta:
            return bool(request.meta["proxy"])
        if scheme not in self.proxies:
            return False
        bypass = self._bypass.get(host)
        if bypass is None:
            if len(self._bypass) >= BYPASS_CACHE:
                self._bypass.clear()
            bypass = self._bypass[host] = bool(proxy_bypass(host))
        return not bypass

    async def _resolve(self, host: str) -> list[IPAddress]:
        from twisted.internet import reactor

        try:
            # zope interface methods have no self: without the mypy-zope plugin mypy reads
            # IReactorCore.resolve's name as self and the host as its timeout
            resolving = reactor.resolve(host)  # type: ignore[arg-type]
            address = await maybe_deferred_to_future(resolving)
        except Exception:
            return []  # the download fails with the same DNS error and is counted there
        ip = parse_ip(str(address))
        return [ip] if ip is not None else []

    def _block(self, request: Request, reason: str) -> Any:
        self.refusals.refused(reason, request.url)
        raise IgnoreRequest(f"FOCUS_BLOCK_PRIVATE: {reason} address")


# ------------------------------------------------------------------------ binary bodies
_BINARY_BYTES = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\x00\x00\xfe\xff")
SNIFF_BYTES = 1024
BINARY_SHARE = 0.05  # random bytes have 27/256 = 10.5 %; text, even broken, next to none


def looks_binary(body: bytes) -> bool:
    """True for a body whose first KB is not text (WHATWG's binary data bytes, BOMs aside)."""
    head = body[:SNIFF_BYTES]
    if not head or head.startswith(_BOMS):
        return False
    binary = sum(1 for b in head if b in _BINARY_BYTES)
    return binary >= max(1, BINARY_SHARE * len(head))


class BinaryBodyMiddleware:
    """Drop a response declared HTML whose body is binary (order 535: after truncation)."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BinaryBodyMiddleware:
        if not config.get(crawler.settings, "FOCUS_DROP_BINARY"):
            raise NotConfigured
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        if request.meta.get(ROBOTS) or not 200 <= response.status < 300:
            return response
        ctype = (response.headers.get(b"Content-Type") or b"").split(b";")[0].strip().lower()
        if ctype not in (b"text/html", b"application/xhtml+xml", b""):
            return response
        if looks_binary(response.body):
            self.stats.inc_value("focus/safety/binary_as_html")
            raise IgnoreRequest("binary body served as text/html")
        return response
