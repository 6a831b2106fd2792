"""The frontier protocol: what a scheduler calls of a frontier, whatever keeps it (no Scrapy).

Every frontier takes the spider's links (:meth:`Frontier.add`) and fetched pages
(:meth:`Frontier.crawled`), says how many URLs it holds and describes itself for the stats.
Two kinds refine that:

* :class:`LocalFrontier` -- a crawl order in the crawl's own process: the seed papers' orders
  and the learned one (:mod:`focuscrawl.core.orders`).  ``FocusScheduler``, its journal and
  the request lifecycle call these methods and nothing else;
* ``focuscrawl.distributed.protocol.SharedFrontier`` -- one crawl in Redis or a Redis Cluster,
  shared by every worker, which leases its URLs.

They are :class:`typing.Protocol` classes: a frontier satisfies one by having its methods, not
by inheriting (mypy checks every implementation where it is used).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .link import Capabilities, Link, Ready

__all__ = ["Capabilities", "Frontier", "FrontierEvents", "Link", "LocalFrontier", "Ready",
           "Unobserved"]

if TYPE_CHECKING:
    from .queues import Entry
    from .slack import AdaptiveSlack
    from .spill import Spilled, SpillStore
    from .valuation import Valuation

class FrontierEvents(Protocol):
    """What a frontier in one process tells its observer (a crawl's journal) of the changes
    its own choices make, as they happen: a journal replays them in their place."""

    def batch_chosen(self) -> None:
        """A batch of URLs was chosen (Best-N-First)."""

    def flushed(self) -> None:
        """Deferred work was done (the learned order scored the links found since)."""

    def balanced(self) -> None:
        """URLs moved between memory and disk (FOCUS_FRONTIER_MEMORY)."""


class Unobserved:
    """No observer: a frontier's events go nowhere."""

    def batch_chosen(self) -> None:
        pass

    def flushed(self) -> None:
        pass

    def balanced(self) -> None:
        pass


class Frontier(Protocol):
    """Any frontier: where links go and pages are reported."""

    @property
    def name(self) -> str:
        """The crawl order's name (``cho-distance``, ``learned``...)."""
        ...

    def add(self, link: Link) -> bool:
        """Record a discovered link; True if its URL was queued or moved up."""
        ...

    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None:
        """A fetched page's score and hotness (``digest``: what a learning order needs of
        its text); the first report counts."""
        ...

    def __len__(self) -> int:
        """URLs queued."""
        ...

    def describe(self) -> Mapping[str, int | float]:
        """Queue sizes and counters for the crawl's stats."""
        ...


class LocalFrontier(Frontier, Protocol):
    """A crawl order in one process: what ``FocusScheduler``, its journal and the lifecycle
    call.  :class:`focuscrawl.core.frontier.QueueFrontier` implements it for every order.

    The ten methods of the order's work -- :meth:`add`, :meth:`pop`, :meth:`take`,
    :meth:`crawled`, :meth:`failed`, :meth:`requeue`, :meth:`flush`, :meth:`explain`,
    :meth:`snapshot`, :meth:`restore` -- then ``len()``, :meth:`describe` and :meth:`close`
    (and :meth:`open_batch` where the order batches);
    the memory bound (:meth:`balance` and the spill), the slack and the links a spider may
    drop unbuilt are parts with their own few members.
    """

    @property
    def capabilities(self) -> Capabilities:
        """What the order does beyond this protocol."""
        ...

    @property
    def valuation(self) -> Valuation:
        """How the order values a link (its options; the learned order's model and verdict)."""
        ...

    @property
    def default_slack(self) -> float:
        """The relevance slack when FOCUS_SLACK is not set (0..1; 1: any idle server's best)."""
        ...

    #: chooses the slack of pops given none (FOCUS_SLACK unset, FOCUS_SLACK_ADAPTIVE)
    adaptive_slack: AdaptiveSlack | None
    #: pops that waited for a better URL's server (FOCUS_SLACK)
    slack_waits: int
    #: the order's counters (pages, duplicates, batches, flushes, spills...)
    stats: Counter[str]
    #: told of the changes the frontier's own choices make (a journal records them)
    events: FrontierEvents
    #: http://h/p and https://h/p are one page (FOCUS_SAME_ACROSS_SCHEMES)
    same_across_schemes: bool

    # -- the order's work ---------------------------------------------------------------------
    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        """The next URL to fetch among the servers ``ready`` accepts, or None.  ``slack``:
        how much worse than the best URL waiting on a busy server another may be; ``held``:
        servers not waited for (their robots.txt unreachable)."""
        ...

    def take(self, url: str) -> Entry | None:
        """Hand out ``url`` exactly as :meth:`pop` handed it out before (a journal's replay)."""
        ...

    def failed(self, url: str, learn: bool = True) -> None:
        """A URL handed out gave no page (``learn``: an error the order may learn from, not a
        redirect)."""
        ...

    def requeue(self, entry: Entry) -> None:
        """Put back an entry handed out but never fetched (a stop with it in flight)."""
        ...

    def flush(self) -> None:
        """Bring deferred work up to date (the learned order values new links in batches)."""
        ...

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """Why ``entry`` (just handed out) was worth its priority, part by part; None where
        the priority is not a sum of parts."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The whole state, as plain picklable data."""
        ...

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`snapshot`'s state."""
        ...

    def close(self) -> None:
        """Release what the frontier holds outside memory (its spill file)."""
        ...

    def open_batch(self) -> None:
        """Choose the next batch (an order whose ``capabilities.batches``; a journal's
        replay)."""
        ...

    def insight(self, sample: int = ..., bins: int = ...) -> dict[str, Any]:
        """What a dashboard shows of the order, as plain data (read only)."""
        ...

    # -- the memory bound (FOCUS_FRONTIER_MEMORY) ---------------------------------------------
    @property
    def spilled(self) -> Spilled | None:
        """What is on disk, or None without a bound."""
        ...

    def balance(self) -> None:
        """Spill past the bound, or bring the best spilled batch back below it."""
        ...

    def set_memory_limit(self, limit: int) -> None: ...

    def attach_spill(self, store: SpillStore) -> None: ...

    def memory_stats(self) -> dict[str, int | float]: ...

    @property
    def done(self) -> Any:
        """The URLs handed out (``len()`` and ``in``)."""
        ...

    # -- links a spider may drop before building them -----------------------------------------
    @property
    def counts_inlinks(self) -> bool:
        """Whether :meth:`only_counts` can ever be True."""
        ...

    def may_ignore(self) -> bool:
        """Whether :meth:`ignores` can ever be True."""
        ...

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """True if adding a link to ``url`` would change nothing but the duplicate count."""
        ...

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str = "",
                    context: object = "") -> bool:
        """True if adding the link would change nothing but one more in-link of a queued URL."""
        ...

    def count_inlink(self, url: str) -> None:
        """What :meth:`add` would have done with a link :meth:`only_counts` answered True for."""
        ...

    def queued(self, url: str) -> bool:
        """Whether ``url`` waits in the frontier (in memory), not handed out or evicted."""
        ...
