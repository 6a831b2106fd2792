"""How a crawl order values a link: the part of an order that is not its queue (no Scrapy).

An order is a composition: a :class:`Valuation` (this module: how a link is valued) and a
queue policy (:mod:`.policies`: which queued URL goes out next), kept together by a
:class:`~.queued.QueueFrontier` (the seen-set, the per-server queues, eviction, the spill,
snapshots).  The frontier calls the valuation's public hooks below at fixed points of a
link's life; a valuation overrides the ones it needs and changes the queue only through the
frontier's public methods (``rescore``, ``rekey``, ``queue``...).  A link's priority is its
:meth:`Valuation.key`, and nothing else writes ``entry.score`` but the frontier.

A new order is a subclass that overrides :meth:`Valuation.key` (see ``docs/orders.md``)::

    class ShallowestFirst(Valuation):
        name = "shallowest-first"

        def key(self, entry: Entry) -> Key:
            return (entry.url.count("/"), entry.seq)

    frontier = QueueFrontier(ShallowestFirst())
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .link import Capabilities, Link

if TYPE_CHECKING:
    import numpy as np

    from ..fingerprints import FingerprintMap
    from .bound import Bound
    from .linkgraph import LinkGraph
    from .queues import Entry, Key, ServerQueues


class Keeper(Protocol):
    """What a valuation may use of the frontier that keeps it (a ``QueueFrontier``): its
    state to read, and its public methods to change a link's priority."""

    name: str
    entries: dict[str, Entry]
    queues: ServerQueues
    stats: Counter[str]
    scores: FingerprintMap
    graph: LinkGraph | None
    bound: Bound | None
    max_buffer: int
    round_robin: int

    def __len__(self) -> int: ...

    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None: ...

    def next_seq(self) -> int: ...

    def queue(self, entry: Entry, score: float) -> None: ...

    def rescore(self, entry: Entry, score: float) -> None: ...

    def set_score(self, entry: Entry, score: float) -> None: ...

    def rekey(self, entry: Entry) -> None: ...

    def revalue_all(self, entries: list[Entry], values: np.ndarray) -> None: ...

    def revalue_some(self, entries: Sequence[Entry], values: Sequence[float]) -> None: ...

    def evict(self) -> None: ...


