"""The dashboard's ``/status.json``: one dict built from the tracker, the scheduler, the
politeness state and the crawl's stats, at most as often as it is cheap to.

Building it walks every server: O(servers), never per page.  It is cached, and built again
only once ``max(min_age, cost_factor x the last build's time)`` has passed; the frontier's
:meth:`insight` (a sample of the queue, the learned weights: the costliest part) is asked
at most every ``insight_age`` seconds the same way.  However often the page, several tabs
or a scraper ask, the crawl spends at most about 1/cost_factor of its time on them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from focuscrawl import config
from focuscrawl.seam.arguments import arguments_of
from focuscrawl.seam.content import content_status
from focuscrawl.seam.engine import scheduler_of
from focuscrawl.seam.watch.dashboard.tracker import Tracker

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focuscrawl.core.frontier import HostPolicy
    from focuscrawl.seam.services import FocusServices

#: servers listed (the most downloaded from); the totals count every server
SERVERS_SHOWN = 40
#: settings never shown, in part or whole (a token, a password in a Redis URL)
_SECRET = re.compile(r"TOKEN|PASSWORD|SECRET|CREDENTIAL", re.I)
_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")
#: the counters the page shows, each the sum of the stats named (a trailing * : a prefix)
COUNTERS = {
    "errors": ("focus/fetch/errors", "spider_exceptions/*"),
    "robots_refused": ("focus/robots/disallowed", "focus/robots/unreachable"),
    "robots_held": ("focus/robots/held",),
    "traps": ("focus/filtered/*", "focus/dirs/rejected"),
    "duplicates": ("focus/duplicates",),
    "offsite": ("focus/links/offsite",),
    "retries": ("retry/count",),
    "redirects": ("downloader/response_status_count/30*",),
    "items": ("item_scraped_count",),
}


def _total(stats: dict[str, Any], names: tuple[str, ...]) -> int:
    total: float = 0
    for name in names:
        if name.endswith("*"):
            prefix = name[:-1]
            total += sum(v for k, v in stats.items()
                         if k.startswith(prefix) and isinstance(v, (int, float)))
        else:
            value = stats.get(name, 0)
            total += value if isinstance(value, (int, float)) else 0
    return int(total)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def shown_settings(settings: Any) -> dict[str, Any]:
    """Every FOCUS_* setting and the few Scrapy ones that shape a crawl, secrets hidden."""
    names = sorted(n for n in settings.attributes if n.startswith("FOCUS_"))
    names += ["CONCURRENT_REQUESTS", "DOWNLOAD_TIMEOUT", "JOBDIR", "USER_AGENT"]
    out: dict[str, Any] = {}
    for name in names:
        value = settings.get(name)
        if _SECRET.search(name):
            value = "(set)" if value else ""
        elif isinstance(value, str):
            value = _USERINFO.sub("***@", value)
        out[name] = _plain(value)
    return out


class StatusBuilder:
    """Builds and caches the status dict (see the module docstring)."""

    def __init__(self, crawler: Crawler, tracker: Tracker, *, min_age: float = 1.0,
                 insight_age: float = 5.0, cost_factor: float = 50.0,
                 clock: Callable[[], float] = time.monotonic,
                 cluster: Callable[[], dict[str, Any] | None] | None = None) -> None:
        self.crawler = crawler
        self.tracker = tracker
        self.min_age = min_age
        self.cost_factor = cost_factor
        self.clock = clock
        self.cluster = cluster  # the distributed crawl's figures (None: single process)
        self.settings = shown_settings(crawler.settings)
        self.insight_age = insight_age
        self._insight_cache: dict[str, Any] | None = None
        self._insight_due = 0.0
        self._cached: dict[str, Any] | None = None
        self._due = 0.0
        self.final: dict[str, Any] | None = None  # set once the crawl closed
        self.builds = 0

    def get(self) -> dict[str, Any]:
        if self.final is not None:
            return self.final
        now = self.clock()
        if self._cached is None or now >= self._due:
            self._cached = self.build()
            cost = self.clock() - now
            self._due = now + max(self.min_age, self.cost_factor * cost)
        return self._cached

    def finish(self, reason: str) -> dict[str, Any]:
        """The last figures, built now and served from then on."""
        self._insight_cache = None
        status = self.build()
        status["state"] = "finished"
        status["finish_reason"] = reason
        for row in status["servers"]:  # nothing waits any more
            if row["state"] in ("busy", "waiting", "held"):
                row["state"], row["next_in"] = "idle", 0.0
        self.final = status
        return status

    # -- the parts --------------------------------------------------------------------------
    def _scheduler(self) -> Any:
        return scheduler_of(self.crawler)

    def _services(self) -> FocusServices | None:
        from focuscrawl.seam.services import FocusServices

        return self.crawler.get_extension(FocusServices)

    def _insight(self, frontier: Any) -> dict[str, Any] | None:
        """``frontier.insight()``: the frontier's costliest part (a sample of its queue, the
        learned weights), asked again only once ``max(insight_age, cost_factor x its cost)``
        has passed."""
        insight = getattr(frontier, "insight", None)
        if insight is None:
            return None
        now = self.clock()
        if self._insight_cache is None or now >= self._insight_due:
            self._insight_cache = insight()
            cost = self.clock() - now
            self._insight_due = now + max(self.insight_age, self.cost_factor * cost)
        return self._insight_cache

    def _topic(self) -> str:
        """The spider's keywords (``-a keywords``), else FOCUS_KEYWORDS."""
        published = arguments_of(getattr(self.crawler, "spider", None))
        words = published.parsed.keywords if published and published.parsed else None
        if words:
            return ", ".join(map(str, words))
        return str(config.get(self.crawler.settings, "FOCUS_KEYWORDS"))

    def build(self) -> dict[str, Any]:
        self.builds += 1
        t = self.tracker
        t.tick()
        stats = self.crawler.stats.get_stats() if self.crawler.stats else {}
        scheduler = self._scheduler()
        frontier = getattr(scheduler, "frontier", None)
        cluster = self.cluster() if self.cluster is not None else None
        progress: dict[str, Any] | None = None
        if cluster is not None:  # a distributed worker: its own pages, the shared queue
            pages, queued = getattr(scheduler, "pages", t.pages), cluster["queued"]
        else:
            progress_of = getattr(scheduler, "progress", None)
            progress = progress_of() if progress_of is not None else None
            pages = (progress or {}).get("pages", stats.get("focus/pages_fetched", t.pages))
            queued = (progress or {}).get("queued", len(frontier) if frontier is not None else 0)
        relevant = int(stats.get("focus/relevant_pages", t.relevant) or 0)
        harvest = stats.get("focus/harvest_rate")
        if harvest is None:
            harvest = round(relevant / t.pages, 4) if t.pages else 0.0
        statuses = {k.rsplit("/", 1)[1]: v for k, v in stats.items()
                    if k.startswith("downloader/response_status_count/")}
        servers, busy, total = self._servers()
        order = self._insight(frontier) if cluster is None else None
        learned = order.get("learned") if order is not None else None
        if order is not None:
            order = {k: v for k, v in order.items() if k != "learned"}
        return {
            "version": 1,
            "topic": self._topic(),
            "state": "running",
            "finish_reason": None,
            "time": time.time(),
            "started": t.started_at,
            "elapsed": round(t.clock() - t.started, 3),
            "pages": int(pages),
            "relevant": relevant,
            "near_duplicates": int(stats.get("focus/near_duplicates", t.near_duplicates) or 0),
            "harvest_rate": float(harvest),
            "queued": int(queued),
            "max_pages": int((progress or cluster or {}).get("max_pages", 0)
                             or config.get(self.crawler.settings, "FOCUS_MAX_PAGES")),
            "hot": int((progress or {}).get("hot", stats.get("focus/pages_hot", 0)) or 0),
            "scored": t.pages,
            "downloads": int(stats.get("downloader/response_count", 0)),
            "statuses": statuses,
            "errors": int(stats.get("downloader/exception_count", 0)),
            "servers_busy": busy,
            "servers_total": total,
            "relevant_score": t.relevant_score,
            "curve": {"harvest": t.harvest.points, "timeline": t.timeline.points},
            "best": t.best_pages(),
            "servers": servers,
            "frontier": order,
            "learned": learned,
            "counters": {name: _total(stats, names) for name, names in COUNTERS.items()},
            "content": content_status(stats),  # pages' content: extracted, failed, languages
            "stats": {k: v for k, v in sorted(stats.items())
                      if isinstance(v, (int, float)) and not isinstance(v, bool)},
            "settings": self.settings,
            "cluster": cluster,
            "revisit": self._revisit(),
        }

    def _revisit(self) -> dict[str, Any] | None:
        """A continuous crawl's revisits (``Revisits.summary``); None for a crawl that ends."""
        services = self._services()
        revisits = services.revisits if services is not None else None
        return revisits.summary() if revisits is not None else None

    def _servers(self) -> tuple[list[dict[str, Any]], int, int]:
        """The most downloaded-from servers with their state; busy and total counts."""
        services = self._services()
        policy: HostPolicy | None = services.policy if services is not None else None
        robots = services.robots if services is not None else None
        t = self.tracker
        states = policy.servers if policy is not None else {}
        now = policy.clock() if policy is not None else 0.0
        held = policy.held if policy is not None else {}
        busy = sum(1 for s in states.values() if s.active or s.pending)
        names = set(t.servers) | set(states)
        shown = sorted(names, key=lambda n: (-(t.servers[n].downloads if n in t.servers
                                                else 0), n))[:SERVERS_SHOWN]
        rows = []
        for name in shown:
            counts = t.servers.get(name)
            state = states.get(name)
            row: dict[str, Any] = {
                "server": name,
                "downloads": counts.downloads if counts else 0,
                "pages": counts.pages if counts else 0,
                "relevant": counts.relevant if counts else 0,
                "near_duplicates": counts.near_duplicates if counts else 0,
                "relevant_share": round(counts.relevant / counts.pages, 3)
                if counts and counts.pages else None,
                "failures": counts.failures if counts else 0,
                "state": "idle", "next_in": 0.0, "active": 0, "delay": None,
            }
            if state is not None:
                row["active"] = state.active + state.pending
                row["delay"] = round(max(state.delay, state.crawl_delay, state.slow_delay), 3)
                wait = max(0.0, state.next_start - now)
                until = held.get(name)
                if until is not None and until > now:
                    row["state"], wait = "held", max(wait, until - now)
                elif state.active or state.pending:
                    row["state"] = "busy"
                elif wait > 0:
                    row["state"] = "waiting"
                row["next_in"] = round(wait, 3)
            if robots is not None and counts is not None and counts.last_url:
                parts = urlsplit(counts.last_url)
                if robots.disallows(f"{parts.scheme}://{parts.netloc}/"):
                    row["state"] = "robots refused"
            rows.append(row)
        return rows, busy, len(names)
