"""The relevance slack chosen during the crawl: from what bounds it, and what waiting pays.

While the best queued URL waits on a busy server, an idle server's best URL goes out only if
its value is at least ``(1 - slack)`` times the best one's (``Frontier.pop``).  A fixed slack
(``FOCUS_SLACK``) is right for one topic and wrong for another: on a topic that sits on two or
three servers a low slack makes the crawl wait at every fetch, on one spread over many it
costs little.  :class:`AdaptiveSlack` measures, as the crawl goes:

- how often a page handed out as the best turned out relevant (``hot``), and how often a page
  taken from an idle server below the best did, by its value's ratio to the best's (4 bins),
  recent labels weighing more (``FORGET``): as the best servers' relevant pages run out, the
  shares follow the frontier, not the crawl's history;
- how long the crawl waited when it refused such a page (a wait: from the first refusal to the
  next hand-out), and how long a hand-out takes otherwise.

Per fetch, waiting gives a best page's chance ``h_best`` for ``t + w`` seconds and taking an
idle server's page its bin's chance ``h_k`` for ``t``: it is taken when ``h_k / t >= h_best / (t +
w)``.  The slack admits the bins from the top down while that holds.  Bins start from a prior
that trusts the order's values (a bin's chance is its ratio times ``h_best``), so the crawl starts
near the order's fixed default and moves as the labels come.

What bounds the crawl decides what is weighed.  Per second, a page taken now costs next to
nothing (``t`` is the engine's pace while servers are idle), so the weighing admits nearly every
idle server's page, and a crawl bounded by pages would spend its budget early on pages a wait
would have beaten.  So a crawl bounded by pages (``pages_left`` not None) keeps the order's own
slack (``initial``) and weighs nothing; a crawl that ends by time first (``deadline``, with
``pages_left`` more than it can fetch by then never waiting) loses no later page to one taken
now, so it takes every idle server's page; only a crawl with neither bound weighs as above.
Plain Python; the clock is passed in (a fake one in tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: lower edges of the ratio bins (value / best waiting value) of pages taken below the best
EDGES = (0.0, 0.25, 0.5, 0.75)
PRIOR = 4.0  # pseudo-pages behind each rate's prior
BEST_PRIOR = 0.3  # the best pages' relevant share before any label
MIN_SLACK = 0.1  # never wait for every fetch: a bin refused for good is never measured again
PENDING = 4096  # URLs handed out and awaiting their label, at most
PROBE = 0.05  # share of refused candidates taken anyway, so refused bins keep being measured
# a label's weight in the shares after each later label: halved after ~35 labels
FORGET = 0.98


class AdaptiveSlack:
    """Chooses the slack for what bounds the crawl (see the module docstring)."""

    def __init__(self, initial: float = 0.5, *, every: int = 10,
                 clock: Callable[[], float] = time.monotonic, deadline: float | None = None,
                 pages_left: Callable[[], int | None] = lambda: None) -> None:
        self.value = initial
        self.every = every  # labelled pages between choices
        self.clock = clock
        self.deadline = deadline  # on ``clock``: when the crawl ends by time (None: never)
        self.pages_left = pages_left  # what the page budget still allows (None: no bound)
        self.initial = initial  # the order's slack, kept while the page budget binds
        self.time_bound = False  # the last choice found the crawl ending by time first
        # [relevant, labelled] of pages handed out as the best, older labels weighing less
        self.best = [0.0, 0.0]
        self.side = [[0.0, 0.0] for _ in EDGES]  # the same per ratio bin, below the best
        self.side_pages = 0  # pages taken below the best and labelled (counted, not weighed)
        self.pending: dict[str, int] = {}  # handed out, not labelled yet: url -> bin (-1 best)
        self.wait_total = 0.0  # seconds spent in waits
        self.waits = 0
        self.work_total = 0.0  # seconds between hand-outs, waits left out
        self.handouts = 0
        self.refusals = 0
        self.probes = 0
        self._last: float | None = None  # last hand-out
        self._wait_start: float | None = None  # the wait under way
        self._labels = 0

    # -- what the frontier tells it ----------------------------------------------------------
    def accepts(self, ratio: float) -> bool:
        """Whether an idle server's URL worth ``ratio`` times the best waiting one goes out."""
        if ratio >= 1.0 - self.value:
            return True
        self.refusals += 1
        # where the slack is weighed, a few refused candidates go out anyway: else a bin once
        # refused is never measured
        if not self.page_bound and self.refusals * PROBE >= self.probes + 1:
            self.probes += 1
            return True
        if self._wait_start is None:
            self._wait_start = self.clock()
        return False

    def handed_out(self, url: str, ratio: float) -> None:
        """``url`` went out; ``ratio`` its value / the best waiting value (>= 1: the best)."""
        now = self.clock()
        if self._last is not None:
            gap = now - self._last
            if self._wait_start is not None:
                waited = now - max(self._wait_start, self._last)
                self.wait_total += waited
                self.waits += 1
                gap -= waited
            self.work_total += max(gap, 0.0)
            self.handouts += 1
        self._last = now
        self._wait_start = None
        self.pending[url] = -1 if ratio >= 1.0 else _bin(ratio)
        if len(self.pending) > PENDING:  # pages never labelled (redirected, failed): oldest out
            del self.pending[next(iter(self.pending))]

    def no_page(self, url: str) -> None:
        """``url`` gave no page (an error, a refusal, a redirect): never labelled here, so the
        pace per page (``ends_by_time``) does not count it, however the order labels it."""
        self.pending.pop(url, None)

    def labelled(self, url: str, hot: bool) -> None:
        """``url``'s page was scored: relevant (``hot``) or not."""
        k = self.pending.pop(url, None)
        if k is None:
            return
        for c in (self.best, *self.side):
            c[0] *= FORGET
            c[1] *= FORGET
        counts = self.best if k < 0 else self.side[k]
        counts[0] += hot
        counts[1] += 1
        self.side_pages += k >= 0
        self._labels += 1
        if self._labels % self.every == 0:
            self.value = self.choose()

    # -- the choice ---------------------------------------------------------------------------
    @property
    def page_bound(self) -> bool:
        """Whether the page budget binds: there is one, and the last choice did not find the
        crawl ending by time first (asked, not stored: the scheduler sets MAX_PAGES after it
        builds this)."""
        return not self.time_bound and self.pages_left() is not None

    def best_rate(self) -> float:
        hits, n = self.best
        return (hits + PRIOR * BEST_PRIOR) / (n + PRIOR)

    def side_rate(self, k: int) -> float:
        """Bin ``k``'s relevant share, its prior the order's own: ratio x the best's."""
        hits, n = self.side[k]
        top = EDGES[k + 1] if k + 1 < len(EDGES) else 1.0
        prior = (EDGES[k] + top) / 2 * self.best_rate()
        return (hits + PRIOR * prior) / (n + PRIOR)

    def bar(self) -> float | None:
        """The relevant share a page taken now must have to beat waiting (None: no timing yet)."""
        if not self.handouts:
            return None
        t = self.work_total / self.handouts
        # before any wait was measured, a wait is taken to last as long as a hand-out
        w = (self.wait_total + t) / (self.waits + 1)
        if t + w <= 0:
            return None
        return self.best_rate() * t / (t + w)

    def ends_by_time(self) -> bool:
        """Whether the crawl reaches its deadline before its page budget, never waiting: at the
        time between hand-outs outside waits per labelled page, not per hand-out (a hand-out
        refused or failed gives no page; a crawl whose links lead to many unreachable hosts
        makes several for each page)."""
        if self.deadline is None or not self.handouts:
            return False
        left = self.pages_left()
        t = self.work_total / max(1, self._labels)
        return left is None or left * t > self.deadline - self.clock()

    def choose(self) -> float:
        self.time_bound = self.ends_by_time()
        if self.time_bound:
            return 1.0
        if self.page_bound:
            return self.initial
        bar = self.bar()
        if bar is None:
            return self.value
        floor = 1.0
        for k in reversed(range(len(EDGES))):
            if self.side_rate(k) < bar:
                break
            floor = EDGES[k]
        return max(MIN_SLACK, 1.0 - floor)

    def describe(self) -> dict[str, float]:
        """Figures for the crawl's stats (``focus/slack...``)."""
        t = self.work_total / self.handouts if self.handouts else 0.0
        return {"": round(self.value, 3), "/best_rate": round(self.best_rate(), 4),
                "/side_rate": round(_share(self.side), 4),
                "/side_pages": self.side_pages,
                "/wait_s": round(self.wait_total, 1), "/waits": self.waits,
                "/handout_s": round(t, 3), "/probes": self.probes,
                "/time_bound": int(self.time_bound), "/page_bound": int(self.page_bound)}


def _bin(ratio: float) -> int:
    k = 0
    for i, edge in enumerate(EDGES):
        if ratio >= edge:
            k = i
    return k


def _share(counts: list[list[float]]) -> float:
    n = sum(c[1] for c in counts)
    return sum(c[0] for c in counts) / n if n else 0.0
