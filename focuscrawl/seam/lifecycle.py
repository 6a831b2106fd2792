"""The one owner of a request's life, from the moment the scheduler hands it out.

    handed out (a numbered lease) -> reserved on its server -> started -> downloaded or failed
    -> counted against MAX_PAGES (a page: its crawl order) -> its page's output done -> settled

:class:`Lifecycle` keeps every lease not yet settled, the pages fetched, the MAX_PAGES budget,
the crawl orders given, and what each page's output still owes.  The scheduler hands out and
reports downloads, the politeness middleware starts (or drops) reserved requests, the
page-completion spider middleware and the item signals pay what a page owes, the feed storage
asks whether the crawl resumes: all through this object, one per crawl
(``FocusServices.lifecycle``).  Nobody keeps a parallel map.

A journal (``focuscrawl.seam.persistence``) observes the transitions that must survive a kill
(:class:`Observer`): handed out, counted, settled.  Without one the lifecycle still counts and
budgets, and a lease is settled as soon as its download ends: nothing waits for its output.

Why a page is settled only once its output is done (with a journal): a lease not settled when
the crawler is killed is fetched again on resume; one settled too early would lose its
outlinks.  Scrapy processes a callback's output concurrently, so each lease owes a count: one
for the output stream while the callback runs, one per request it yields (paid when the
scheduler queues it), one per item (paid after the feed wrote it).  At zero it is settled.

No Scrapy import: the server reservation stays in ``HostPolicy`` (core), and this object is its
only caller on the scheduler's side.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from focuscrawl.core.frontier import Entry

if TYPE_CHECKING:
    from focuscrawl.core.frontier import HostPolicy, LocalFrontier


class Lease:
    """One request handed out and not yet settled."""

    __slots__ = ("number", "entry", "downloading", "open", "counted", "order", "owes", "started",
                 "answer")

    def __init__(self, number: int, entry: Entry, *, downloading: bool = True,
                 counted: bool = False, order: int | None = None) -> None:
        self.number = number
        self.entry = entry
        self.downloading = downloading  # its download has not ended
        self.open = True  # its page is not settled (a resume would fetch it again)
        self.counted = counted  # its response counted against MAX_PAGES
        self.order = order  # the crawl order it was given
        self.owes = 0  # what its page's output still owes (output tracked only)
        #: the scheduler alone: when its download started, and the status and whether HTML it
        #: came back with (Scrapy's signals tell them apart; PolitenessMiddleware keeps its own)
        self.started: float | None = None
        self.answer: tuple[int, bool] | None = None


class Observer(Protocol):
    """What a journal is told (``focuscrawl.seam.persistence``)."""

    def handed_out(self, lease: Lease) -> None: ...

    def counted(self, lease: Lease) -> None: ...

    def settled(self, lease: Lease) -> None: ...


class _Unobserved:
    def handed_out(self, lease: Lease) -> None:
        pass

    def counted(self, lease: Lease) -> None:
        pass

    def settled(self, lease: Lease) -> None:
        pass


class Lifecycle:
    """The leases of one crawl, its page count and MAX_PAGES budget (module docstring)."""

    def __init__(self, policy: HostPolicy) -> None:
        self.policy = policy
        self.max_pages = 0  # 0: no limit
        self.pages = 0  # responses counted as pages (put-back ones uncounted again)
        self.last = 0  # the last lease number given
        self.order = 0  # the highest crawl order given
        #: URL -> the crawl order it keeps when fetched again (a page put back after a kill)
        self.orders: dict[str, int] = {}
        self.leases: dict[int, Lease] = {}
        self.downloading = 0  # leases whose download has not ended
        self.unsettled = 0  # leases whose page is not settled
        #: a journal waits for each page's output before settling it (pages owe, see above)
        self.tracks_output = False
        #: this crawl continues a JOBDIR's earlier run (the feed storage appends)
        self.resumed = False
        self.observer: Observer = _Unobserved()

    # -- the budget -----------------------------------------------------------------------
    def budget(self) -> int:
        """Requests that may still be handed out: MAX_PAGES less the pages counted and the
        downloads under way (a request counts from its hand-out until its download ends, and
        after if it gave a page); 1 without a limit."""
        return self.max_pages - self.pages - self.downloading if self.max_pages else 1

    # -- handed out, reserved, started ----------------------------------------------------
    def hand_out(self, entry: Entry) -> Lease:
        """``entry`` leaves the frontier: a new lease, and a slot reserved on its server."""
        self.last += 1
        lease = self.leases[self.last] = Lease(self.last, entry)
        self.downloading += 1
        self.unsettled += 1
        self.observer.handed_out(lease)
        self.policy.reserve(entry.host)
        return lease

    def started(self, server: str, number: int | None = None) -> bool:
        """A handed-out request starts its download: its reservation becomes a connection.

        With ``number`` (the scheduler alone, told by Scrapy's signals, which also carry
        requests it did not hand out) only a lease still downloading and not yet started
        starts, and keeps when; whether it did."""
        if number is not None:
            lease = self.leases.get(number)
            if lease is None or not lease.downloading or lease.started is not None:
                return False
            lease.started = time.monotonic()
        self.policy.start(server, reserved=True)
        return True

    def answered(self, number: int | None, status: int, html: bool) -> None:
        """The scheduler alone: lease ``number``'s response came back (kept until it leaves
        the downloader, when :meth:`left` gives it)."""
        lease = self.leases.get(number) if number is not None else None
        if lease is not None and lease.started is not None:
            lease.answer = (status, html)

    def left(self, server: str, number: int) -> tuple[int | None, bool] | None:
        """The scheduler alone: lease ``number`` left the downloader; its server's connection
        is freed (the time it took feeds the server's delay).  The status and whether HTML it
        came back with ((None, True): no response), or None if it had not started."""
        lease = self.leases.get(number)
        if lease is None or lease.started is None:
            return None
        self.policy.finish(server, time.monotonic() - lease.started)
        lease.started = None
        answer, lease.answer = lease.answer, None
        return answer if answer is not None else (None, True)

    def dropped(self, server: str, number: int | None = None) -> bool:
        """A handed-out request ended before it started: its reservation is freed.  With
        ``number`` (the scheduler alone) only a lease still downloading and not started;
        whether it was."""
        if number is not None:
            lease = self.leases.get(number)
            if lease is None or not lease.downloading or lease.started is not None:
                return False
        self.policy.unreserve(server)
        return True

    # -- downloaded, counted --------------------------------------------------------------
    def downloaded(self, number: int, page: bool) -> Lease | None:
        """Lease ``number``'s download ended (``page``: counted against MAX_PAGES, with a crawl
        order).  The lease, or None if it was not downloading."""
        lease = self.leases.get(number)
        if lease is None or not lease.downloading:
            return None
        lease.downloading = False
        self.downloading -= 1
        if page:
            self.pages += 1
            order = self.orders.pop(lease.entry.url, None) if lease.open else None
            if order is None:
                self.order += 1
                order = self.order
            lease.counted, lease.order = True, order
            self.observer.counted(lease)
        if not self.tracks_output:
            self._settle(lease)  # nothing waits for its output
        elif not lease.open:
            del self.leases[number]
        return lease

    # -- its page's output ----------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether pages owe (``PageCompletionMiddleware`` counts only then)."""
        return self.tracks_output

    def hold(self, number: int | None) -> None:
        """Lease ``number``'s page owes one more thing (its output stream, a request, an item)."""
        lease = self.leases.get(number) if number is not None else None
        if lease is not None and lease.open:
            lease.owes += 1

    def release(self, number: int | None) -> None:
        """One thing lease ``number``'s page owed is paid; at zero the page is settled."""
        lease = self.leases.get(number) if number is not None else None
        if lease is None or lease.owes <= 0:
            return
        lease.owes -= 1
        if lease.owes == 0:
            self._settle(lease)

    def finish(self, number: int | None) -> None:
        """Lease ``number`` produced nothing more (a download error, a redirect, a retry):
        settled now.  Only with output tracked (otherwise it was settled at its download)."""
        if not self.tracks_output or number is None:
            return
        lease = self.leases.get(number)
        if lease is not None:
            self._settle(lease)

    def settle_from(self, lease: int | None, source: int | None) -> None:
        """A request reached the scheduler: an outlink pays what its page (``source``) owed; a
        redirect or retry of lease ``lease`` settles it."""
        if source is not None:
            self.release(source)
        elif lease is not None:
            self.finish(lease)

    def settle_all(self) -> int:
        """Settle every open lease (their requests vanished on the way); how many."""
        stuck = [lease for lease in self.leases.values() if lease.open]
        for lease in stuck:
            self._settle(lease)
        return len(stuck)

    def _settle(self, lease: Lease) -> None:
        if not lease.open:
            return
        lease.open = False
        lease.owes = 0
        self.unsettled -= 1
        if not lease.downloading:
            del self.leases[lease.number]
        self.observer.settled(lease)

    # -- resume ---------------------------------------------------------------------------
    def open_leases(self) -> Iterator[Lease]:
        """The leases not settled, by number."""
        return (lease for _, lease in sorted(self.leases.items()) if lease.open)

    def put_back(self, frontier: LocalFrontier) -> int:
        """Put every lease not settled back into ``frontier``: fetched again, counted once
        (a counted one keeps its crawl order for the refetch).  Every lease is forgotten; how
        many were put back."""
        n = 0
        for lease in self.open_leases():
            if lease.counted:
                self.pages -= 1
                if lease.order is not None:
                    self.orders[lease.entry.url] = lease.order
            frontier.requeue(lease.entry)
            n += 1
        self.leases.clear()
        self.downloading = self.unsettled = 0
        return n

    def snapshot(self) -> dict[str, Any]:
        """The lifecycle's part of a JOBDIR snapshot."""
        return {
            "pages": self.pages,
            "order": self.order,
            "lease_seq": self.last,
            "open": [(lease.number, lease.entry.fields(), lease.counted, lease.order)
                     for lease in self.open_leases()],
            "orders": dict(self.orders),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.pages = state["pages"]
        self.order = state["order"]
        self.last = state["lease_seq"]
        self.leases = {number: Lease(number, Entry.from_fields(fields), downloading=False,
                                     counted=counted, order=order)
                       for number, fields, counted, order in state["open"]}
        self.downloading = 0
        self.unsettled = len(self.leases)
        self.orders = dict(state["orders"])

    # the journal's operations, replayed as they were applied live
    def replayed_hand_out(self, number: int, entry: Entry | None) -> None:
        self.last = max(self.last, number)
        if entry is not None:
            self.leases[number] = Lease(number, entry, downloading=False)
            self.unsettled += 1

    def replayed_count(self, number: int, order: int) -> None:
        self.pages += 1
        self.order = max(self.order, order)
        lease = self.leases.get(number)
        if lease is not None:
            lease.counted, lease.order = True, order
            self.orders.pop(lease.entry.url, None)

    def replayed_settle(self, number: int) -> None:
        if self.leases.pop(number, None) is not None:
            self.unsettled -= 1
