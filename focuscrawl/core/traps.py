"""URL hygiene for a focused crawl: trap and junk heuristics, nearness, irrelevant directories.

No Scrapy import; ``focuscrawl.seam.middlewares.filters`` applies these to the spider's outlinks.

* :class:`UrlRules` -- WebBase's and Nutch's heuristics against generated, potentially infinite
  URL spaces: ``/cgi-bin/``, a path segment repeated 3+ times, over-long URLs, calendar and
  session-id query strings, non-http(s) schemes.
* :class:`ServerCap` -- at most N distinct URLs per server go to the frontier (a trap that slips
  through the heuristics, like the SLAC server in Cho et al.'s crawl, still ends).
* :func:`is_near` -- the slides' *nearness*: a link on the same site is followed only under the
  current page's directory, a link to another site only if its URL or anchor names a keyword.
* :class:`DirectoryStats` -- the slides' *irrelevant directories*: once more than ``min_pages``
  pages of a directory were fetched and at least ``share`` of them were irrelevant, the
  directory is rejected.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import parse_qsl, urlsplit

from .urls import URL_CACHE_SIZE, directory

ALLOWED_SCHEMES = frozenset({"http", "https"})

#: query keys of calendar navigation (``?month=5&year=2024``, ``?date=2024-05-01``)
CALENDAR_KEYS = frozenset({
    "cal", "calendar", "caldate", "calmonth", "calyear", "date", "day", "month", "year", "week",
    "mini_cal", "yearmonth", "ym", "ymd",
})
#: path segments under which every further segment is calendar navigation
CALENDAR_SEGMENTS = frozenset({"calendar", "cal", "kalender", "calendrier"})
_DATE_VALUE = re.compile(r"^\d{4}-\d{1,2}(-\d{1,2})?$")
#: session ids in the query or as a path parameter (``;jsessionid=...``)
SESSION_KEYS = frozenset({
    "sid", "sessid", "sessionid", "session_id", "session", "phpsessid", "jsessionid",
    "aspsessionid", "cfid", "cftoken", "oscsid", "zenid", "s_id", "sess",
})
_SESSION_PATH = re.compile(r";(jsessionid|phpsessid|sid|sessionid)=|/\(S\([a-z0-9]+\)\)/", re.I)


class UrlRules:
    """Trap and junk heuristics on one URL; each is switched off with False / 0."""

    #: why a URL should not be fetched (a stats key), or None to keep it: the rules' answer,
    #: kept by URL in a bounded LRU made in ``__init__``
    reason: Callable[[str], str | None]

    def __init__(
        self,
        *,
        schemes: bool = True,
        cgi: bool = True,
        repeat: int = 3,
        max_length: int = 256,
        calendar: bool = True,
        session: bool = True,
    ) -> None:
        self.schemes = schemes
        self.cgi = cgi
        self.repeat = repeat
        self.max_length = max_length
        self.calendar = calendar
        self.session = session
        # answers by URL (a bounded LRU): a site's navigation links recur on every page (the
        # rules were 3% of a replayed crawl's CPU time)
        self.reason = lru_cache(maxsize=URL_CACHE_SIZE)(self._reason)

    def _reason(self, url: str) -> str | None:
        if self.schemes:
            scheme = url.split(":", 1)[0].lower() if ":" in url else ""
            if scheme not in ALLOWED_SCHEMES:
                return "scheme"
        if self.max_length and len(url) > self.max_length:
            return "url_length"
        parts = urlsplit(url)
        path = parts.path
        if self.cgi and "/cgi-bin/" in path.lower():
            return "cgi"
        if self.session and (_SESSION_PATH.search(path) or _has_key(parts.query, SESSION_KEYS)):
            return "session_id"
        segments = [s for s in path.lower().split("/") if s]
        if self.repeat and segments and max(Counter(segments).values()) >= self.repeat:
            return "repeated_segment"
        if self.calendar and (_calendar_path(segments) or _calendar_query(parts.query)):
            return "calendar"
        return None


def _has_key(query: str, keys: frozenset[str]) -> bool:
    return bool(query) and any(k.lower() in keys for k, _ in parse_qsl(query, True))


def _calendar_path(segments: list[str]) -> bool:
    """``/calendar/<anything>``: the calendar page itself is fine, its navigation is not."""
    return any(s in CALENDAR_SEGMENTS for s in segments[:-1])


def _calendar_query(query: str) -> bool:
    if not query:
        return False
    return any(
        k.lower() in CALENDAR_KEYS or _DATE_VALUE.match(v) for k, v in parse_qsl(query, True)
    )


class ServerCap:
    """Admit at most ``cap`` distinct URLs per server (0: no cap).

    A URL admitted once is always admitted again, so rediscovering it still reaches the
    frontier (which learns better scores from rediscoveries).
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._admitted: dict[str, set[int]] = {}

    def admit(self, server: str, url: str) -> bool:
        if not self.cap:
            return True
        seen = self._admitted.setdefault(server, set())
        key = hash(url)
        if key in seen:
            return True
        if len(seen) >= self.cap:
            return False
        seen.add(key)
        return True

    def full_servers(self) -> int:
        return sum(1 for s in self._admitted.values() if len(s) >= self.cap) if self.cap else 0


def _dir_path(url: str) -> tuple[str, str, str]:
    """(scheme, host, directory path) of a URL, port ignored as in ``urls.host``."""
    parts = urlsplit(directory(url))
    return parts.scheme, parts.hostname or "", parts.path


def is_near(source: str, target: str, keyword: bool) -> bool:
    """The slides' nearness rule for a link from page ``source`` to ``target``.

    Same host: only under the source page's directory (``/a/b/x.html`` may link to ``/a/b/c/y``,
    not to ``/a/z``).  Another host: only when the link's URL or anchor names a topic keyword
    (``keyword``, computed by the spider).
    """
    s_scheme, s_host, s_dir = _dir_path(source)
    t_scheme, t_host, t_dir = _dir_path(target)
    if s_host == t_host:
        return t_dir.startswith(s_dir)
    return keyword


class DirectoryStats:
    """Fetched and irrelevant page counts per directory; rejects mostly-irrelevant ones."""

    def __init__(self, min_pages: int = 25, share: float = 0.9) -> None:
        self.min_pages = min_pages
        self.share = share
        self.counts: dict[str, list[int]] = {}  # directory -> [fetched, irrelevant]
        self.rejected: set[str] = set()
        self.dropped: set[int] = set()  # hashes of queued URLs dropped after their rejection

    def record(self, url: str, relevant: bool) -> bool:
        """Count one fetched page; True if this page made its directory rejected."""
        d = directory(url)
        counts = self.counts.setdefault(d, [0, 0])
        counts[0] += 1
        if not relevant:
            counts[1] += 1
        if d not in self.rejected and counts[0] > self.min_pages and (
            counts[1] >= self.share * counts[0]
        ):
            self.rejected.add(d)
            return True
        return False

    def is_rejected(self, url: str) -> bool:
        return bool(self.rejected) and directory(url) in self.rejected
