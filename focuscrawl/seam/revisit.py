"""A continuous crawl (FOCUS_REVISIT): the revisits as the scheduler, the spider and the journal
see them.

:class:`Revisits` is built by the scheduler when the crawl keeps going.  It wraps the crawl
order's frontier in a :class:`~focuscrawl.core.refresh.frontier.RevisitFrontier` (the scheduler
then hands out, leases, journals and keeps politeness for revisits as for any URL), makes a
revisit's request (conditional: ``If-None-Match`` from the page's ETag, ``If-Modified-Since``
from its Last-Modified; 304, 404 and 410 reach the spider), and answers the spider:

* a first fetch is kept (from then on it is revisited) and exported with ``version`` 1;
* a revisit's 304, or a page whose main-content signature did not change, is an unchanged
  visit: nothing exported;
* a changed signature is a new version, exported with ``changed: true``;
* a 404 or 410 is a page gone, exported once with ``gone: true``;
* a kept page's links, at each fetch with a body, tell which kept pages no kept page links to
  any more: those are gone too, each exported once with ``gone: true`` (its ``status`` its own
  last answer, 200), and fetched again if a page links to them again
  (:mod:`focuscrawl.core.refresh.inlinks`).

Each outcome is journaled (``Op.REVISIT``: the page's whole state after it) before its item is
written, so a resumed crawl keeps every page's versions and observations; the feed skips a line
it already holds (a page's URL with its version, ``focuscrawl.seam.output.feeds``), so a
revisit fetched again after a kill is not exported twice.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from focuscrawl import config
from focuscrawl.core.refresh import POLICIES, RateEstimator, RevisitSchedule, Split
from focuscrawl.core.refresh.frontier import RevisitFrontier
from focuscrawl.core.refresh.inlinks import link_keys
from focuscrawl.core.refresh.schedule import CHANGED, GONE, UNCHANGED, PageState, relevance_weight
from focuscrawl.core.refresh.signature import content_signature
from focuscrawl.core.urls import canonical
from focuscrawl.seam.meta import LINK
from focuscrawl.seam.persistence.ops import Op

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.http import Response

    from focuscrawl.core.frontier import HostPolicy, LocalFrontier
    from focuscrawl.seam.lifecycle import Lifecycle
    from focuscrawl.seam.servers import ServerKeys

logger = logging.getLogger(__name__)

#: the request meta key of a revisit: the version the crawl has of the page
REVISIT = "focus_revisit"
#: the statuses a revisit's spider sees (Scrapy's HttpErrorMiddleware lets them through)
ANSWERS = (304, 404, 410)
#: the fastest a server is assumed to answer, for a server without a delay (visits/s bound)
_MIN_FETCH_SECONDS = 0.05


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class Kept:
    """What the spider exports of a kept page's fetch: the item's extra fields (None: nothing,
    a revisit that found no change), whether it is the page's first fetch (counted in the
    crawl's harvest), and the lines of the pages gone because it no longer links to them."""

    fields: dict[str, Any] | None
    first: bool = False
    gone: list[dict[str, Any]] = field(default_factory=list)


def _unrecorded(*args: Any) -> None:
    pass


