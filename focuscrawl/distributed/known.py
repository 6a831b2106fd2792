"""KnownLinks: the URLs a worker knows Redis would ignore a link to, so its spider drops them.

Most outlinks of a crawl lead to a page already fetched or queued, and each cost the worker a
Request through the spider middlewares, the engine and the scheduler, and Redis a link to
decide, for nothing but a duplicate count.  The single-process spider asks the crawl order
first (``Frontier.ignores``, through ``FocusServices.known_urls``); a worker cannot ask Redis
per link (a round trip each), so it answers from what it saw itself, and only when it is sure
Redis would change nothing but its ``duplicates`` counter:

* a URL this worker was handed (``POP``): it stays in the seen-set;
* a URL this worker sent a link to (kept links go to Redis first, in order): once Redis has
  it, the URL is queued with a score at least that link's parent score, which only rises, or
  handed out, so a later link from a page scored no better changes nothing (breadth-first:
  any later link).

As in the single process, never with a link graph (Cho's orders keep every link: promotions,
backlinks) and, with MAX_BUFFER, only the URLs handed out (a queued URL may be evicted, and a
link would queue it again).  What a worker learns goes stale only when a lease goes back to the
frontier: its own when it was declared dead (:meth:`clear` then), another worker's reaped
(a link this worker drops would at most have raised that URL's score again).  Memory is
bounded: two generations of at most ``limit / 2`` URLs each, the older dropped when the newer
fills (a URL found there moves to the newer).  Plain Python, no Scrapy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from focuscrawl import config

#: URLs remembered at most by default (``FOCUS_REDIS_KNOWN``)
DEFAULT_LIMIT: int = config.default("FOCUS_REDIS_KNOWN")
_ALL = math.inf  # every link to the URL is ignored


class KnownLinks:
    """URL -> the parent score up to which a link to it changes nothing in Redis."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.half = max(0, limit) // 2
        self.mode = ""  # "": off; "done": URLs handed out only; "any": answers too
        self.any_link = False  # breadth-first: a queued URL ignores every later link
        self._new: dict[str, float] = {}
        self._old: dict[str, float] = {}

    def configure(self, config: Mapping[str, str]) -> Callable[[str, float], bool] | None:
        """Set the rules of the crawl's order (its configuration in Redis); the answer for
        ``KnownUrls.register``: :meth:`ignores`, or None when no link can be ignored."""
        self.clear()
        if not self.half or config.get("cho") == "1":
            self.mode = ""
            return None
        self.mode = "done" if int(config.get("max_buffer") or 0) else "any"
        self.any_link = config.get("strategy") == "breadth-first"
        return self.ignores

    def ignores(self, url: str, parent_score: float, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """True if Redis would change nothing but a counter for a link to ``url`` from a page
        scored ``parent_score`` (``KnownUrls.ignores``; the parent's URL and the link's words
        are not needed)."""
        floor = self._new.get(url)
        if floor is None:
            floor = self._old.get(url)
            if floor is None:
                return False
            self._keep(url, floor)
        return parent_score <= floor

    def handed_out(self, url: str) -> None:
        """This worker leased ``url``: it is in the crawl's seen-set."""
        if self.mode:
            self._keep(url, _ALL)

    def linked(self, url: str, parent_score: float) -> None:
        """This worker sent Redis a link to ``url`` from a page scored ``parent_score``."""
        if self.mode != "any":
            return
        floor = _ALL if self.any_link else parent_score
        known = self._new.get(url)
        if known is None:
            known = self._old.get(url)
        if known is None or known < floor:
            self._keep(url, floor)

    def clear(self) -> None:
        """Forget everything (this worker's leases were requeued: it was declared dead)."""
        self._new = {}
        self._old = {}

    def __len__(self) -> int:
        return len(self._new) + len(self._old)

    def _keep(self, url: str, floor: float) -> None:
        new = self._new
        if url not in new and len(new) >= self.half:
            self._old, self._new = new, {}
            new = self._new
        new[url] = floor
