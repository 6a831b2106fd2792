"""A continuous crawl's revisit schedule in Redis, shared by every worker (no Scrapy).

The pages the crawl keeps and when each falls due live in Redis: per shard, a hash of each
page's state (its versions, signature, ETag, observations: ``PageState.to_dict`` as JSON), a
sorted set of pages by due time, and one of revisits leased to a worker by when the lease
lapses.  A worker takes a due page with one atomic script (``lua/revisit/claim.lua``): it
succeeds only if the page is still due at the time the worker saw, so of two workers that saw
it due, one revisits it and the other is told no -- no page is revisited twice for one due
time.  The worker reports what the revisit found and the next due time in one script
(``report.lua``); a lease that lapses (the worker died) makes the page due again
(``reap.lua``).  On a Redis Cluster there are as many shards as the frontier has, a server's
pages in shard ``crc32(server) mod shards``, each shard under its own hash tag
``{<FOCUS_REDIS_KEY>r<i>}`` so every script touches one slot.

Each worker keeps a mirror of every page (:class:`SharedRevisits`, refreshed every
``calibrate_every`` seconds) to estimate the rates with priors pooled over the whole crawl and
solve the same allocation; the worker that holds a short lock then rewrites the due times of
the pages waiting.  Politeness is the cluster's: a revisit's request goes through the same
``RedisPolitenessMiddleware`` as any other.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from focuscrawl.core.refresh.inlinks import Links
from focuscrawl.core.refresh.schedule import PageState, RevisitSchedule
from focuscrawl.core.refresh.split import REVISIT, Split
from focuscrawl.core.urls import host

from . import scripts

if TYPE_CHECKING:
    from .client import Client

#: how fast the estimate of a new page's value follows the worker's recent new pages
_HARVEST_MEMORY = 0.05


def store_prefix(key: str, shard: int) -> str:
    return "{" + key + f"r{shard}" + "}"


class RevisitStore:
    """The Redis keys of the schedule and the three scripts over them (module docstring)."""

    def __init__(self, client: Client, key: str, shards: int = 1) -> None:
        self.client = client
        self.key = key
        self.shards = max(1, shards)
        self.prefixes = [store_prefix(key, i) for i in range(self.shards)]
        self._claim = client.register_script(scripts.REVISIT_CLAIM)
        self._report = client.register_script(scripts.REVISIT_REPORT)
        self._reap = client.register_script(scripts.REVISIT_REAP)
        self._reschedule = client.register_script(scripts.REVISIT_RESCHEDULE)

    def _keys(self, url: str) -> str:
        """The prefix of the shard holding ``url``: by its host name."""
        name = host(url).encode("utf-8", "surrogatepass")
        return self.prefixes[zlib.crc32(name) % self.shards]

    def report(self, page: PageState) -> None:
        """``page``'s state and its next due time (none: gone, or never revisited)."""
        p = self._keys(page.url)
        due = "" if page.gone or math.isinf(page.due) else repr(page.due)
        self._report(keys=[f"{p}:pages", f"{p}:due", f"{p}:leases"],
                     args=[page.url, json.dumps(page.to_dict()), due])

    def earliest(self, now: float) -> tuple[str, float] | None:
        """The page due longest, at ``now`` at the latest: (url, its due time), or None."""
        best: tuple[str, float] | None = None
        for p in self.prefixes:
            got = self.client.zrangebyscore(f"{p}:due", "-inf", now, start=0, num=1,
                                            withscores=True)
            if got:
                raw, due = got[0][0], float(got[0][1])
                if best is None or due < best[1]:
                    best = (raw.decode() if isinstance(raw, bytes) else str(raw), due)
        return best

    def next_due(self) -> float:
        due = math.inf
        for p in self.prefixes:
            got = self.client.zrange(f"{p}:due", 0, 0, withscores=True)
            if got:
                due = min(due, float(got[0][1]))
        return due

    def state(self, url: str) -> dict[str, Any] | None:
        raw = self.client.hget(f"{self._keys(url)}:pages", url)
        return json.loads(raw) if raw else None

    def claim(self, url: str, due: float, lapse: float) -> bool:
        """Lease ``url`` if it is still due at ``due``: True for one worker only."""
        p = self._keys(url)
        return bool(self._claim(keys=[f"{p}:due", f"{p}:leases"],
                                args=[url, repr(due), repr(lapse)]))

    def reap(self, now: float) -> int:
        """Revisits whose lease lapsed are due again now; how many."""
        return sum(int(self._reap(keys=[f"{p}:leases", f"{p}:due"], args=[repr(now)]))
                   for p in self.prefixes)

    def states(self) -> list[dict[str, Any]]:
        """Every kept page's state."""
        return [json.loads(raw) for p in self.prefixes
                for raw in self.client.hgetall(f"{p}:pages").values()]

    def reschedule(self, pages: list[PageState]) -> None:
        """New due times for the pages not leased (a leased page's comes with its report)."""
        by_prefix: dict[str, list[str]] = {}
        for page in pages:
            if not page.gone and not math.isinf(page.due):
                by_prefix.setdefault(self._keys(page.url), []).extend(
                    (page.url, repr(page.due)))
        for p, args in by_prefix.items():
            self._reschedule(keys=[f"{p}:due", f"{p}:leases"], args=args)

    def lock(self, name: str, seconds: float) -> bool:
        """One worker at a time does ``name`` (a lock that lapses after ``seconds``)."""
        return bool(self.client.set(f"{self.prefixes[0]}:lock:{name}", "1", nx=True,
                                    px=max(1, int(seconds * 1000))))