class Valuation:
    """Best first by ``entry.score`` (the parent page's score, as the frontier sets it when
    the link is added), every hook a no-op: override what your order does differently."""

    #: the order's name (a snapshot names it; a resumed crawl must use the same)
    name: str = "valuation"
    #: what the order does beyond the protocol
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: the relevance slack when FOCUS_SLACK is not set (1.0: any idle server's best URL)
    default_slack: ClassVar[float] = 1.0
    #: a link to a URL queued in memory changes nothing unless :meth:`improves` says so: the
    #: spider may drop it unbuilt (:meth:`QueueFrontier.ignores`)
    stands: ClassVar[bool] = False
    #: at MAX_BUFFER: evict the lowest-scored link (Pant's bounded frontier), or refuse new ones
    evicts: ClassVar[bool] = True

    frontier: Keeper

    @property
    def by_score(self) -> bool:
        """Whether :meth:`key` is this class's ``(-entry.score, entry.seq)`` (not overridden): a
        re-rank may then rebuild the queue from the values alone (numpy,
        :meth:`QueueFrontier.revalue_all`)."""
        return type(self).key is Valuation.key

    def bind(self, frontier: Keeper) -> None:
        """The frontier this valuation orders (called once, by the frontier it is given to)."""
        self.frontier = frontier

    # -- the priority ---------------------------------------------------------------------------
    def key(self, entry: Entry) -> Key:
        """A queued URL's priority: the smallest key goes out first (keys end with the
        entry's ``seq``, so no two are equal)."""
        return (-entry.score, entry.seq)

    def value(self, entry: Entry) -> float | None:
        """The number the order ranks a URL by, for the slack and the dashboard (None: the
        order is not by value)."""
        return None

    # -- a link's life --------------------------------------------------------------------------
    def linked(self, url: str, parent: str | None) -> None:
        """A link to ``url`` in ``parent`` was seen (added, or checked before being dropped)."""

    def observe(self, link: Link) -> None:
        """Learn from the link (its parent is scored by now), before it is queued or improves."""

    def admit(self, link: Link) -> bool:
        """Whether a link to a new URL may be queued."""
        return True

    def new(self, entry: Entry, link: Link) -> bool:
        """A new URL's entry (``score``: the parent's); True to queue it now, False if the
        valuation queues it later (:meth:`flush`, through :meth:`QueueFrontier.queue`)."""
        return True

    def improves(self, entry: Entry, parent_score: float) -> bool:
        """Whether a link from a page scored ``parent_score`` could improve queued ``entry``
        (an entry's priority only rises: a False stays False)."""
        return True

    def improve(self, entry: Entry, link: Link) -> bool:
        """Another link to queued ``entry``; True if it moved up."""
        return False

    def flush(self) -> bool:
        """Bring deferred work up to date (before every choice and every page learnt);
        whether it changed anything."""
        return False

    # -- pages ----------------------------------------------------------------------------------
    def crawled(self, url: str, score: float, hot: bool, digest: Any) -> None:
        """A fetched page, reported for the first time (the frontier counted it)."""

    def again(self, url: str) -> bool:
        """Whether a page reported before is learnt from again (a retry fetched it)."""
        return False

    def failed(self, url: str, learn: bool) -> None:
        """A URL handed out gave no page (``learn``: an error, not a redirect)."""

    # -- the queue's events ---------------------------------------------------------------------
    def queued(self, entry: Entry) -> None:
        """``entry`` was queued, re-scored or put back, one at a time (not by a re-rank the
        valuation asked for)."""

    def handed_out(self, entry: Entry) -> None:
        """``entry`` left the queue to be fetched."""

    def requeuing(self, entry: Entry) -> None:
        """``entry``, handed out and never fetched, is about to be put back."""

    def evicted(self, entry: Entry) -> None:
        """``entry`` was evicted (MAX_BUFFER)."""

    # -- the spill (FOCUS_FRONTIER_MEMORY) ----------------------------------------------------
    def pack(self, entry: Entry) -> Any:
        """``entry.extra`` as a spilled entry keeps it (free what memory it held)."""
        return entry.extra

    def unpack(self, entry: Entry, data: Any) -> None:
        entry.extra = data

    def reloaded(self, entries: list[Entry]) -> None:
        """A spilled batch is back, not queued yet (re-score it if values moved on)."""

    def spilled(self) -> None:
        """A spill happened (reclaim what the spilled entries held)."""

    def extra_bytes(self, entry: Entry) -> int:
        """Memory ``entry.extra`` holds, for the frontier's memory figures."""
        return 0 if entry.extra is None else sys.getsizeof(entry.extra)

    # -- links the spider may drop unbuilt ------------------------------------------------------
    @property
    def counts_inlinks(self) -> bool:
        """Whether :meth:`only_counts` can ever be True."""
        return False

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str,
                    context: object) -> bool:
        """True if the link would change nothing but one more in-link of a queued URL."""
        return False

    def count_inlink(self, url: str) -> None:
        """What adding a link :meth:`only_counts` answered True for would have done."""
        raise NotImplementedError(f"{self.name} keeps no in-links")

    # -- state and what it shows ----------------------------------------------------------------
    def snapshot(self, state: dict[str, Any]) -> None:
        """Add the valuation's own state to the frontier's snapshot ``state``."""

    def before_restore(self, state: dict[str, Any]) -> None:
        """Before the entries of ``state`` come back."""

    def after_restore(self, state: dict[str, Any]) -> None:
        """After the frontier's state is back."""

    def describe(self) -> dict[str, int | float]:
        """Queue sizes and counters for the crawl's stats."""
        return {"frontier": len(self.frontier)}

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """Why ``entry`` was worth its priority, part by part (None: not a sum of parts)."""
        return None

    def insight(self, base: dict[str, Any]) -> dict[str, Any]:
        """What a dashboard shows: the frontier's figures (``base``) and the order's own."""
        return base
