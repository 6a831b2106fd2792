"""A request and the frontier's record of it, for both schedulers (FocusScheduler and
RedisFocusScheduler compose a :class:`Records`; neither inherits from the other).

A plain outlink is kept as its URL and what ``meta["focus"]`` says about its link (a ``Link`` in,
an ``Entry`` out); anything unusual -- a callback, a body, cookies, other meta -- is kept whole as
``request.to_dict``.  The request handed out for an entry carries its lease and its server in
its meta.  The stats both schedulers keep about requests are counted here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import TextResponse
from scrapy.utils.request import request_from_dict

from focuscrawl import config
from focuscrawl.core.frontier import Entry, Link
from focuscrawl.core.urls import URL_CACHE_SIZE, canonical
from focuscrawl.seam.meta import LEASE, LINK, SERVER

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from focuscrawl.seam.servers import ServerKeys

# meta keys a plain outlink may carry and still be stored compactly
_PLAIN_META = {LINK, "depth", "download_timeout", "download_slot", "download_latency",
               "is_start_request"}


#: the Content-Types the spider parses as a page (beside none at all: it sniffs the text)
HTML_TYPES = ("text/html", "application/xhtml+xml")


def is_html(response: Response) -> bool:
    """Whether the spider parses ``response`` as a page: text whose Content-Type is HTML, or
    that has none.  Decided from the headers alone, so the politeness middleware can tell the
    scheduler before the spider sees the response."""
    raw = response.headers.get(b"Content-Type")
    ctype = raw.decode("latin-1").split(";", 1)[0].strip().lower() if raw else ""
    return isinstance(response, TextResponse) and (not ctype or ctype in HTML_TYPES)


def is_page(status: int | None, html: bool = True) -> bool:
    """Whether a download that ended with ``status`` (None: no response) counts against
    MAX_PAGES: a successful (2xx) response that is a page (``html``, :func:`is_html`).  A
    redirect is a hop to the page; an error status, a failed download and a file that is not
    HTML (a text or PDF file the spider skips) gave no page.  Each gives its share of the
    budget back, so a crawl of N pages has N pages to show, as Pant et al. count ("only good
    links are used").
    """
    return html and status is not None and 200 <= status < 300


def server_by(settings: BaseSettings) -> str:
    """``FOCUS_SERVER_KEY``, checked (NotConfigured unless "host" or "ip")."""
    by = config.get(settings, "FOCUS_SERVER_KEY")
    if by not in ("host", "ip"):
        raise NotConfigured(f"FOCUS_SERVER_KEY must be 'host' or 'ip', not {by!r}")
    return by


@lru_cache(maxsize=URL_CACHE_SIZE)
def request_key(url: str) -> str | None:
    """What :meth:`Records.url` makes of ``Request(url)``, without a Request per call: the
    spider asks it of every outlink it may drop unbuilt (``KnownUrls``), and a site's links
    recur on every page.  None if the request would have no key (or could not be built)."""
    try:
        return canonical(Request(url).url)
    except ValueError:
        return None


class Records:
    """Requests to frontier records and back, for one crawl of ``spider``."""

    def __init__(self, stats: StatsCollector, servers: ServerKeys, spider: Spider | None, *,
                 learns: bool = False) -> None:
        self.stats = stats
        self.servers = servers
        self.spider = spider
        self.learns = learns  # the crawl order reads a link's nearby text (journaled only then)
        # requests not taken, not yet added to focus/duplicates_or_dropped (see flush_stats)
        self._dropped = 0

    def url(self, request: Request) -> str | None:
        """The request's canonical URL; None (counted) if it has none."""
        try:
            return canonical(request.url)
        except ValueError:
            self.stats.inc_value("focus/rejected/bad_url")
            return None

    def link(self, request: Request, url: str) -> Link:
        """The frontier's record of a request: what ``meta["focus"]`` says about its link."""
        meta = request.meta
        focus = meta.get(LINK) or {}
        return Link(
            url,
            host=self.servers.key(url),
            anchor=focus.get("anchor", ""),
            context=focus.get("context", "") if self.learns else "",
            chrome=bool(focus.get("chrome", False)),
            parent=focus.get("parent"),
            parent_score=float(focus.get("parent_score", 0.0)),
            parent_hot=bool(focus.get("parent_hot", False)),
            depth=int(meta.get("depth", focus.get("depth", 0))),
            keyword=bool(focus.get("keyword", False)),
            force=request.dont_filter,
            payload=self._payload(request, url),
        )

    def queued(self, queued: bool) -> bool:
        """Count a request the frontier did not take (a URL seen, or dropped).

        Counted here and added to the stats by :meth:`flush_stats` (at the next hand-out,
        and when the scheduler updates its stats): most outlinks are duplicates, and a
        StatsCollector.inc_value per outlink cost more than the rest of this record.
        """
        if not queued:
            self._dropped += 1
        return queued

    def flush_stats(self) -> None:
        """Add the requests counted by :meth:`queued` to ``focus/duplicates_or_dropped``."""
        if self._dropped:
            self.stats.inc_value("focus/duplicates_or_dropped", self._dropped)
            self._dropped = 0

    def _payload(self, request: Request, url: str) -> Any:
        """None for a plain outlink (rebuilt from the entry), else the request as a dict."""
        headers = request.headers
        plain = (
            request.method == "GET"
            and not request.body
            and request.callback is None
            and request.errback is None
            and request.priority == 0
            and (not headers or (list(headers) == [b"Referer"]
                                 and self._is_parent(headers[b"Referer"], request)))
            and not request.cookies
            and set(request.meta) <= _PLAIN_META
            and request.url == url
        )
        if plain:
            return None
        self.stats.inc_value("focus/requests_stored_whole")
        return request.to_dict(spider=self.spider)

    @staticmethod
    def _is_parent(referer: bytes | None, request: Request) -> bool:
        """Scrapy's RefererMiddleware names the parent page: rebuilt from the entry (a Referer
        header without a value names none)."""
        parent = (request.meta.get(LINK) or {}).get("parent")
        if referer is None or parent is None:
            return False
        try:
            return canonical(referer.decode("latin-1")) == parent
        except ValueError:
            return False

    def request(self, entry: Entry, lease: int) -> Request:
        """The request handed out for ``entry`` under ``lease`` (counted)."""
        if entry.payload is not None:
            request = request_from_dict(entry.payload, spider=self.spider)
            # a copy: the stored payload must not change when a request is handed out
            request.meta[LINK] = dict(request.meta.get(LINK) or {})
        else:
            headers = {"Referer": entry.parent} if entry.parent else None
            request = Request(entry.url, headers=headers,
                              meta={"depth": entry.depth, LINK: {}})
            if entry.parent is None and not entry.depth:
                # a seed: the spider's start request, kept plain (the private-address guard
                # lets the user's own requests through)
                request.meta["is_start_request"] = True
        focus = request.meta[LINK]
        focus.setdefault("anchor", entry.anchor)
        focus.setdefault("parent", entry.parent)
        focus["priority"] = entry.score
        focus["depth"] = entry.depth
        request.meta[LEASE] = lease
        request.meta[SERVER] = entry.host
        self.stats.inc_value("focus/requests_handed_out")
        self.flush_stats()
        return request