class SharedRevisits:
    """A worker's view of the shared schedule: what ``focuscrawl.seam.revisit.Revisits`` asks
    of its frontier (``schedule``, ``split``, ``kept``, ``revisited``, ``gone``), and what the
    distributed scheduler asks for (:meth:`take`, :meth:`tick`)."""

    def __init__(self, store: RevisitStore, schedule: RevisitSchedule, split: Split, *,
                 clock: Callable[[], float], capacity: Callable[[set[str]], dict[str, float]],
                 calibrate_every: float = 30.0, lease_timeout: float = 600.0) -> None:
        self.store = store
        self.schedule = schedule
        self.split = split
        self.clock = clock
        self.capacity = capacity
        self.calibrate_every = calibrate_every
        self.lease_timeout = lease_timeout
        self.harvest = 1.0
        self._next_calibration = -math.inf
        self.claims_lost = 0  # due pages another worker took first

    # -- the scheduler's side -------------------------------------------------------------------
    def tick(self) -> None:
        """Lapsed leases due again; every ``calibrate_every`` s the mirror refreshed and the
        allocation solved (and, by one worker, the waiting pages' due times rewritten)."""
        now = self.clock()
        self.store.reap(now)
        if now < self._next_calibration:
            return
        for data in self.store.states():
            self.schedule.put(data)
        if self._calibrate():
            self._next_calibration = now + self.calibrate_every
            if self.store.lock("calibrate", self.calibrate_every / 2):
                self.store.reschedule(list(self.schedule.live()))

    def _calibrate(self) -> bool:
        """Solve the allocation over the pages the mirror holds; False if there are none."""
        pages = list(self.schedule.live())
        if not pages:
            return False  # nothing kept yet: the next tick looks again
        caps = self.capacity({p.host for p in pages})
        share = self.split.share if self.split.share is not None else 1.0
        self.schedule.calibrate(share * sum(caps.values()), {h: share * c for h, c in caps.items()})
        return True

    def take(self, *, prefer: bool) -> PageState | None:
        """A due page to revisit now, leased to this worker, or None: none is due, the split
        prefers a new page (unless ``prefer``), or another worker took it first."""
        now = self.clock()
        found = self.store.earliest(now)
        if found is None:
            return None
        url, due = found
        data = self.store.state(url)
        if data is None:
            return None
        page = self.schedule.put(data)
        if not prefer and self.split.choose(self.harvest, self.schedule.value(page, now)) \
                != REVISIT:
            return None
        if not self.store.claim(url, due, now + self.lease_timeout):
            self.claims_lost += 1
            return None
        self.schedule.lease(page)
        self.split.record(REVISIT)
        return page

    def next_due(self) -> float:
        return self.store.next_due()

    # -- the spider's side (through Revisits) ---------------------------------------------------
    def _allocated(self) -> None:
        """This worker's first page: the crawl's allocation before any due time is set."""
        if self.schedule.allocation is None:
            self._next_calibration = -math.inf
            self.tick()

    def kept(self, url: str, weight: float, signature: str, *, host: str | None = None,
             etag: str | None = None, last_modified: str | None = None,
             seed: bool = False) -> PageState:
        self._allocated()
        page = self.schedule.add(url, self.clock(), weight, signature, etag=etag,
                                 last_modified=last_modified, host=host, seed=seed)
        if self.schedule.allocation is None:  # the crawl's first page of all
            self._calibrate()
        self.harvest += _HARVEST_MEMORY * (weight - self.harvest)
        self.store.report(page)
        return page

    def revisited(self, url: str, **kwargs: Any) -> str:
        self._allocated()
        outcome = self.schedule.visited(url, self.clock(), **kwargs)
        self.store.report(self.schedule.pages[url])
        return outcome

    def hint(self, url: str, changed_at: float) -> bool:
        """A sitemap's ``lastmod``: due now in Redis if the page changed since its last visit
        (and is not leased: its report comes first)."""
        page = self.schedule.get(url)
        if page is None or page.gone or changed_at <= page.last_visit:
            return False
        page.due = self.clock()
        self.store.reschedule([page])
        return True

    def linked(self, url: str, links: Links) -> tuple[list[PageState], list[PageState]]:
        """Not in a distributed crawl: whether any kept page still links to a page is a
        question for every worker's latest fetches at once, which no worker has; a page is
        found gone by its own 404 or 410."""
        return [], []

    def gone(self, url: str) -> bool:
        first = self.schedule.mark_gone(url, self.clock())
        self.store.report(self.schedule.pages[url])
        return first

