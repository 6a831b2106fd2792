"""A web that changes: every page's main content changes as a Poisson process of known rate.

For the revisit tests and ``bench/freshness.py``: the demo web server (:mod:`.webserver`, option
``--changing``) passes each HTML page it serves through :meth:`ChangingWeb.serve`, which

* draws the page's change rate from the seed and its URL (a share of pages never changes; the
  others' mean time between changes is log-uniform between ``min_interval`` and
  ``max_interval`` seconds of *model* time), and the change times from the same seed: the same
  web on every run, whenever a page is asked for;
* runs model time ``speed`` times faster than the wall clock from the first page it serves (the
  crawl's start, however long the crawler takes to start), so a crawl of minutes sees days of
  changes;
* rewrites the page's main content at each change (a paragraph of the revision's own words in
  ``<main>``), and on a share of the pages also the chrome on its own faster clock (a visit
  counter and a time stamp in the footer: bytes that change while the content does not, which a
  crawler must not count as a change);
* makes a share of the pages disappear at a random time (410 Gone from then on), and another
  share lose every link to them at a random time (each page linking to one turns the link into
  its plain text from then on: the page is still served, but nothing links to it);
* with ``sitemaps``, publishes each host's ``/sitemap.xml`` (named in its robots.txt) with
  each live page's true last change as ``<lastmod>``;
* serves ``ETag`` (a hash of the bytes sent), ``Last-Modified`` (the last change of those bytes)
  and 304 for a matching ``If-None-Match`` or, without one, a recent enough
  ``If-Modified-Since``;
* reports the truth at ``http://127.0.0.1:PORT/_changes.json``: each page served so far, its
  rate (per real second), its content change times, the time it went away and the time it lost
  its in-links (real epochs).

Standard library only: the server loads this file beside itself, without the package.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import threading
import time
from bisect import bisect_right
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from email.utils import formatdate, parsedate_to_datetime
from typing import Any
from urllib.parse import urldefrag, urljoin

HOUR, DAY = 3600.0, 86400.0
# the words a revision's paragraph is made of: plain prose, on no demo topic in particular
_WORDS = ("update", "revised", "notes", "section", "example", "details", "change", "release",
          "today", "added", "removed", "fixed", "version", "reader", "question", "answer",
          "summary", "review", "draft", "edition", "week", "report", "item", "list",
          "clarified", "expanded", "reworded", "corrected", "new", "older", "later", "first")
_MAIN_END = re.compile(r"</main\s*>", re.I)
_BODY_END = re.compile(r"</body\s*>", re.I)
_LINK = re.compile(r"<a\s[^>]*?href=([\"'])(.*?)\1[^>]*>(.*?)</a\s*>", re.I | re.S)


@dataclass
class ChangeConfig:
    """How the web changes (the server's ``--changing`` JSON object)."""

    seed: int = 0
    speed: float = 3600.0            # model seconds per wall-clock second
    never: float = 0.3               # share of pages that never change
    min_interval: float = HOUR       # the fastest pages' mean time between changes (model s)
    max_interval: float = 30 * DAY   # the slowest changing pages' (model s)
    noise: float = 0.3               # share of pages whose chrome changes on its own clock
    noise_interval: float = 10 * 60  # mean time between chrome changes on those (model s)
    gone: float = 0.02               # share of pages that go away at some time ...
    gone_within: float = 30 * DAY    # ... uniform within this long (model s)
    unlinked: float = 0.02           # share of pages every link to which goes, at some time
                                     # uniform within gone_within (the page is still served)
    sitemaps: bool = False           # every host publishes /sitemap.xml with <lastmod>

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChangeConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown --changing option(s): {sorted(unknown)}")
        return cls(**data)


class _PageClock:
    """One page's truth: its rate and its change times (model seconds), drawn lazily."""

    __slots__ = ("rate", "changes", "noise_rate", "noise", "gone_at", "unlinked_at", "_rng",
                 "_noise_rng")

    def __init__(self, config: ChangeConfig, url: str) -> None:
        rng = random.Random(f"{config.seed}:{url}")
        if rng.random() < config.never:
            self.rate = 0.0
        else:
            lo, hi = math.log(config.min_interval), math.log(config.max_interval)
            self.rate = 1.0 / math.exp(rng.uniform(lo, hi))
        self.noise_rate = 1.0 / config.noise_interval if rng.random() < config.noise else 0.0
        self.gone_at = (rng.uniform(0.0, config.gone_within) if rng.random() < config.gone
                        else math.inf)
        # drawn on a generator of its own: the other draws stay those of a web without it
        unlink = random.Random(f"{config.seed}:{url}:unlinked")
        self.unlinked_at = (unlink.uniform(0.0, config.gone_within)
                            if unlink.random() < config.unlinked else math.inf)
        self._rng = random.Random(f"{config.seed}:{url}:changes")
        self._noise_rng = random.Random(f"{config.seed}:{url}:noise")
        self.changes: list[float] = []
        self.noise: list[float] = []

    @staticmethod
    def _extend(times: list[float], rate: float, rng: random.Random, until: float) -> None:
        if rate <= 0:
            return
        last = times[-1] if times else 0.0
        while last <= until:
            last += rng.expovariate(rate)
            times.append(last)

    def at(self, t: float) -> tuple[int, int]:
        """(content version, chrome version) at model time ``t``."""
        self._extend(self.changes, self.rate, self._rng, t)
        self._extend(self.noise, self.noise_rate, self._noise_rng, t)
        return bisect_right(self.changes, t), bisect_right(self.noise, t)

    def changed_before(self, t: float) -> list[float]:
        self.at(t)
        return self.changes[:bisect_right(self.changes, t)]


class ChangingWeb:
    """The changing pages of one server run; thread-safe (the server answers in threads)."""

    def __init__(self, config: ChangeConfig | None = None, start: float | None = None,
                 clock: Any = time.time) -> None:
        self.config = config or ChangeConfig()
        #: when model time began (wall clock): ``start``, else the first page served
        self.start: float | None = start
        self.clock = clock
        self._pages: dict[str, _PageClock] = {}
        self._lock = threading.Lock()

    # -- time
    def model_time(self, now: float) -> float:
        return 0.0 if self.start is None else (now - self.start) * self.config.speed

    def real_time(self, model: float) -> float:
        return (self.start or 0.0) + model / self.config.speed

    def page(self, url: str) -> _PageClock:
        clock = self._pages.get(url)
        if clock is None:
            clock = self._pages[url] = _PageClock(self.config, url)
        return clock

    # -- content
    def _revision(self, url: str, version: int) -> str:
        rng = random.Random(f"{self.config.seed}:{url}:v{version}")
        words = " ".join(rng.choice(_WORDS) for _ in range(14))
        return f'<p class="revision">Revision {version}: {words}.</p>\n'

    def _chrome(self, version: int, model: float) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime((self.start or 0.0) + model))
        return (f'<footer class="counter"><p>Visits: {1000 + 37 * version} · '
                f"page generated {stamp}</p></footer>\n")

    def body(self, url: str, original: bytes, version: int, noise: int,
             noise_time: float) -> bytes:
        html = original.decode("utf-8", "replace")
        if version:
            at = _MAIN_END.search(html) or _BODY_END.search(html)
            cut = at.start() if at else len(html)
            html = html[:cut] + self._revision(url, version) + html[cut:]
        if noise:
            at = _BODY_END.search(html)
            cut = at.start() if at else len(html)
            html = html[:cut] + self._chrome(noise, noise_time) + html[cut:]
        return html.encode("utf-8")

    # -- the server's hook
    def serve(self, host: str, path: str, resp: Any, headers: Any) -> Any:
        """Rewrite a response of the static site (``resp``: the server's Response) as the page
        is now; answer 304 or 410 where due."""
        if resp.status != 200 or not resp.content_type.startswith("text/html"):
            return resp
        url = f"http://{host}{path}"
        now = self.clock()
        with self._lock:
            if self.start is None:
                self.start = now  # time begins with the first page asked for
            model = self.model_time(now)
            clock = self.page(url)
            version, noise = clock.at(model)
            if model >= clock.gone_at:
                resp.status, resp.body = 410, b"<!DOCTYPE html><html><body>Gone</body></html>\n"
                return resp
            changed = [clock.changes[version - 1] if version else -math.inf,
                       clock.noise[noise - 1] if noise else -math.inf]
            noise_time = changed[1] if noise else 0.0
            body, unlinked = self._unlink(url, resp.body, model)
            changed.append(unlinked)
        resp.body = self.body(url, body, version, noise, noise_time)
        etag = '"' + hashlib.blake2b(resp.body, digest_size=8).hexdigest() + '"'
        modified = self.real_time(max(0.0, *changed))
        resp.headers["ETag"] = etag
        resp.headers["Last-Modified"] = formatdate(modified, usegmt=True)
        if _not_modified(headers, etag, modified):
            resp.status, resp.body = 304, b""
        return resp

    def _unlink(self, url: str, html: bytes, model: float) -> tuple[bytes, float]:
        """``html`` with each link to a page unlinked by ``model`` time turned into its text,
        and when the last of those went (-inf: none); the caller holds the lock."""
        last = -math.inf

        def keep_or_cut(m: re.Match[str]) -> str:
            nonlocal last
            target = urldefrag(urljoin(url, m.group(2)))[0]
            if target == url:
                return m.group(0)
            at = self.page(target).unlinked_at
            if at > model:
                return m.group(0)
            last = max(last, at)
            return m.group(3)

        text = html.decode("utf-8", "replace")
        cut = _LINK.sub(keep_or_cut, text)
        return (cut.encode("utf-8") if cut != text else html), last

    def sitemap(self, host: str, paths: list[str]) -> bytes:
        """``host``'s sitemap now: each live page of ``paths`` with its last content change."""
        now = self.clock()
        with self._lock:
            if self.start is None:
                self.start = now
            model = self.model_time(now)
            rows = []
            for path in paths:
                url = f"http://{host}{path}"
                clock = self.page(url)
                version, _ = clock.at(model)
                if model >= clock.gone_at:
                    continue
                changed = self.real_time(clock.changes[version - 1] if version else 0.0)
                stamp = datetime.fromtimestamp(changed, timezone.utc).isoformat(
                    timespec="microseconds")
                rows.append(f"<url><loc>{url}</loc><lastmod>{stamp}</lastmod></url>")
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                '"http://www.sitemaps.org/schemas/sitemap/0.9">' + "".join(rows)
                + "</urlset>\n").encode()

    # -- the truth
    def report(self) -> dict[str, Any]:
        """Every page served so far: its rate and its changes, on the wall clock."""
        now = self.clock()
        model = self.model_time(now)
        pages = {}
        with self._lock:
            for url, clock in sorted(self._pages.items()):
                pages[url] = {
                    "rate": clock.rate * self.config.speed,
                    "changes": [self.real_time(t) for t in clock.changed_before(model)],
                    "gone": self.real_time(clock.gone_at) if clock.gone_at <= model else None,
                    "unlinked": (self.real_time(clock.unlinked_at)
                                 if clock.unlinked_at <= model else None),
                }
        return {"config": asdict(self.config), "start": self.start, "now": now, "pages": pages}


def _not_modified(headers: Any, etag: str, modified: float) -> bool:
    """RFC 9110: If-None-Match decides when present; else If-Modified-Since, at the one-second
    resolution of HTTP dates as servers compare it (a second change within the second of the
    client's copy goes unseen: that is why a crawler sends the ETag too)."""
    inm = headers.get("If-None-Match") if headers is not None else None
    if inm:
        tags = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return "*" in tags or etag in tags
    ims = headers.get("If-Modified-Since") if headers is not None else None
    if not ims:
        return False
    try:
        since = parsedate_to_datetime(ims).timestamp()
    except (TypeError, ValueError, IndexError):
        return False
    return math.floor(modified) <= since
