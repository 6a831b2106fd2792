"""QueueFrontier: a crawl order in one process, as a valuation and a queue policy composed
(no Scrapy).

It keeps what every order shares -- the seen-set, the queued entries in per-server queues, the
pages' scores, the link graph for the orders that use one, MAX_BUFFER's eviction, the spill to
disk (FOCUS_FRONTIER_MEMORY), the counters and snapshots -- and asks its
:class:`~.valuation.Valuation` how a link is valued and its policy (:mod:`.policies`) which
queued URL goes out next.  It is the :class:`~.protocol.LocalFrontier` every order is.

A link's priority is written here and nowhere else: :meth:`QueueFrontier.queue`,
:meth:`~QueueFrontier.rescore`, :meth:`~QueueFrontier.revalue_all` and
:meth:`~QueueFrontier.revalue_some` set ``entry.score`` and key the entry by
``valuation.key``.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...config import default
from ..fingerprints import FingerprintMap, FingerprintSet, fingerprint
from ..urls import scheme_twin
from .bound import Bound
from .insight import queue_insight
from .link import Capabilities, Link, Ready
from .linkgraph import LinkGraph
from .policies import BestOf
from .protocol import FrontierEvents, LocalFrontier, Unobserved
from .queues import Entry, ServerQueues
from .slack import AdaptiveSlack
from .spill import Spilled, Spilling, SpillStore, memory_stats
from .state import restore_frontier, snapshot_frontier
from .valuation import Valuation


class QueueFrontier:
    """An order's valuation and queue policy over the shared bookkeeping (module docstring)."""

    def __init__(
        self, valuation: Valuation, policy: BestOf | None = None, *, name: str | None = None,
        max_buffer: int = default("FOCUS_MAX_BUFFER"),
        round_robin: int = default("FOCUS_ROUND_ROBIN"),
        distance_limit: int = default("FOCUS_HOT_DISTANCE"),
        frontier_memory: int = default("FOCUS_FRONTIER_MEMORY"),
        same_across_schemes: bool = default("FOCUS_SAME_ACROSS_SCHEMES"),
    ) -> None:
        """``valuation``: how a link is valued; ``policy``: which URL goes out next
        (:class:`BestOf` when None); the options every order takes, each as its setting."""
        self.valuation = valuation
        self.policy = policy if policy is not None else BestOf()
        #: the order's name (``cho-distance``, ``best-n-first``...)
        self.name = name or valuation.name
        self.max_buffer = max_buffer
        # http://h/p and https://h/p are one page (FOCUS_SAME_ACROSS_SCHEMES)
        self.same_across_schemes = same_across_schemes
        self.round_robin = round_robin
        self.queues = ServerQueues(round_robin)
        self.entries: dict[str, Entry] = {}  # queued (or selected into a batch, or pending)
        # handed out for fetching: 8-byte fingerprints, not URL strings (a crawl hands out
        # millions; a set of strings spends ~150 bytes on each)
        self.done = FingerprintSet()
        # crawled page -> its score, by fingerprint (a crawl fetches millions)
        self.scores = FingerprintMap("d")
        self.graph: LinkGraph | None = (
            LinkGraph(distance_limit) if valuation.capabilities.uses_graph else None)
        self.stats: Counter[str] = Counter()
        self.slack_waits = 0  # pops that waited for a better URL's server (FOCUS_SLACK)
        #: chooses the slack of pops given none (FOCUS_SLACK unset, FOCUS_SLACK_ADAPTIVE)
        self.adaptive_slack: AdaptiveSlack | None = None
        #: told of batches chosen, links scored, URLs spilled or reloaded (a journal)
        self.events: FrontierEvents = Unobserved()
        self.seq = 0  # the last sequence number given (a key's tie-break: first found first)
        # MAX_BUFFER's eviction, for the orders that evict (breadth-first refuses instead)
        self.bound = Bound(max_buffer) if max_buffer and valuation.evicts else None
        self._observed: str | None = None  # the last parent observe() found in scores
        # FOCUS_FRONTIER_MEMORY: past this many URLs queued in memory, the worst go to disk
        self.spilling = Spilling(self, frontier_memory) if frontier_memory > 0 else None
        self.policy.bind(self)
        valuation.bind(self)

    # -- what the order declares ------------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        v = self.valuation.capabilities
        return v if not self.policy.batches else Capabilities(
            learns=v.learns, uses_graph=v.uses_graph, batches=True, explores=v.explores)

    @property
    def default_slack(self) -> float:
        return self.valuation.default_slack

    @property
    def learns(self) -> bool:
        return self.valuation.capabilities.learns

    @property
    def spilled(self) -> Spilled | None:
        """What is on disk (its index and URLs), or None without a memory bound."""
        return self.spilling.spilled if self.spilling is not None else None

    # -- sizes ------------------------------------------------------------------------------
    def __len__(self) -> int:
        """URLs queued, in memory and on disk."""
        spilled = self.spilled
        return len(self.entries) + (len(spilled) if spilled is not None else 0)

    def __contains__(self, url: str) -> bool:
        spilled = self.spilled
        return (url in self.entries or url in self.done
                or spilled is not None and url in spilled.urls)

    def queued(self, url: str) -> bool:
        return url in self.entries

    # -- links ------------------------------------------------------------------------------
    def add(self, link: Link) -> bool:
        """Record a discovered link; True if its URL was queued or moved up."""
        v = self.valuation
        v.linked(link.url, link.parent)
        known = self._known(link)
        if known is not None:
            return known
        entry = Entry(
            link.url, link.host, self.next_seq(), score=link.parent_score,
            keyword=link.keyword, depth=link.depth, parent=link.parent, anchor=link.anchor,
            payload=link.payload,
        )
        self.entries[link.url] = entry
        self.stats["queued"] += 1
        if not v.new(entry, link):
            return True  # valued later (the learned order scores links in batches)
        self.queues.push(entry, v.key(entry))
        if self.bound is not None:
            self.bound.push(entry)
            self.evict()
        queued = entry.url in self.entries
        spilling = self.spilling
        if spilling is not None and len(self.queues) > spilling.spilled.limit:
            spilling.spill()
        return queued

    def _known(self, link: Link) -> bool | None:
        """add()'s answer for a URL already queued (improved?), fetched or refused; None for a
        new one (the link graph observes every link)."""
        self._observe(link)
        entry = self.entries.get(link.url)
        if entry is not None:
            self.stats["duplicates"] += 1
            return self.valuation.improve(entry, link)
        fp = fingerprint(link.url)  # once, for the two sets of fingerprints
        spilled = self.spilled
        if spilled is not None and spilled.urls.has_fp(fp):
            self.stats["duplicates"] += 1  # queued on disk: its priority is frozen there
            return False
        if not link.force and self.done.has_fp(fp):
            self.stats["duplicates"] += 1
            return False
        if self.same_across_schemes and not link.force:
            twin = self._twin_known(link)
            if twin is not None:
                return twin
        if not self.valuation.admit(link):
            return False
        return None

    def _twin_known(self, link: Link) -> bool | None:
        """_known() for the same URL over the other scheme: a link to it when it is queued
        (in memory: it may improve; on disk), or when it was fetched as a page.  Not when it
        was only handed out: a page at ``http://h/p`` that redirects to ``https://h/p`` gave
        no page, and its target must be fetched."""
        twin = scheme_twin(link.url)
        if twin is None:
            return None
        entry = self.entries.get(twin)
        if entry is None:
            fp = fingerprint(twin)  # once, for the two tables of fingerprints
            spilled = self.spilled
            if not self.scores.has_fp(fp) and not (
                    spilled is not None and spilled.urls.has_fp(fp)):
                return None
        self.stats["duplicates"] += 1
        self.stats["scheme_twins"] += 1
        return self.valuation.improve(entry, link) if entry is not None else False

    def _observe(self, link: Link) -> None:
        """Learn from the link's parent (its score, hotness) before queueing, then let the
        valuation observe the link (the edge)."""
        parent = link.parent
        if parent is not None and parent is not self._observed:
            # a page's links come together: its score is known from the first one
            if parent not in self.scores:
                self.crawled(parent, link.parent_score, link.parent_hot)
            self._observed = parent  # a score is never removed: no need to look again
        self.valuation.observe(link)

    # -- links a spider may drop unbuilt ----------------------------------------------------
    def may_ignore(self) -> bool:
        """Whether :meth:`ignores` can ever be True: not with a link graph, which keeps every
        link."""
        return self.graph is None

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """True if :meth:`add` of a link to ``url`` from a page this frontier scored already
        (the spider announces a page's score before its links), scored ``parent_score``,
        would change nothing but the duplicate count, now or at any later time in the crawl:
        the URL was handed out and this order keeps nothing of a link to it (no link graph),
        or it is queued in memory and the order's first or best parent stands
        (``valuation.stands``).  A caller may then drop the link before building anything for
        it: most outlinks of a crawl lead to pages already fetched.  ``anchor`` and
        ``context`` are for :meth:`only_counts`."""
        v = self.valuation
        v.linked(url, parent)
        if url in self.done and self.may_ignore():
            return True
        if not v.stands or self.max_buffer:
            return False  # MAX_BUFFER may evict it before the link is added: a new URL then
        # moved to disk meanwhile (FOCUS_FRONTIER_MEMORY), it ignores links there and comes
        # back with the same score
        entry = self.entries.get(url)
        return entry is not None and not v.improves(entry, parent_score)

    @property
    def counts_inlinks(self) -> bool:
        """Whether :meth:`only_counts` can ever be True in this crawl."""
        return self.valuation.counts_inlinks

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str = "",
                    context: object = "") -> bool:
        """True if :meth:`add` of a link to ``url`` from ``parent`` (scored ``parent_score``)
        would change nothing but one more in-link of a queued URL and the duplicate count.
        A caller may then apply just that (:meth:`count_inlink`) and drop the link unbuilt."""
        return self.valuation.only_counts(url, parent, parent_score, anchor, context)

    def count_inlink(self, url: str) -> None:
        """What :meth:`add` would have done with a link :meth:`only_counts` answered True for."""
        self.valuation.count_inlink(url)

    # -- pages ------------------------------------------------------------------------------
    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None:
        """Report a fetched page's score; the frontier learns from its own crawl only.

        ``digest`` (a ``focuscrawl.core.learned.PageDigest``) is what a learning order needs of
        the page's text; the seed orders ignore it."""
        if url in self.scores and not self.valuation.again(url):
            return
        self.scores[url] = score
        self.stats["pages"] += 1
        if hot:
            self.stats["pages_hot"] += 1
        if self.adaptive_slack is not None:
            self.adaptive_slack.labelled(url, hot)
        self.valuation.crawled(url, score, hot, digest)

    def failed(self, url: str, learn: bool = True) -> None:
        """A URL handed out gave no page: a fetch error or a status >= 400 (``learn``), or a
        redirect (its target comes back as a link of its own)."""
        if self.adaptive_slack is not None:
            # no page: the slack's pace is time per page (an order may still label the link)
            self.adaptive_slack.no_page(url)
        self.valuation.failed(url, learn)

    def flush(self) -> None:
        """Bring deferred work up to date (the learned order scores new links in batches)."""
        if self.valuation.flush():
            self.events.flushed()

    # -- handing out ------------------------------------------------------------------------
    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        """The next URL to fetch among servers ``ready`` accepts, or None (the policy's
        choice, :meth:`BestOf.pop`)."""
        self.flush()
        entry = self.policy.pop(ready, slack, held)
        if entry is not None:
            self._hand_out(entry)
        return entry

    def take(self, url: str) -> Entry | None:
        """Hand out ``url`` exactly as :meth:`pop` handed it out before (journal replay).

        Replaying a crawl's pops by URL, not by asking :meth:`pop` again, keeps the replay
        deterministic: which server was ready when is timing, not state.  None if ``url`` is
        not queued.
        """
        self.flush()
        entry = self.policy.take(url)
        if entry is not None:
            self._hand_out(entry)
        return entry

    def open_batch(self) -> None:
        """Choose the next batch (an order whose ``capabilities.batches``: a journal replay)."""
        self.policy.open_batch()

    def _hand_out(self, entry: Entry) -> None:
        self.entries.pop(entry.url, None)
        self.done.add(entry.url)
        self.stats["popped"] += 1
        self.valuation.handed_out(entry)

    def requeue(self, entry: Entry) -> None:
        """Put back an entry handed out but never fetched (a stop with requests in flight)."""
        self.flush()
        self.valuation.requeuing(entry)
        self.done.discard(entry.url)
        if entry.url not in self.entries:
            self.entries[entry.url] = entry
            self.queues.push(entry, self.valuation.key(entry))
            self.stats["requeued"] += 1
        if entry.queued:
            self.valuation.queued(entry)

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """Why ``entry`` (just handed out) was worth its priority, part by part, for an order
        whose priority is a sum of parts (FOCUS_EXPLAIN); None where it is not."""
        return self.valuation.explain(entry)

    # -- the priority: written here only -----------------------------------------------------
    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def queue(self, entry: Entry, score: float) -> None:
        """Queue ``entry`` (not queued) with the priority ``score`` (a deferred valuation)."""
        entry.score = score
        self.queues.push(entry, self.valuation.key(entry))
        self.valuation.queued(entry)
        if self.bound is not None:
            self.bound.push(entry)

    def rescore(self, entry: Entry, score: float) -> None:
        """``entry``'s priority is now ``score`` (re-keyed if queued)."""
        entry.score = score
        if entry.queued:
            self.queues.push(entry, self.valuation.key(entry))
            self.valuation.queued(entry)
        if self.bound is not None:
            self.bound.push(entry)

    def set_score(self, entry: Entry, score: float) -> None:
        """``entry``'s score, where the order's key does not depend on it (Cho's queues keep
        their order; the score is the entry's record, as a journal or an item shows it)."""
        entry.score = score

    def rekey(self, entry: Entry) -> None:
        """Key ``entry`` again (its key moved, not its score: Cho's promotions, new hub
        weights)."""
        if entry.queued:
            self.queues.push(entry, self.valuation.key(entry))

    def revalue_all(self, entries: list[Entry], values: np.ndarray) -> None:
        """Queue exactly ``entries`` (every queued one) with ``values`` as their priorities:
        a re-rank of the whole queue in O(n) (the valuation's key is ``(-score, seq)``)."""
        assert self.valuation.by_score, "a re-rank by values needs a key by score"
        for entry, value in zip(entries, values.tolist(), strict=True):
            entry.score = value
        self.queues.rebuild_ranked(entries, -values)
        if self.bound is not None:
            self.bound.rebuild(entries)

    def revalue_some(self, entries: Sequence[Entry], values: Sequence[float]) -> None:
        """Re-key each of ``entries`` (queued) whose value moved: a bounded re-rank."""
        push, key, bound = self.queues.push, self.valuation.key, self.bound
        for entry, value in zip(entries, values, strict=True):
            if value == entry.score:
                continue
            entry.score = value
            push(entry, key(entry))
            if bound is not None:
                bound.push(entry)
        if bound is not None:
            bound.compact(len(self.entries))

    def evict(self) -> None:
        """MAX_BUFFER: drop the lowest-scored links while over it (Pant et al.)."""
        bound = self.bound
        if bound is None:
            return
        worst = bound.heap
        while len(self.entries) > bound.limit and worst:
            score, _, victim = heapq.heappop(worst)
            if not victim.queued or victim.score != score:
                continue  # popped, or re-scored (a fresher item exists)
            self.queues.discard(victim)
            victim.item = None  # no cycle left for the GC (see ServerQueues._take)
            del self.entries[victim.url]
            self.stats["evicted"] += 1
            self.valuation.evicted(victim)

    # -- the memory bound (FOCUS_FRONTIER_MEMORY) ---------------------------------------------
    def balance(self) -> None:
        """Spill the worst URLs past the limit, or bring the best spilled batch back below the
        low-water mark (:meth:`Spilling.balance`).

        Called where a URL is chosen (:meth:`pop`, :meth:`take`, a Best-N-First batch), so a
        journal replay of the same calls spills and reloads at the same moments; a balance
        that moved URLs is told to :attr:`events` (a journal records it in its place).
        """
        if self.spilling is not None and self.spilling.balance():
            self.events.balanced()

    def set_memory_limit(self, limit: int) -> None:
        """A new ``frontier_memory`` (> 0, and one was set), before a restore: a resumed crawl
        keeps the limit it started with, whatever today's default."""
        spilled = self.spilled
        if spilled is None or limit <= 0 or self.stats["spills"] or len(spilled):
            raise ValueError("the memory limit changes only from one limit to another, "
                             "before anything spilled")
        spilled.set_limit(limit)

    def attach_spill(self, store: SpillStore) -> None:
        """Keep spilled batches in ``store`` (the JOBDIR's database) instead of a temporary
        file; before any spill or restore."""
        if self.spilled is not None:
            self.spilled.store = store

    def close(self) -> None:
        """Release the spill file (the frontier stays readable: snapshot, len)."""
        if self.spilled is not None:
            self.spilled.close()

    def memory_stats(self) -> dict[str, int | float]:
        """URLs queued in memory and on disk, spills and reloads, and bytes a URL."""
        return memory_stats(self)

    # -- persistence ------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain data (:func:`.state.snapshot_frontier`)."""
        return snapshot_frontier(self)

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`snapshot`'s state (:func:`.state.restore_frontier`)."""
        restore_frontier(self, state)

    # -- what it shows ----------------------------------------------------------------------
    def describe(self) -> dict[str, int | float]:
        """Queue sizes for stats."""
        return {**self.valuation.describe(), **self.policy.describe()}

    def insight(self, sample: int = 20_000, bins: int = 10) -> dict[str, Any]:
        """What a dashboard shows of this order, as plain data (read only; see
        :func:`focuscrawl.core.frontier.insight.queue_insight`)."""
        return self.valuation.insight(queue_insight(self, sample, bins))


if TYPE_CHECKING:
    def _is_a_local_frontier(frontier: QueueFrontier) -> LocalFrontier:
        return frontier  # mypy checks here that every order satisfies the protocol
