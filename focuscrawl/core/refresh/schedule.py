"""The revisit schedule: every page a crawl keeps, its versions, its change rate, its due time.

A page enters once fetched (:meth:`RevisitSchedule.add`), is handed out when due and its server
is ready (:meth:`RevisitSchedule.pop`), and comes back with what the revisit found
(:meth:`RevisitSchedule.visited`): unchanged (a 304, or the same main-content signature),
changed (a new version), or gone: it answered 404 or 410, or every kept page that linked to it
stopped linking to it (:meth:`RevisitSchedule.linked`, :mod:`.inlinks`). Each visit is an
observation for the page's change rate (:mod:`.estimate`); :meth:`RevisitSchedule.calibrate`
re-solves the allocation (:mod:`.policy`) for the revisit budget politeness allows, and each
page's next due time is its last visit plus 1/f. Pages wait in one heap per server, and servers
in a heap by their earliest due page, so a busy server is skipped without reordering the
others.

The state of a page is plain data (:meth:`PageState.to_dict`), so a crawl's journal can keep
it and a resumed crawl goes on with the same versions and rates.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from focuscrawl.core.fingerprints import fingerprint
from focuscrawl.core.refresh.estimate import ChangeStats, RateEstimator
from focuscrawl.core.refresh.inlinks import InLinks, Links
from focuscrawl.core.refresh.policy import POLICIES, Allocation, allocate
from focuscrawl.core.urls import directory as url_directory
from focuscrawl.core.urls import host as url_host

UNCHANGED, CHANGED, GONE = "unchanged", "changed", "gone"
#: the least weight a kept page gets: an off-topic page may be on the topic after a change
WEIGHT_FLOOR = 0.02


def relevance_weight(score: float, relevant_score: float) -> float:
    """A page's weight in the freshness it is kept at: the share of "relevant" its score
    reaches (1 from ``relevant_score`` up), so it weighs like the probability of relevance a
    new page's frontier estimate is (:mod:`.split` compares the two)."""
    share = score / relevant_score if relevant_score > 0 else 1.0
    return min(1.0, max(WEIGHT_FLOOR, share))


class PageState:
    """What the crawl knows of one kept page."""

    __slots__ = ("url", "host", "directory", "weight", "score", "first_seen", "last_visit",
                 "last_changed", "version", "signature", "etag", "last_modified", "stats",
                 "rate", "due", "gone", "leased", "owed", "hinted", "links", "orphaned_by",
                 "back", "seed")

    def __init__(self, url: str, now: float, weight: float, signature: str = "",
                 etag: str | None = None, last_modified: str | None = None,
                 host: str | None = None) -> None:
        self.url = url
        self.host = host or url_host(url)  # the server politeness knows it by
        self.directory = url_directory(url)
        self.weight = weight
        self.score = 0.0  # the page's last relevance score, as the crawl exports it
        self.first_seen = self.last_visit = self.last_changed = now
        self.version = 1
        self.signature = signature
        self.etag = etag
        self.last_modified = last_modified
        self.stats = ChangeStats()
        self.rate = 0.0
        self.due = math.inf
        self.gone = False
        self.leased = False
        #: a resumed crawl put its fetch back: the line of its last outcome may be unwritten
        self.owed = False
        #: a sitemap says it changed since the last visit (until the next visit)
        self.hinted = False
        #: its out-links at its last fetch with a body (None: not seen yet)
        self.links: Links | None = None
        #: gone because this kept page dropped the last link to it
        self.orphaned_by: str | None = None
        #: linked to again after it was gone so: fetched again as a page back from the dead
        self.back = False
        #: the crawl started from it, not from a link: never gone for want of one
        self.seed = False

    _SAVED = ("url", "host", "weight", "score", "first_seen", "last_visit", "last_changed",
              "version", "signature", "etag", "last_modified", "gone", "orphaned_by", "back",
              "seed")

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self._SAVED}
        out["stats"] = self.stats.to_list()
        out["links"] = list(self.links) if self.links is not None else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageState:
        page = cls(data["url"], data["first_seen"], data["weight"], data["signature"],
                   data.get("etag"), data.get("last_modified"), data.get("host"))
        for k in ("last_visit", "last_changed", "version", "gone"):
            setattr(page, k, data[k])
        page.score = data.get("score", 0.0)
        page.stats = ChangeStats.from_list(data["stats"])
        links = data.get("links")  # (a state saved before in-links were kept has none)
        page.links = tuple(links) if links is not None else None
        page.orphaned_by = data.get("orphaned_by")
        page.back = data.get("back", False)
        page.seed = data.get("seed", False)
        return page

    def __repr__(self) -> str:
        return f"PageState({self.url!r}, v{self.version}, rate={self.rate:.3g}, due={self.due})"


