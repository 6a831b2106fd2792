"""Which queued URL goes out next: the queue policies an order composes (no Scrapy).

* :class:`BestOf` -- the best URL among the servers that may be contacted now, within the
  relevance slack (FOCUS_SLACK) of the best one waiting on a busy server;
* :class:`Batches` -- Pant et al.'s Best-N-First: the top N queued URLs as a batch, handed out
  in seeded random order.

A policy chooses an entry and takes it off the per-server queues; the frontier then hands it
out.  The learned order's host bandit is a policy too (:mod:`focuscrawl.core.learned.bandit`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .link import Ready

if TYPE_CHECKING:
    from .protocol import FrontierEvents
    from .queues import Entry, ServerQueues
    from .slack import AdaptiveSlack


class _Valued(Protocol):
    def value(self, entry: Entry) -> float | None: ...


class Chooser(Protocol):
    """What a policy may use of the frontier it chooses for (a ``QueueFrontier``)."""

    name: str
    entries: dict[str, Entry]
    queues: ServerQueues
    stats: Counter[str]
    adaptive_slack: AdaptiveSlack | None
    slack_waits: int
    events: FrontierEvents

    @property
    def valuation(self) -> _Valued: ...

    def balance(self) -> None: ...


class BestOf:
    """The best URL of a ready server; with a slack, not much worse than the best waiting."""

    #: chooses batches (a journal records each choice)
    batches = False

    frontier: Chooser

    def bind(self, frontier: Chooser) -> None:
        self.frontier = frontier
        self._ratio = 1.0  # the URL being handed out: its value / the best waiting one's

    def pop(self, ready: Ready, slack: float | None, held: Ready) -> Entry | None:
        """The next entry, off the queues (not handed out yet), or None.

        ``slack`` (0..1, for orders that rank by a value): while the best URL waits on a
        server that is not ready, another server's URL is taken only if its value is at least
        ``(1 - slack)`` times the best one's; else None, and the crawl waits for that server.
        A server ``held`` says is held (its robots.txt unreachable for minutes) is not waited
        for.  ``slack`` None with the frontier's ``adaptive_slack``: that controller decides,
        and learns from what the URLs handed out turn out to be.
        """
        f = self.frontier
        f.balance()
        self._ratio = 1.0
        entry = f.queues.pop(ready, self._acceptor(slack), held)
        if entry is not None and slack is None and f.adaptive_slack is not None:
            f.adaptive_slack.handed_out(entry.url, self._ratio)
        return entry

    def take(self, url: str) -> Entry | None:
        """``url`` off the queues as :meth:`pop` took it before (a journal's replay)."""
        f = self.frontier
        f.balance()
        entry = f.entries.get(url)
        if entry is None:
            return None
        f.queues.take(entry)
        return entry

    def open_batch(self) -> None:
        raise TypeError(f"{self.frontier.name} chooses no batches")

    def _acceptor(self, slack: float | None) -> Callable[[Entry, Entry], bool] | None:
        f = self.frontier
        if slack is None and f.adaptive_slack is not None:
            return self._adaptive_acceptor(f.adaptive_slack)
        if slack is None or slack >= 1.0:
            return None
        value = f.valuation.value
        floor = 1.0 - max(0.0, slack)

        def accept(candidate: Entry, best: Entry) -> bool:
            v, b = value(candidate), value(best)
            if v is None or b is None:
                return True
            if v >= floor * b:
                return True
            f.slack_waits += 1  # not in stats: a refusal is timing, not crawl state
            return False

        return accept

    def _adaptive_acceptor(self, adaptive: AdaptiveSlack) -> Callable[[Entry, Entry], bool]:
        f = self.frontier
        value = f.valuation.value

        def accept(candidate: Entry, best: Entry) -> bool:
            v, b = value(candidate), value(best)
            if v is None or b is None or b <= 0:
                return True
            if adaptive.accepts(v / b):
                self._ratio = v / b
                return True
            f.slack_waits += 1
            return False

        return accept

    # -- state ------------------------------------------------------------------------------
    def snapshot(self, state: dict[str, Any]) -> None:
        """Add the policy's own state to the frontier's snapshot."""

    def after_restore(self, state: dict[str, Any]) -> None:
        pass

    def describe(self) -> dict[str, int | float]:
        return {}


class Batches(BestOf):
    """Pant, Srinivasan & Menczer's Best-N-First (Figure 1): the top ``n`` queued URLs as a
    batch, handed out in seeded random order; ``work_conserving``: while the batch's URLs all
    wait on busy servers and other servers idle, the next batch is opened for them (off:
    Pant et al.'s sequential crawler, exactly)."""

    batches = True

    def __init__(self, n: int, *, work_conserving: bool, seed: int) -> None:
        if n < 1:
            raise ValueError("N must be at least 1")
        self.n = n
        self.work_conserving = work_conserving
        self.rng = random.Random(seed)
        self.batch: list[Entry] = []

    def pop(self, ready: Ready, slack: float | None, held: Ready) -> Entry | None:
        f = self.frontier
        if not self.batch:
            self.open_batch()
        i = self._first_ready(ready, 0)
        if (i is None and self.work_conserving and ready is not None
                and f.queues.has_ready(ready)):
            # every URL left in the batch waits on a busy server while others idle: the next
            # batch is chosen now, for them (its URLs come after the current batch's)
            start = len(self.batch)
            self.open_batch()
            i = self._first_ready(ready, start)
        if i is None:
            return None
        return self.batch.pop(i)

    def _first_ready(self, ready: Ready, start: int) -> int | None:
        for i in range(start, len(self.batch)):
            if ready is None or ready(self.batch[i].host):
                return i
        return None

    def open_batch(self) -> None:
        """Choose the next batch: the top N queued links, in seeded random order, handed out
        after any left of the current one.  Journaled (a "batch" operation) and replayed."""
        f = self.frontier
        f.balance()
        chunk: list[Entry] = []
        while len(chunk) < self.n:
            entry = f.queues.pop(None)
            if entry is None:
                break
            chunk.append(entry)
        self.rng.shuffle(chunk)
        self.batch.extend(chunk)
        f.stats["batches"] += 1
        f.events.batch_chosen()

    def take(self, url: str) -> Entry | None:
        """As :meth:`BestOf.take`; a pop that found no batch chose one first, so does this."""
        if not self.batch:
            self.open_batch()
        for i, entry in enumerate(self.batch):
            if entry.url == url:
                del self.batch[i]
                return entry
        return super().take(url)

    def snapshot(self, state: dict[str, Any]) -> None:
        state["batch"] = [e.url for e in self.batch]
        state["rng"] = self.rng.getstate()

    def after_restore(self, state: dict[str, Any]) -> None:
        entries = self.frontier.entries
        self.batch = [entries[u] for u in state.get("batch", []) if u in entries]
        if "rng" in state:
            rng_state = state["rng"]
            self.rng.setstate((rng_state[0], tuple(rng_state[1]), rng_state[2]))

    def describe(self) -> dict[str, int | float]:
        return {"batch": len(self.batch)}
