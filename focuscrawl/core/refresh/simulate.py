"""A revisit schedule run on a simulated clock against known change times.

The crawler side is the real :class:`~focuscrawl.core.refresh.schedule.RevisitSchedule`; the
web side is each page's list of true change times.  Fetches happen in slots ``1/budget``
seconds apart (the crawl's fetch rate), each server at most once every ``delay`` seconds
(politeness); a slot with no due page on a ready server goes unused.  Every page is fetched
once at time 0, then only revisited.  Used by the unit tests and ``bench/freshness.py``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from focuscrawl.core.refresh.freshness import weighted_freshness
from focuscrawl.core.refresh.schedule import CHANGED, RevisitSchedule


@dataclass
class Outcome:
    freshness: float       # relevance-weighted time-averaged freshness over the run
    fetches: int           # revisits made
    unchanged: int         # revisits that found no change
    unused: int            # fetch slots with nothing due on a ready server
    visits: dict[str, list[float]] = field(default_factory=dict)


def simulate(schedule: RevisitSchedule, changes: Mapping[str, Sequence[float]],
             weights: Mapping[str, float], *, budget: float, duration: float,
             delay: float = 0.0, calibrate_every: float | None = None) -> Outcome:
    """Run ``schedule`` for ``duration`` seconds at ``budget`` fetches per second."""
    visits: dict[str, list[float]] = {}
    for url, w in weights.items():
        schedule.add(url, 0.0, w)
        visits[url] = [0.0]
    hosts = {schedule.pages[u].host for u in weights}
    caps = {h: 1.0 / delay for h in hosts} if delay > 0 else None
    every = calibrate_every or duration / 50
    schedule.calibrate(budget, caps)
    next_calibration = every
    last_fetch: dict[str, float] = {}
    fetches = unchanged = unused = 0
    slots = int(math.floor(budget * duration))
    for k in range(1, slots + 1):
        now = k / budget
        if now >= next_calibration:
            schedule.calibrate(budget, caps)
            next_calibration += every

        def ready(host: str, now: float = now) -> bool:
            return last_fetch.get(host, -math.inf) + delay <= now + 1e-12

        page = schedule.pop(now, ready)
        if page is None:
            unused += 1
            continue
        last_fetch[page.host] = now
        seen = changes.get(page.url, ())
        # the copy is the version at its last visit: changed if a change fell in between
        changed = bisect_right(seen, now) > bisect_right(seen, page.last_visit)
        outcome = schedule.visited(page.url, now, changed=changed)
        visits[page.url].append(now)
        fetches += 1
        unchanged += outcome != CHANGED
    return Outcome(weighted_freshness(visits, changes, weights, 0.0, duration), fetches,
                   unchanged, unused, visits)