class RevisitSchedule:
    """Known pages by due time, per server.

    ``policy``: one of :data:`POLICIES`.  ``rate_of`` replaces the estimate by a known rate (the
    benchmark's oracle; a crawler never knows it).  ``min_interval`` keeps a page from being
    asked for again sooner than that (seconds), whatever its estimate.
    """

    def __init__(self, policy: str = "optimal", estimator: RateEstimator | None = None, *,
                 rate_of: Callable[[PageState], float] | None = None,
                 min_interval: float = 0.0) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown refresh policy {policy!r}: one of {', '.join(POLICIES)}")
        self.policy = policy
        self.estimator = estimator or RateEstimator()
        self.rate_of = rate_of
        self.min_interval = min_interval
        self.pages: dict[str, PageState] = {}
        self.allocation: Allocation | None = None
        self._heaps: dict[str, list[tuple[float, int, PageState]]] = {}
        self._servers: list[tuple[float, str]] = []  # (earliest due, host), lazy
        self._listed: dict[str, float] = {}  # host -> the due of its one live servers' item
        self._seq = 0
        self.counts = {UNCHANGED: 0, CHANGED: 0, GONE: 0}
        self.inlinks = InLinks()
        self._by_key: dict[int, str] = {}  # a kept page's URL by its fingerprint

    def __len__(self) -> int:
        return len(self.pages)

    def __contains__(self, url: str) -> bool:
        return url in self.pages

    def get(self, url: str) -> PageState | None:
        return self.pages.get(url)

    # -- rates and due times
    def rate(self, page: PageState) -> float:
        if self.rate_of is not None:
            return self.rate_of(page)
        return self.estimator.rate(page.host, page.directory, page.stats)

    def _frequency(self, page: PageState) -> float:
        if self.allocation is None:
            return 0.0  # not calibrated yet: nothing is due before the first allocation
        return self.allocation.frequency(page.rate, page.weight, page.host)

    def _reschedule(self, page: PageState) -> None:
        f = self._frequency(page)
        due = page.last_visit + max(1.0 / f, self.min_interval) if f > 0 else math.inf
        if page.hinted:
            due = min(due, page.last_visit)  # a sitemap said it changed: due at once
        page.due = due
        if due < math.inf and not page.leased and not page.gone:
            self._push(page)

    def _push(self, page: PageState) -> None:
        self._seq += 1
        heap = self._heaps.setdefault(page.host, [])
        heapq.heappush(heap, (page.due, self._seq, page))
        if heap[0][2] is page:
            self._list(page.host)

    def _list(self, host: str) -> None:
        """Keep ``host`` in the servers' heap under its earliest due page (or out of it)."""
        top = self._top(host)
        if top is None:
            self._listed.pop(host, None)
        elif self._listed.get(host) != top.due:
            self._listed[host] = top.due  # an older item of the host's is stale from now on
            heapq.heappush(self._servers, (top.due, host))

    # -- the page's life
    def add(self, url: str, now: float, weight: float, signature: str = "", *,
            etag: str | None = None, last_modified: str | None = None,
            host: str | None = None, seed: bool = False) -> PageState:
        """A page fetched for the first time (or again after it was gone); ``seed``: one the
        crawl started from."""
        page = PageState(url, now, weight, signature, etag, last_modified, host)
        page.seed = seed
        old = self.pages.get(url)
        if old is not None:  # back from the dead: keep what was learnt of it
            page.stats, page.version, page.first_seen = old.stats, old.version + 1, old.first_seen
            page.links = old.links  # counted in the in-links until its links are seen again
            page.seed = old.seed
        self.pages[url] = page
        self._by_key[fingerprint(url)] = url
        page.rate = self.rate(page)
        self._reschedule(page)
        return page

    def visited(self, url: str, now: float, *, signature: str | None = None,
                changed: bool | None = None, weight: float | None = None,
                etag: str | None = None, last_modified: str | None = None) -> str:
        """A revisit's outcome: :data:`CHANGED` (a new version), :data:`UNCHANGED`.

        ``changed`` False is a 304; otherwise the main-content ``signature`` decides.
        """
        page = self.pages[url]
        page.leased = False
        page.hinted = False
        if changed is None:
            changed = signature is not None and signature != page.signature
        interval = now - page.last_visit
        page.stats.add(interval, changed)
        self.estimator.observe(page.host, page.directory, interval, changed)
        page.last_visit = now
        if changed:
            page.version += 1
            page.last_changed = now
        if signature is not None:
            page.signature = signature
        if weight is not None:
            page.weight = weight
        page.etag = etag if etag is not None else page.etag
        page.last_modified = last_modified if last_modified is not None else page.last_modified
        page.rate = self.rate(page)
        self._reschedule(page)
        outcome = CHANGED if changed else UNCHANGED
        self.counts[outcome] += 1
        return outcome

    def mark_gone(self, url: str, now: float) -> bool:
        """The page answered 404/410 or nothing links to it any more: it leaves the schedule.
        True the first time (the caller exports it once)."""
        page = self.pages.get(url)
        if page is None or page.gone:
            return False
        page.gone = True
        page.leased = False
        page.last_visit = page.last_changed = now
        page.due = math.inf
        self._list(page.host)
        self.counts[GONE] += 1
        return True

    def linked(self, url: str, links: Links, now: float) -> tuple[list[PageState],
                                                                 list[PageState]]:
        """A fetch of kept page ``url`` found these out-links (:func:`.inlinks.link_keys`):
        the kept pages that no kept page links to any more, now gone (the caller exports each
        once), and the pages gone so that are linked to again, due at once (each is fetched and
        kept again, a new version).

        A page that answered 404 or 410 keeps its last links counted: a page whose linker went
        away is told gone by its own answer, not by its linker's."""
        page = self.pages[url]
        old = page.links or ()
        page.links = links
        dropped, relinked = self.inlinks.change(old, links)
        orphans, back = [], []
        for key in dropped:
            other = self.pages.get(self._by_key.get(key, ""))
            if (other is not None and other is not page and not other.seed
                    and self.mark_gone(other.url, now)):
                other.orphaned_by = url
                orphans.append(other)
        for key in relinked:
            other = self.pages.get(self._by_key.get(key, ""))
            if other is not None and other.gone and other.orphaned_by is not None:
                self._revive(other, now)
                back.append(other)
        return orphans, back

    def _revive(self, page: PageState, now: float) -> None:
        page.gone = False
        self.counts[GONE] -= 1
        page.orphaned_by = None
        page.back = page.owed = page.hinted = True  # owed: fetched whole, not a 304
        page.due = now
        self._push(page)

    def orphans_of(self, url: str) -> list[PageState]:
        """The pages gone because ``url`` dropped the last link to them."""
        return [p for p in self.pages.values() if p.gone and p.orphaned_by == url]

    def release(self, url: str, now: float, retry_in: float) -> None:
        """A revisit that failed (a network error): due again in ``retry_in`` seconds."""
        page = self.pages.get(url)
        if page is None or page.gone:
            return
        page.leased = False
        page.due = now + retry_in
        self._push(page)

    # -- handing out
    def _top(self, host: str) -> PageState | None:
        heap = self._heaps.get(host)
        while heap:
            due, _, page = heap[0]
            if due == page.due and not page.leased and not page.gone:
                return page
            heapq.heappop(heap)  # a stale item: the page was rescheduled, leased or is gone
        return None

    def _live_top(self, due: float, host: str) -> PageState | None:
        """The host's earliest page if the servers' item (due, host) is still its listing."""
        if self._listed.get(host) != due:
            return None  # a stale item
        top = self._top(host)
        if top is not None and top.due == due:
            return top
        self._listed.pop(host, None)
        self._list(host)
        return None

    def peek(self, now: float, ready: Callable[[str], bool] | None = None) -> PageState | None:
        """The most overdue page among ready servers, due at ``now`` at the latest."""
        skipped: list[tuple[float, str]] = []
        found = None
        while self._servers and self._servers[0][0] <= now:
            due, host = heapq.heappop(self._servers)
            top = self._live_top(due, host)
            if top is None:
                continue
            skipped.append((due, host))
            if ready is None or ready(host):
                found = top
                break
        for item in skipped:
            heapq.heappush(self._servers, item)
        return found

    def pop(self, now: float, ready: Callable[[str], bool] | None = None) -> PageState | None:
        """Hand out the page :meth:`peek` finds (leased until :meth:`visited`)."""
        page = self.peek(now, ready)
        if page is not None:
            self.lease(page)
        return page

    def lease(self, page: PageState) -> None:
        """``page`` is handed out, due or not (a journal's replay): not again until it is
        back (:meth:`visited`, :meth:`release`, :meth:`mark_gone`)."""
        page.leased = True
        self._list(page.host)  # the host's next page, if any, lists it now

    def next_due(self) -> float:
        """When the earliest page falls due (inf: none)."""
        while self._servers:
            due, host = self._servers[0]
            if self._listed.get(host) == due:
                top = self._top(host)
                if top is not None and top.due == due:
                    return due
            heapq.heappop(self._servers)
            if self._listed.get(host) == due:
                self._listed.pop(host)
                self._list(host)
        return math.inf

    def hint(self, url: str, changed_at: float, now: float) -> bool:
        """A sitemap says ``url`` changed at ``changed_at``: if that is after its last visit,
        the page is due now and worth its whole weight.  Whether it was."""
        page = self.pages.get(url)
        if (page is None or page.gone or page.leased or page.hinted
                or changed_at <= page.last_visit):
            return False
        page.hinted = True
        page.due = min(page.due, now)
        self._push(page)
        return True

    def owe(self, url: str) -> PageState | None:
        """A fetch of ``url`` was put back by a resumed crawl: its last outcome's line may not
        be written, so the next fetch exports it again (and a page gone is fetched again to
        say so)."""
        page = self.pages.get(url)
        if page is not None:
            page.owed = True
            if page.gone and page.orphaned_by is None:  # (an orphan's line is its linker's)
                page.gone = False
                self.counts[GONE] -= 1
        return page

    # -- saved state
    def put(self, data: dict[str, Any]) -> PageState:
        """Set a page's whole state (a saved crawl, a journal's replay), its observations
        pooled in place of what was known of it."""
        page = PageState.from_dict(data)
        old = self.pages.get(page.url)
        if old is not None:
            self.estimator.pool(old.host, old.directory, old.stats, -1)
        self.estimator.pool(page.host, page.directory, page.stats)
        # the in-links as they were when this state was saved (no page is found gone here)
        self.inlinks.change((old.links or ()) if old is not None else (), page.links or ())
        self.pages[page.url] = page
        self._by_key[fingerprint(page.url)] = page.url
        page.rate = self.rate(page)
        self._reschedule(page)
        return page

    # -- the policy
    def live(self) -> Iterator[PageState]:
        return (p for p in self.pages.values() if not p.gone)

    def calibrate(self, budget: float, caps: dict[str, float] | None = None) -> Allocation:
        """Re-estimate every rate and re-solve the allocation for ``budget`` revisits per
        second (``caps``: per server); every waiting page gets its new due time."""
        pages = list(self.live())
        for p in pages:
            p.rate = self.rate(p)
        self.allocation = allocate(
            self.policy, np.array([p.rate for p in pages]), np.array([p.weight for p in pages]),
            budget, [p.host for p in pages], caps)
        self._heaps.clear()
        self._servers.clear()
        self._listed.clear()
        for p in pages:
            self._reschedule(p)
        return self.allocation

    def value(self, page: PageState, now: float) -> float:
        """What revisiting ``page`` now is worth: its weight times the chance it changed (1
        when a sitemap says it did)."""
        if page.hinted:
            return page.weight
        return page.weight * -math.expm1(-page.rate * max(0.0, now - page.last_visit))

    def estimated_freshness(self, now: float) -> float:
        """The relevance-weighted share of kept pages expected to be current now."""
        num = den = 0.0
        for p in self.live():
            num += p.weight * math.exp(-p.rate * max(0.0, now - p.last_visit))
            den += p.weight
        return num / den if den > 0 else 1.0