class Revisits:
    """The revisit part of one crawl (module docstring).

    ``frontier`` keeps the pages: a :class:`RevisitFrontier` over the crawl order's frontier
    (:meth:`local`), or a distributed crawl's schedule in Redis
    (``focuscrawl.distributed.revisits``), which the spider's side reaches the same way.
    """

    def __init__(self, *, settings: Any, policy: HostPolicy, servers: ServerKeys,
                 record: Callable[..., None] = _unrecorded,
                 clock: Callable[[], float] = time.time) -> None:
        self.share = config.get(settings, "FOCUS_REVISIT_SHARE")
        self.prior = config.get(settings, "FOCUS_REVISIT_PRIOR")
        self.policy_name = config.get(settings, "FOCUS_REVISIT_POLICY")
        if self.share is not None and not 0.0 <= self.share <= 1.0:
            raise ValueError(f"FOCUS_REVISIT_SHARE must be between 0 and 1, not {self.share}")
        if self.prior <= 0:
            raise ValueError(f"FOCUS_REVISIT_PRIOR must be > 0 seconds, not {self.prior}")
        self.policy = policy
        self.servers = servers
        self.record = record
        self.clock = clock
        self.relevant_score = config.get(settings, "FOCUS_RELEVANT_SCORE")
        self._recent: deque[float] = deque()  # when each revisit of the last minute ended
        self.frontier: Any = None

    @classmethod
    def local(cls, inner: LocalFrontier, *, lifecycle: Lifecycle, **kwargs: Any
              ) -> tuple[Revisits, RevisitFrontier]:
        """One process's: ``inner`` (the crawl order's frontier) and the schedule, composed
        into the frontier the scheduler then holds."""
        revisits = cls(**kwargs)
        frontier = revisits.frontier = RevisitFrontier(
            inner, revisits.new_schedule(), Split(revisits.share), clock=revisits.clock,
            request_of=revisits.request_of, capacity=revisits.capacity,
            discovering=lambda: lifecycle.budget() > 0)
        return revisits, frontier

    def new_schedule(self) -> RevisitSchedule:
        if self.policy_name not in POLICIES:
            raise ValueError(f"FOCUS_REVISIT_POLICY must be one of {', '.join(POLICIES)}, "
                             f"not {self.policy_name!r}")
        return RevisitSchedule(self.policy_name, RateEstimator(prior_rate=1.0 / self.prior))

    # -- the scheduler's side ------------------------------------------------------------------
    def request_of(self, page: PageState) -> dict[str, Any]:
        """A revisit's request, as Scrapy's ``request_from_dict`` takes it."""
        headers = {}
        if not page.owed:  # an owed line needs the page itself, not a 304
            if page.etag:
                headers["If-None-Match"] = page.etag
            if page.last_modified:
                headers["If-Modified-Since"] = page.last_modified
        return {"url": page.url, "headers": headers, "dont_filter": True, "meta": {
            REVISIT: page.version, "handle_httpstatus_list": list(ANSWERS),
            LINK: {"anchor": "", "parent": None}}}

    def capacity(self, hosts: set[str]) -> dict[str, float]:
        """Visits per second each server takes under politeness: its connections over the gap
        between two requests (its delay, or its last response time when longer)."""
        policy = self.policy
        out = {}
        for host in hosts:
            state = policy.server(host)
            gap = max(policy.current_delay(host), state.last_response_time, _MIN_FETCH_SECONDS)
            out[host] = state.concurrency / gap
        return out

    def wait(self, now_monotonic: float) -> float | None:
        """When (on the politeness clock) the next revisit falls due; None: none is waiting."""
        due = self.frontier.next_due()
        if math.isinf(due):
            return None
        return now_monotonic + max(0.0, due - self.clock())

    @staticmethod
    def is_revisit(request: Any) -> bool:
        return REVISIT in request.meta

    def summary(self) -> dict[str, Any]:
        """What the dashboard and /metrics show of the revisits."""
        now = self.clock()
        recent = self._recent
        while recent and recent[0] < now - 60.0:
            recent.popleft()
        schedule = self.frontier.schedule
        counts = schedule.counts
        return {"pages": len(schedule) - counts[GONE], "per_minute": len(recent),
                "revisits": counts[CHANGED] + counts[UNCHANGED] + counts[GONE],
                "changes": counts[CHANGED], "unchanged": counts[UNCHANGED],
                "gone": counts[GONE], "share": round(self.frontier.split.revisit_share, 4),
                "freshness": round(schedule.estimated_freshness(now), 4)}

    # -- the spider's side ---------------------------------------------------------------------
    def answered(self, response: Response) -> list[Any] | None:
        """A revisit's answer that needs no parsing: 304 (unchanged), 404 and 410 (gone).
        The items to export (a gone page's), or None when the page is to be parsed."""
        request = response.request
        if request is None or not self.is_revisit(request):
            return None
        url = request.url
        page = self.frontier.schedule.get(url)
        if page is None:
            return None  # not kept (a redirect's target): parsed as a new page
        if page.orphaned_by is not None:
            return []  # found gone while this revisit was in flight: said already
        status = response.status
        if status == 304:
            self._apply(url, lambda: self.frontier.revisited(
                url, changed=False, etag=_header(response, b"ETag"),
                last_modified=_header(response, b"Last-Modified")))
            return []
        if status in (404, 410):
            self._recent.append(self.clock())
            first = self.frontier.gone(url)
            self.record(Op.REVISIT, page.to_dict())
            return [self._gone_fields(page, status)] if first else []
        return None

    def kept(self, response: Response, url: str, main_text: str, score: float,
             links: Iterable[Any] = ()) -> Kept:
        """A parsed page of the crawl (``links``: its outlinks, each with a ``url``): the
        fields its item adds, and the lines of the pages found gone by its links.  Its state is
        journaled (``Op.REVISIT``) before the spider writes any of them."""
        signature = content_signature(main_text)
        weight = relevance_weight(score, self.relevant_score)
        etag = _header(response, b"ETag")
        modified = _header(response, b"Last-Modified")
        request = response.request
        key = request.url if request is not None and self.is_revisit(request) else url
        page = self.frontier.schedule.get(key)
        if page is not None and page.orphaned_by is not None:
            return Kept(None)  # found gone while this revisit was in flight: said already
        if page is None or page.gone or page.back:
            new = page is None
            seed = (response.meta.get(LINK) or {}).get("parent") is None
            page = self.frontier.kept(key, weight, signature, host=self.servers.key(key),
                                      etag=etag, last_modified=modified, seed=seed)
            page.score = score
            kept = Kept(self._fields(page, changed=False), first=new)
        else:
            outcome = self.frontier.revisited(key, signature=signature, weight=weight,
                                              etag=etag, last_modified=modified)
            self._recent.append(self.clock())
            page.score = score
            kept = Kept(None)
            if outcome == CHANGED or page.owed:
                # (owed: a resumed crawl's page whose last line may not have been written; the
                # feed skips it if it was)
                kept.fields = self._fields(page, changed=page.version > 1)
        owed, page.owed = page.owed, False
        kept.gone = self._linked(page, links, owed)
        return kept

    def _linked(self, page: PageState, links: Iterable[Any], owed: bool) -> list[dict[str, Any]]:
        """``page``'s links at this fetch: the lines of the pages gone because no kept page
        links to them any more (and, for an owed fetch, those it found so before the crash:
        their lines may be unwritten; the feed skips those that were)."""
        targets = []
        for link in links:
            try:
                targets.append(canonical(link.url))
            except ValueError:
                continue  # not a page's link (mailto:, javascript:)
        orphans, back = self.frontier.linked(page.url, link_keys(targets, page.url))
        # the pages it made gone first: a kill before the page's own state is journaled
        # fetches it again, and that fetch says their lines again (owed)
        for other in orphans + back:
            self.record(Op.REVISIT, other.to_dict())
        self.record(Op.REVISIT, page.to_dict())
        if owed:
            orphans = self.frontier.schedule.orphans_of(page.url)
        return [self._gone_fields(other, 200) for other in orphans]

    def _apply(self, url: str, change: Callable[[], Any]) -> None:
        change()
        self._recent.append(self.clock())
        page = self.frontier.schedule.get(url)
        if page is not None:
            self.record(Op.REVISIT, page.to_dict())

    @staticmethod
    def _fields(page: PageState, *, changed: bool) -> dict[str, Any]:
        return {"version": page.version, "first_seen": iso(page.first_seen),
                "last_changed": iso(page.last_changed), "changed": changed}

    def _gone_fields(self, page: PageState, status: int) -> dict[str, Any]:
        return {"url": page.url, "status": status, "title": "", "score": round(page.score, 6),
                "hot": False, "depth": 0, "parent": None, "anchor": "",
                "fetched_at": iso(page.last_visit), "content_type": "", "text_length": 0,
                "outlinks": 0, "order": None, "priority": 0.0, "version": page.version,
                "first_seen": iso(page.first_seen), "last_changed": iso(page.last_changed),
                "changed": False, "gone": True}


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
