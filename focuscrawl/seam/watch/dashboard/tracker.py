"""What the dashboard keeps while a crawl runs, in O(1) per page and bounded memory.

No Scrapy import: the extension feeds it from signals.  Series are thinned as they grow
(:class:`Series`), the best pages are a small heap, per-server counts one small list each.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class Series:
    """Points added one per call, at most ``limit`` kept: when full, every other point goes
    and from then on only every ``step``-th call adds one (amortised O(1) a call).  The
    points kept are those of calls ``step``, ``2 step``, ... : evenly spaced at any moment."""

    def __init__(self, limit: int = 600) -> None:
        self.limit = max(4, limit - limit % 2)
        self.step = 1
        self.calls = 0
        self.points: list[tuple[float, ...]] = []

    def add(self, point: tuple[float, ...]) -> None:
        self.calls += 1
        if self.calls % self.step:
            return
        self.points.append(point)
        if len(self.points) >= self.limit:
            del self.points[0::2]  # the calls left are multiples of the doubled step
            self.step *= 2


@dataclass(slots=True)
class ServerCounts:
    downloads: int = 0  # responses of any status
    pages: int = 0  # pages scored
    relevant: int = 0  # distinct: near-copies of pages exported earlier left out
    near_duplicates: int = 0
    failures: int = 0  # requests handed out that ended without a response
    last_url: str = ""  # a URL of the server (its scheme and port), for the robots.txt check


@dataclass(order=True, slots=True)
class BestPage:
    score: float
    seq: int  # ties: the page found first stays
    url: str = field(compare=False)
    title: str = field(compare=False)
    at: float = field(compare=False)  # epoch seconds
    order: int = field(compare=False)  # pages scored before it, plus one


class Tracker:
    """The crawl's live figures: the harvest curve, pages over time, the best pages, and
    per-server counts.  ``relevant_score`` is the crawl's FOCUS_RELEVANT_SCORE."""

    def __init__(self, relevant_score: float = 0.1, *, best: int = 20, points: int = 600,
                 interval: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.relevant_score = relevant_score
        self.best_size = best
        self.clock, self.wall = clock, wall
        self.started = clock()
        self.started_at = wall()
        self.pages = 0
        self.relevant = 0  # distinct relevant pages (near-copies are no new harvest)
        self.near_duplicates = 0
        self.downloads = 0
        self.harvest = Series(points)  # (pages, relevant)
        self.timeline = Series(points)  # (seconds since start, pages, relevant)
        self.interval = interval  # seconds between two timeline samples (Series thins them)
        self._next_sample = self.started
        self.best: list[BestPage] = []  # min-heap of the best pages
        self.servers: dict[str, ServerCounts] = {}
        self.timeline.add((0.0, 0, 0))

    def server(self, key: str) -> ServerCounts:
        counts = self.servers.get(key)
        if counts is None:
            counts = self.servers[key] = ServerCounts()
        return counts

    def page(self, server: str, url: str, score: float, title: str = "",
             duplicate: bool = False) -> None:
        """A page was scored (``duplicate``: a near-copy of a page exported earlier)."""
        self.pages += 1
        relevant = score >= self.relevant_score and not duplicate
        self.relevant += relevant
        self.near_duplicates += duplicate
        counts = self.server(server)
        counts.pages += 1
        counts.relevant += relevant
        counts.near_duplicates += duplicate
        self.harvest.add((self.pages, self.relevant))
        best = self.best
        if len(best) < self.best_size or score > best[0].score:
            item = BestPage(score, -self.pages, url, title, self.wall(), self.pages)
            if len(best) < self.best_size:
                heapq.heappush(best, item)
            else:
                heapq.heapreplace(best, item)
        self.tick()

    def download(self, server: str, url: str, status: int) -> None:
        """A response came back (any status)."""
        self.downloads += 1
        counts = self.server(server)
        counts.downloads += 1
        counts.last_url = url

    def failure(self, server: str) -> None:
        self.server(server).failures += 1

    def tick(self) -> None:
        """A timeline point if ``interval`` passed since the last one (also asked when the
        status is read, so that a stalled crawl shows as flat)."""
        now = self.clock()
        if now >= self._next_sample:
            self.timeline.add((round(now - self.started, 3), self.pages, self.relevant))
            self._next_sample = now + self.interval

    def best_pages(self) -> list[dict[str, Any]]:
        return [{"url": p.url, "title": p.title, "score": round(p.score, 4), "at": p.at,
                 "order": p.order} for p in sorted(self.best, reverse=True)]
