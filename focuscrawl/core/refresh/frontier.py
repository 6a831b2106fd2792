"""A crawl that keeps going: a crawl order's frontier and a revisit schedule behind one frontier.

:class:`RevisitFrontier` composes any local frontier (the discovery of new pages: a seed paper's
order or the learned one) with a :class:`~focuscrawl.core.refresh.schedule.RevisitSchedule`
(the pages kept, by due time).  The scheduler, the request lifecycle, per-server politeness and
the journal see one frontier: a revisit is a second kind of entry (``entry.extra ==``
:data:`REVISIT`, its request in ``entry.payload``), handed out by the same ``pop`` among the
servers that may be contacted now, leased, put back and replayed like any other.

Each ``pop`` asks the :class:`~focuscrawl.core.refresh.split.Split` which kind goes next: the
most overdue revisit on a ready server, valued at its weight times the chance it changed,
against the next new page, valued at the relevance-weight the crawl's recent new pages had
(the harvest the discovery is making now).  Every ``calibrate_every`` seconds the allocation is
solved again for the revisit budget politeness allows (``capacity``: visits per second per
server).  What is not the revisits' is the inner frontier's, unchanged.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from focuscrawl.core.frontier import Capabilities, Entry, Link, LocalFrontier, Ready
from focuscrawl.core.refresh.inlinks import Links
from focuscrawl.core.refresh.schedule import PageState, RevisitSchedule
from focuscrawl.core.refresh.split import DISCOVER, REVISIT, Split

if TYPE_CHECKING:
    from focuscrawl.core.frontier import FrontierEvents, Valuation
    from focuscrawl.core.frontier.slack import AdaptiveSlack
    from focuscrawl.core.frontier.spill import Spilled, SpillStore

#: how fast the estimate of a new page's value follows the crawl's recent new pages
_HARVEST_MEMORY = 0.05

#: (server -> visits per second it takes) for the servers of the kept pages
Capacity = Callable[[set[str]], dict[str, float]]


class RevisitFrontier:
    """``inner`` (discovery) and ``schedule`` (revisits) as one local frontier.

    ``request_of(page)`` makes a revisit's request payload (the seam's; Scrapy's request
    dict); ``discovering()`` says whether new pages may still be fetched (the page budget);
    ``clock`` is wall-clock seconds (a resumed crawl's due times stay right).

    It implements :class:`~focuscrawl.core.frontier.LocalFrontier` itself (mypy checks it
    where the scheduler holds it): what is about revisits is its own, the rest is written out
    as a call of the crawl order's frontier.
    """

    def __init__(self, inner: LocalFrontier, schedule: RevisitSchedule, split: Split, *,
                 clock: Callable[[], float], request_of: Callable[[PageState], Any],
                 capacity: Capacity, discovering: Callable[[], bool] = lambda: True,
                 calibrate_every: float = 30.0, lease_timeout: float = 600.0) -> None:
        self.inner = inner
        self.schedule = schedule
        self.split = split
        self.clock = clock
        self.request_of = request_of
        self.capacity = capacity
        self.discovering = discovering
        self.calibrate_every = calibrate_every
        self.lease_timeout = lease_timeout  # a revisit with no outcome this long is due again
        self.harvest = 1.0  # a new page's value until the crawl has seen some
        self._next_calibration = -math.inf
        self._calibrated_pages = 0
        self._leased_at: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self.inner)

    # -- handing out -------------------------------------------------------------------------
    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        now = self.clock()
        self._calibrate(now)
        page = self.schedule.peek(now, ready)
        discover = self.discovering() and len(self.inner) > 0
        kind = self.split.choose(self.harvest if discover else None,
                                 self.schedule.value(page, now) if page is not None else None)
        entry = None
        if kind == DISCOVER:
            entry = self.inner.pop(ready, slack, held)
            if entry is None and page is not None:
                kind = REVISIT  # no new page on a ready server: the revisit, then
        if kind == REVISIT and page is not None:
            entry = self._lease(page, now)
        if entry is not None and kind is not None:
            self.split.record(kind)
        return entry

    def _lease(self, page: PageState, now: float) -> Entry:
        self.schedule.lease(page)
        self._leased_at[page.url] = now
        entry = Entry(page.url, page.host, 0, score=page.weight, payload=self.request_of(page))
        entry.extra = REVISIT
        return entry

    def take(self, url: str) -> Entry | None:
        page = self.schedule.get(url)
        if page is not None and not page.gone and not page.leased:
            return self._lease(page, self.clock())  # a revisit handed out, replayed
        return self.inner.take(url)

    def requeue(self, entry: Entry) -> None:
        self.schedule.owe(entry.url)  # its line may be unwritten: the refetch says it again
        if entry.extra == REVISIT:
            self._leased_at.pop(entry.url, None)
            self.schedule.release(entry.url, self.clock(), 0.0)  # due at once: not fetched
        else:
            self.inner.requeue(entry)

    def failed(self, url: str, learn: bool = True) -> None:
        page = self.schedule.get(url)
        if page is None or not page.leased:
            self.inner.failed(url, learn)
        # a revisit's answer (304, 404, 410) is its outcome, reported on its own

    def _calibrate(self, now: float) -> None:
        live = len(self.schedule) - self.schedule.counts["gone"]
        grown = live > 1.25 * self._calibrated_pages  # amortised: O(pages) work in all
        if now < self._next_calibration and not grown:
            return
        self._next_calibration = now + self.calibrate_every
        self._calibrated_pages = live
        for url, since in list(self._leased_at.items()):
            if now - since > self.lease_timeout:  # no outcome came (the download failed)
                del self._leased_at[url]
                self.schedule.release(url, now, 0.0)
        hosts = {p.host for p in self.schedule.live()}
        if not hosts:
            return
        caps = self.capacity(hosts)
        share = self.split.share if self.split.share is not None else 1.0
        budget = share * sum(caps.values())
        # politeness bounds each server; with a fixed split, revisits get that share of it
        self.schedule.calibrate(budget, {h: share * c for h, c in caps.items()})

    # -- what the crawl reports ----------------------------------------------------------------
    def kept(self, url: str, weight: float, signature: str, *, host: str | None = None,
             etag: str | None = None, last_modified: str | None = None,
             seed: bool = False) -> PageState:
        """A page fetched for the first time: from now on it is revisited."""
        page = self.schedule.add(url, self.clock(), weight, signature, etag=etag,
                                 last_modified=last_modified, host=host, seed=seed)
        self.harvest += _HARVEST_MEMORY * (weight - self.harvest)
        return page

    def revisited(self, url: str, *, signature: str | None = None, changed: bool | None = None,
                  weight: float | None = None, etag: str | None = None,
                  last_modified: str | None = None) -> str:
        """A revisit's outcome (``changed`` False: a 304; else the signature decides)."""
        self._leased_at.pop(url, None)
        return self.schedule.visited(url, self.clock(), signature=signature, changed=changed,
                                     weight=weight, etag=etag, last_modified=last_modified)

    def gone(self, url: str) -> bool:
        """The page answered 404 or 410: True the first time."""
        self._leased_at.pop(url, None)
        return self.schedule.mark_gone(url, self.clock())

    def linked(self, url: str, links: Links) -> tuple[list[PageState], list[PageState]]:
        """A kept page's out-links at this fetch: the pages now gone because no kept page links
        to them, and those linked to again (:meth:`RevisitSchedule.linked`)."""
        return self.schedule.linked(url, links, self.clock())

    def hint(self, url: str, changed_at: float) -> bool:
        """A sitemap's ``lastmod`` for ``url`` (wall clock): due now if it changed since."""
        return self.schedule.hint(url, changed_at, self.clock())

    def replay(self, state: dict[str, Any]) -> None:
        """A kept page's state as journaled after its fetch."""
        self._leased_at.pop(state["url"], None)
        self.schedule.put(state)

    def next_due(self) -> float:
        """When the next revisit falls due (wall clock; inf: none)."""
        return self.schedule.next_due()

    # -- saved state ---------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {"inner": self.inner.snapshot(), "revisit": {
            "pages": [p.to_dict() for p in self.schedule.pages.values()],
            "split": dict(self.split.counts), "counts": dict(self.schedule.counts),
            "harvest": self.harvest}}

    def restore(self, state: dict[str, Any]) -> None:
        if "revisit" not in state:  # a crawl that kept no page yet (started without revisits)
            self.inner.restore(state)
            return
        self.inner.restore(state["inner"])
        saved = state["revisit"]
        for data in saved["pages"]:
            self.schedule.put(data)
        self.split.counts.update(saved["split"])
        self.schedule.counts.update(saved["counts"])
        self.harvest = saved["harvest"]

    def describe(self) -> dict[str, int | float]:
        out = dict(self.inner.describe())
        schedule = self.schedule
        out.update({
            "revisit/pages": len(schedule) - schedule.counts["gone"],
            "revisit/changed": schedule.counts["changed"],
            "revisit/unchanged": schedule.counts["unchanged"],
            "revisit/gone": schedule.counts["gone"],
            "revisit/fetches": self.split.counts[REVISIT],
            "revisit/share": round(self.split.revisit_share, 4),
            "revisit/freshness": round(schedule.estimated_freshness(self.clock()), 4),
        })
        return out

    # -- the crawl order's part, as it is --------------------------------------------------------
    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @property
    def valuation(self) -> Valuation:
        return self.inner.valuation

    @property
    def events(self) -> FrontierEvents:
        return self.inner.events

    @events.setter
    def events(self, value: FrontierEvents) -> None:
        self.inner.events = value

    def open_batch(self) -> None:
        self.inner.open_batch()

    @property
    def default_slack(self) -> float:
        return self.inner.default_slack

    @property
    def adaptive_slack(self) -> AdaptiveSlack | None:
        return self.inner.adaptive_slack

    @adaptive_slack.setter
    def adaptive_slack(self, value: AdaptiveSlack | None) -> None:
        self.inner.adaptive_slack = value  # the scheduler chooses the order's slack

    @property
    def slack_waits(self) -> int:
        return self.inner.slack_waits

    @slack_waits.setter
    def slack_waits(self, value: int) -> None:
        self.inner.slack_waits = value

    @property
    def stats(self) -> Counter[str]:
        return self.inner.stats

    @stats.setter
    def stats(self, value: Counter[str]) -> None:
        self.inner.stats = value

    @property
    def same_across_schemes(self) -> bool:
        return self.inner.same_across_schemes

    @same_across_schemes.setter
    def same_across_schemes(self, value: bool) -> None:
        self.inner.same_across_schemes = value

    def add(self, link: Link) -> bool:
        return self.inner.add(link)

    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None:
        self.inner.crawled(url, score, hot, digest)

    def flush(self) -> None:
        self.inner.flush()

    def explain(self, entry: Entry) -> dict[str, float] | None:
        return None if entry.extra == REVISIT else self.inner.explain(entry)

    def close(self) -> None:
        self.inner.close()

    def insight(self, sample: int = 20_000, bins: int = 10) -> dict[str, Any]:
        return self.inner.insight(sample, bins)

    @property
    def spilled(self) -> Spilled | None:
        return self.inner.spilled

    def balance(self) -> None:
        self.inner.balance()

    def set_memory_limit(self, limit: int) -> None:
        self.inner.set_memory_limit(limit)

    def attach_spill(self, store: SpillStore) -> None:
        self.inner.attach_spill(store)

    def memory_stats(self) -> dict[str, int | float]:
        return self.inner.memory_stats()

    @property
    def done(self) -> Any:
        return self.inner.done

    @property
    def counts_inlinks(self) -> bool:
        return self.inner.counts_inlinks

    def may_ignore(self) -> bool:
        return self.inner.may_ignore()

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        return self.inner.ignores(url, parent_score, parent, anchor, context)

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str = "",
                    context: object = "") -> bool:
        return self.inner.only_counts(url, parent, parent_score, anchor, context)

    def count_inlink(self, url: str) -> None:
        self.inner.count_inlink(url)

    def queued(self, url: str) -> bool:
        return self.inner.queued(url)


def crawl_order(frontier: LocalFrontier) -> LocalFrontier:
    """The crawl order's own frontier: ``frontier`` itself, or the one a continuous crawl's
    revisits wrap (what is particular to an order, a learned order's seed verdict or a batch's
    replay, is asked of it)."""
    return frontier.inner if isinstance(frontier, RevisitFrontier) else frontier
