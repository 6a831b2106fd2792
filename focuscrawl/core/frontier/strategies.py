"""Crawl-ordering strategies from the seed papers, as plain Python frontiers (no Scrapy).

* :class:`BreadthFirst` — FIFO, optionally bounded to MAX_BUFFER (Pant et al.'s blind baseline).
* :class:`Cho` — ``hot_queue`` / ``url_queue`` with ``dequeue2`` (Cho et al., Figure 4), and with
  ``distance=True`` the modified crawler of Figure 5: a URL within ``distance_from_hotpage < 3``
  also goes hot, computed over every link seen so far, with promotion of queued URLs.
  ``reorder`` is ``reorder_queue``: FIFO, backlink count, or the parent's cosine score.
* :class:`BestNFirst` — Pant et al.'s Figure 1: links carry their parent's cosine score (best
  seen), the top N are popped as a batch and handed out in seeded random order, the lowest-scored
  link is evicted beyond MAX_BUFFER.  N=1 is :class:`BestFirst`.
* :class:`Distiller` — best-first whose link priority mixes the parent's score with the parent's
  HITS hub weight over the crawled graph, recomputed every K pages (focused-crawler slides).

Every frontier has the same small interface: `QueueFrontier.add` a discovered link,
`QueueFrontier.crawled` a fetched page, `QueueFrontier.pop` the next URL for a server that may be
contacted now, ``len()``, `QueueFrontier.snapshot` / `QueueFrontier.restore`.
"""

from __future__ import annotations

import heapq
import random
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from ...config import default
from ..fingerprints import FingerprintMap, FingerprintSet, fingerprint
from ..urls import scheme_twin
from .insight import queue_insight
from .linkgraph import LinkGraph
from .protocol import Capabilities, Link, Ready
from .queues import Entry, Key, ServerQueues
from .slack import AdaptiveSlack
from .spill import Spilled, Spilling, SpillStore, memory_stats


class QueueFrontier:
    """Seen-set, per-server queues and bookkeeping shared by every strategy: a
    :class:`~.protocol.LocalFrontier`."""

    #: the order's name; an instance may refine it from its options ("cho-distance")
    name: str = "frontier"
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: the relevance slack when FOCUS_SLACK is not set: the seed strategies take any idle
    #: server's best URL, as the papers' crawlers (and this project before the slack) did
    default_slack: ClassVar[float] = 1.0

    def __init__(
        self, *,
        max_buffer: int = default("FOCUS_MAX_BUFFER"),
        round_robin: int = default("FOCUS_ROUND_ROBIN"),
        seed: int = default("FOCUS_RANDOM_SEED"),
        distance_limit: int = default("FOCUS_HOT_DISTANCE"),
        frontier_memory: int = default("FOCUS_FRONTIER_MEMORY"),
        same_across_schemes: bool = default("FOCUS_SAME_ACROSS_SCHEMES"),
    ) -> None:
        """The options every order takes, each as its setting (defaults: the declared ones)."""
        self.max_buffer = max_buffer
        # http://h/p and https://h/p are one page (FOCUS_SAME_ACROSS_SCHEMES)
        self.same_across_schemes = same_across_schemes
        self.round_robin = round_robin
        self.seed = seed
        self.queues = ServerQueues(round_robin)
        self.entries: dict[str, Entry] = {}  # queued (or selected into a batch)
        # handed out for fetching: 8-byte fingerprints, not URL strings (a crawl hands out
        # millions; a set of strings spends ~150 bytes on each)
        self.done = FingerprintSet()
        # crawled page -> its score, by fingerprint (a crawl fetches millions)
        self.scores = FingerprintMap("d")
        self.graph: LinkGraph | None = (LinkGraph(distance_limit) if self.capabilities.uses_graph
                                        else None)
        self.stats: Counter[str] = Counter()
        self.slack_waits = 0  # pops that waited for a better URL's server (FOCUS_SLACK)
        #: chooses the slack of pops given none (FOCUS_SLACK unset, FOCUS_SLACK_ADAPTIVE)
        self.adaptive_slack: AdaptiveSlack | None = None
        self._ratio = 1.0  # the URL being handed out: its value / the best waiting one's
        self._seq = 0
        self._worst: list[tuple] = []  # min-heap for eviction, used when bounded
        self._observed: str | None = None  # the last parent observe() found in scores
        # FOCUS_FRONTIER_MEMORY: past this many URLs queued in memory, the worst go to disk
        self.spilling = Spilling(self, frontier_memory) if frontier_memory > 0 else None
        # what is on disk (its index and URLs), or None
        self.spilled: Spilled | None = self.spilling.spilled if self.spilling else None

    @property
    def learns(self) -> bool:
        """``capabilities.learns`` (for callers that ask the frontier itself)."""
        return self.capabilities.learns

    # -- the interface ------------------------------------------------------------------
    def __len__(self) -> int:
        """URLs queued, in memory and on disk."""
        return len(self.entries) + (len(self.spilled) if self.spilled is not None else 0)

    def queued(self, url: str) -> bool:
        return url in self.entries

    def __contains__(self, url: str) -> bool:
        return (url in self.entries or url in self.done
                or self.spilled is not None and url in self.spilled.urls)

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """True if :meth:`add` of a link to ``url`` from a page this frontier scored already
        (the spider announces a page's score before its links), scored ``parent_score``,
        would change nothing but the duplicate count, now or at any later time in the crawl:
        the URL was handed out and this order keeps nothing of a link to it (no link graph).
        A caller may then drop the link before building anything for it: most outlinks of a
        crawl lead to pages already fetched.  ``parent`` (the page's URL) is not needed: the
        spider gives it for :meth:`only_counts`, and this is its answer in the orders
        without it; nor are the link's ``anchor`` and ``context`` (the same)."""
        return url in self.done and self.may_ignore()

    def may_ignore(self) -> bool:
        """Whether :meth:`ignores` can ever be True (else a caller need not ask it per link):
        not with a link graph, which keeps every link."""
        return self.graph is None

    #: whether :meth:`only_counts` can ever be True in this crawl (a caller that drops links
    #: asks it only then)
    counts_inlinks: bool = False

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str = "",
                    context: object = "") -> bool:
        """True if :meth:`add` of a link to ``url`` from ``parent`` (a page this frontier
        scored already, scored ``parent_score``; the link's ``anchor`` text and ``context``,
        the text around it) would change nothing but one more in-link of
        a queued URL and the duplicate count.  A caller may then apply just that
        (:meth:`count_inlink`, journaled as such) and drop the link unbuilt."""
        return False

    def count_inlink(self, url: str) -> None:
        """What :meth:`add` would have done with a link :meth:`only_counts` answered True for."""
        raise NotImplementedError(f"{self.name} keeps no in-links")

    def _ignores_queued(self, url: str, parent_score: float) -> bool:
        """:meth:`ignores` for a URL not handed out, in an order whose :meth:`improve` uses
        only the parent's score: queued in memory and not improved by the link, unless
        MAX_BUFFER may evict it before the link is added (the link would queue it again).
        Moved to disk meanwhile (FOCUS_FRONTIER_MEMORY), it ignores links there and comes
        back with the same score."""
        if self.max_buffer:
            return False
        entry = self.entries.get(url)
        return entry is not None and not self.improves(entry, parent_score)

    def improves(self, entry: Entry, parent_score: float) -> bool:
        """Whether a link from a page scored ``parent_score`` could improve queued ``entry``
        (:meth:`improve`; an entry's priority only rises, so a False stays False)."""
        return True

    def add(self, link: Link) -> bool:
        """Record a discovered link; True if its URL was queued or moved up."""
        known = self._known(link)
        if known is not None:
            return known
        entry = Entry(
            link.url, link.host, self._next_seq(), score=link.parent_score,
            keyword=link.keyword, depth=link.depth, parent=link.parent, anchor=link.anchor,
            payload=link.payload,
        )
        self.entries[link.url] = entry
        self.stats["queued"] += 1
        self.on_new(entry, link)
        self.queues.push(entry, self.key(entry))
        self._bound(entry)
        queued = entry.url in self.entries
        if self.spilled is not None and len(self.queues) > self.spilled.limit:
            self._spill()
        return queued

    def _known(self, link: Link) -> bool | None:
        """add()'s answer for a URL already queued (improved?), fetched or refused; None for a
        new one (the link graph observes every link)."""
        self.observe(link)
        entry = self.entries.get(link.url)
        if entry is not None:
            self.stats["duplicates"] += 1
            return self.improve(entry, link)
        fp = fingerprint(link.url)  # once, for the two sets of fingerprints
        if self.spilled is not None and self.spilled.urls.has_fp(fp):
            self.stats["duplicates"] += 1  # queued on disk: its priority is frozen there
            return False
        if not link.force and self.done.has_fp(fp):
            self.stats["duplicates"] += 1
            return False
        if self.same_across_schemes and not link.force:
            twin = self._twin_known(link)
            if twin is not None:
                return twin
        if not self.admit(link):
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
            if not self.scores.has_fp(fp) and not (
                    self.spilled is not None and self.spilled.urls.has_fp(fp)):
                return None
        self.stats["duplicates"] += 1
        self.stats["scheme_twins"] += 1
        return self.improve(entry, link) if entry is not None else False

    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None:
        """Report a fetched page's score; the frontier learns from its own crawl only.

        ``digest`` (a ``focuscrawl.core.learned.PageDigest``) is what a learning order needs of the
        page's text; the seed orders ignore it.
        """
        if url in self.scores:
            return
        self._record(url, score, hot)

    def _record(self, url: str, score: float, hot: bool) -> None:
        """Count a fetched page and learn from it (:meth:`crawled`, once it is known new)."""
        self.scores[url] = score
        self.stats["pages"] += 1
        if hot:
            self.stats["pages_hot"] += 1
        if self.adaptive_slack is not None:
            self.adaptive_slack.labelled(url, hot)
        self.on_crawled(url, score, hot)

    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        """The next URL to fetch among servers ``ready`` accepts, or None.

        ``slack`` (0..1, for strategies that rank by a value): while the best URL waits on a
        server that is not ready, another server's URL is taken only if its value is at least
        ``(1 - slack)`` times the best one's; else None, and the crawl waits for that server.
        A server ``held`` says is held (its robots.txt unreachable for minutes) is not waited
        for: its URLs do not count as the best.  ``slack`` None with an ``adaptive_slack``:
        that controller decides, and learns from what the URLs handed out turn out to be.
        """
        self.balance()
        self._ratio = 1.0
        entry = self.queues.pop(ready, self._acceptor(slack), held)
        if entry is not None:
            self._hand_out(entry)
            if slack is None and self.adaptive_slack is not None:
                self.adaptive_slack.handed_out(entry.url, self._ratio)
        return entry

    def value(self, entry: Entry) -> float | None:
        """The number the order ranks a queued URL by (None: the order is not by value)."""
        return None

    def _acceptor(self, slack: float | None) -> Callable[[Entry, Entry], bool] | None:
        if slack is None and self.adaptive_slack is not None:
            return self._adaptive_acceptor(self.adaptive_slack)
        if slack is None or slack >= 1.0:
            return None
        value = self.value
        floor = 1.0 - max(0.0, slack)

        def accept(candidate: Entry, best: Entry) -> bool:
            v, b = value(candidate), value(best)
            if v is None or b is None:
                return True
            if v >= floor * b:
                return True
            self.slack_waits += 1  # not in stats: a refusal is timing, not crawl state
            return False

        return accept

    def _adaptive_acceptor(self, adaptive: AdaptiveSlack) -> Callable[[Entry, Entry], bool]:
        value = self.value

        def accept(candidate: Entry, best: Entry) -> bool:
            v, b = value(candidate), value(best)
            if v is None or b is None or b <= 0:
                return True
            if adaptive.accepts(v / b):
                self._ratio = v / b
                return True
            self.slack_waits += 1
            return False

        return accept

    def take(self, url: str) -> Entry | None:
        """Hand out ``url`` exactly as :meth:`pop` handed it out before (journal replay).

        Replaying a crawl's pops by URL, not by asking :meth:`pop` again, keeps the replay
        deterministic: which server was ready when is timing, not state.  None if ``url`` is
        not queued.
        """
        self.balance()
        entry = self.entries.get(url)
        if entry is None:
            return None
        self.queues.take(entry)
        self._hand_out(entry)
        return entry

    def flush(self) -> None:
        """Bring deferred work up to date (the learned order scores new links in batches)."""

    def failed(self, url: str, learn: bool = True) -> None:
        """A URL handed out gave no page: a fetch error or a status >= 400 (``learn``), or a
        redirect (its target comes back as a link of its own)."""

    def requeue(self, entry: Entry) -> None:
        """Put back an entry handed out but never fetched (a stop with requests in flight)."""
        self.done.discard(entry.url)
        if entry.url in self.entries:
            return
        self.entries[entry.url] = entry
        self.queues.push(entry, self.key(entry))
        self.stats["requeued"] += 1

    def balance(self) -> None:
        """FOCUS_FRONTIER_MEMORY: spill the worst URLs past the limit, or bring the best
        spilled batch back below the low-water mark (:meth:`Spilling.balance`).

        Called where a URL is chosen (:meth:`pop`, :meth:`take`, a Best-N-First batch), so a
        journal replay of the same calls spills and reloads at the same moments; a pop that
        chose nothing but balanced is journaled as such (``stats["spills"]``/``["reloads"]``).
        """
        if self.spilling is not None:
            self.spilling.balance()

    def set_memory_limit(self, limit: int) -> None:
        """A new ``frontier_memory`` (> 0, and one was set), before a restore: a resumed crawl
        keeps the limit it started with, whatever today's default."""
        if self.spilled is None or limit <= 0 or self.stats["spills"] or len(self.spilled):
            raise ValueError("the memory limit changes only from one limit to another, "
                             "before anything spilled")
        self.spilled.set_limit(limit)

    def attach_spill(self, store: SpillStore) -> None:
        """Keep spilled batches in ``store`` (the JOBDIR's database) instead of a temporary
        file; before any spill or restore."""
        if self.spilled is not None:
            self.spilled.store = store

    def close(self) -> None:
        """Release the spill file (the frontier stays readable: snapshot, len)."""
        if self.spilled is not None:
            self.spilled.close()

    def _spill(self) -> None:
        """Move the lowest-priority queued URLs to disk (:meth:`Spilling.spill`); a strategy
        may do more after a spill."""
        assert self.spilling is not None
        self.spilling.spill()

    def memory_stats(self) -> dict[str, int | float]:
        """URLs queued in memory and on disk, spills and reloads, and bytes a URL
        (:func:`.spill.memory_stats`)."""
        return memory_stats(self)

    # -- hooks for strategies -------------------------------------------------------------
    def pack_extra(self, entry: Entry) -> Any:
        """``entry.extra`` as a spilled entry keeps it (frees what memory it held)."""
        return entry.extra

    def unpack_extra(self, entry: Entry, data: Any) -> None:
        entry.extra = data

    def after_reload(self, entries: list[Entry]) -> None:
        """A spilled batch is back, not queued yet (the learned order re-scores it)."""

    def extra_bytes(self, entry: Entry) -> int:
        """Memory ``entry.extra`` holds, for :meth:`memory_stats`."""
        # the distiller's list of parents: their URL strings are the crawled pages' own
        return 0 if entry.extra is None else sys.getsizeof(entry.extra)

    def key(self, entry: Entry) -> Key:
        return (entry.seq,)

    def observe(self, link: Link) -> None:
        """Learn from the link's parent (score, hotness, the edge) before queueing."""
        parent = link.parent
        if parent is None or parent is self._observed:
            return  # a page's links come together: its score is known from the first one
        if parent not in self.scores:
            self.crawled(parent, link.parent_score, link.parent_hot)
        self._observed = parent  # a score is never removed: no need to look again

    def improve(self, entry: Entry, link: Link) -> bool:
        return False

    def admit(self, link: Link) -> bool:
        return True

    def on_new(self, entry: Entry, link: Link) -> None:
        pass

    def on_crawled(self, url: str, score: float, hot: bool) -> None:
        pass

    # -- helpers --------------------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _hand_out(self, entry: Entry) -> None:
        self.entries.pop(entry.url, None)
        self.done.add(entry.url)
        self.stats["popped"] += 1

    def _rekey(self, entry: Entry) -> None:
        if entry.queued:
            self.queues.push(entry, self.key(entry))

    def _bound(self, entry: Entry) -> None:
        """Evict the lowest-scored links while over MAX_BUFFER (Pant et al.)."""
        if not self.max_buffer:
            return
        heapq.heappush(self._worst, (entry.score, -entry.seq, entry))
        while len(self.entries) > self.max_buffer and self._worst:
            score, _, victim = heapq.heappop(self._worst)
            if not victim.queued or victim.score != score:
                continue  # popped, or re-scored (a fresher item exists)
            self.queues.discard(victim)
            victim.item = None  # no cycle left for the GC (see ServerQueues._take)
            del self.entries[victim.url]
            self.stats["evicted"] += 1

    def _rescore(self, entry: Entry, score: float) -> None:
        entry.score = score
        self._rekey(entry)
        if self.max_buffer:
            heapq.heappush(self._worst, (entry.score, -entry.seq, entry))

    # -- persistence ----------------------------------------------------------------------
    def snapshot(self) -> dict:
        return {
            "strategy": self.name,
            "seq": self._seq,
            "entries": [(*e.fields(), e.queued)
                        for e in sorted(self.entries.values(), key=lambda e: e.seq)],
            "done": self.done.to_bytes(),
            "scores": self.scores.to_state(),
            "graph": self.graph.snapshot() if self.graph is not None else None,
            "stats": dict(self.stats),
            "cursor": self.queues._cursor,  # round-robin: the queue read next
            "spilled": self.spilled.snapshot() if self.spilled is not None else None,
        }

    def restore(self, state: dict) -> None:
        if state["strategy"] != self.name:
            raise ValueError(
                f"saved frontier is {state['strategy']!r}, this crawl uses {self.name!r}"
            )
        self._seq = state["seq"]
        done = state["done"]  # fingerprints; a list of URLs in snapshots before them
        self.done = (FingerprintSet.from_bytes(done) if isinstance(done, bytes)
                     else FingerprintSet(done))
        self.scores = FingerprintMap.from_state(state["scores"])  # a dict before
        if state["graph"] is not None:
            self.graph = LinkGraph.restore(state["graph"])
        self.stats = Counter(state["stats"])
        for *fields, queued in state["entries"]:
            entry = Entry.from_fields(tuple(fields))
            self.entries[entry.url] = entry
            if queued:
                self.queues.push(entry, self.key(entry))
                if self.max_buffer:
                    heapq.heappush(self._worst, (entry.score, -entry.seq, entry))
        self.queues._cursor = state.get("cursor", 0)
        spilled = state.get("spilled")
        if spilled is not None:
            if self.spilled is None:
                raise ValueError("the saved frontier has URLs on disk; set "
                                 "FOCUS_FRONTIER_MEMORY to resume it")
            self.spilled.restore(spilled)
        self.after_restore(state)

    def after_restore(self, state: dict) -> None:
        pass

    def describe(self) -> dict[str, int | float]:
        """Queue sizes for stats."""
        return {"frontier": len(self)}

    def insight(self, sample: int = 20_000, bins: int = 10) -> dict[str, Any]:
        """What a dashboard shows of this order, as plain data (read only; see
        :func:`focuscrawl.core.frontier.insight.queue_insight`)."""
        return queue_insight(self, sample, bins)

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """Why ``entry`` (just handed out) was worth its priority, part by part, for an order
        whose priority is a sum of parts (FOCUS_EXPLAIN); None where it is not."""
        return None


class BreadthFirst(QueueFrontier):
    """FIFO; with MAX_BUFFER, links found while the frontier is full are dropped."""

    name = "breadth-first"

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """Also any link to a URL queued: FIFO, the first link stands."""
        return super().ignores(url, parent_score) or self._ignores_queued(url, parent_score)

    def improves(self, entry: Entry, parent_score: float) -> bool:
        return False

    def admit(self, link: Link) -> bool:
        if self.max_buffer and len(self.entries) >= self.max_buffer:
            self.stats["dropped_full"] += 1
            return False
        return True

    def _bound(self, entry: Entry) -> None:
        pass


class GraphOrder(QueueFrontier):
    """An order that keeps a link graph: ``capabilities.uses_graph``, so
    `QueueFrontier.__init__` makes one and `QueueFrontier.restore` replaces it, never None."""

    capabilities = Capabilities(uses_graph=True)
    graph: LinkGraph


class Cho(GraphOrder):
    """Cho, Garcia-Molina & Page's similarity-based crawler (Figures 4 and 5)."""

    name = "cho"
    REORDERS = ("none", "backlinks", "score")

    def __init__(self, *, distance: bool = False, reorder: str = default("FOCUS_REORDER"),
                 **kw: Any) -> None:
        if reorder not in self.REORDERS:
            raise ValueError(f"reorder must be one of {self.REORDERS}, not {reorder!r}")
        super().__init__(**kw)
        self.distance = distance
        self.reorder = reorder
        if distance:
            self.name = "cho-distance"
        self.hot_len = 0

    def in_hot_queue(self, entry: Entry) -> bool:
        if entry.keyword:
            return True
        return self.distance and self.graph.distance(entry.url) < self.graph.limit

    def key(self, entry: Entry) -> Key:
        hot = self.in_hot_queue(entry)
        importance: float
        if self.reorder == "backlinks":
            importance = -self.graph.backlinks(entry.url)
        elif self.reorder == "score":
            importance = -entry.score
        else:
            importance = 0
        return (0 if hot else 1, importance, entry.seq)

    def observe(self, link: Link) -> None:
        super().observe(link)
        if link.parent is None:
            return
        changed = self.graph.add_edge(link.parent, link.url)
        self._promote(changed)
        if self.reorder == "backlinks":
            entry = self.entries.get(link.url)
            if entry is not None:
                self._rekey(entry)

    def on_crawled(self, url: str, score: float, hot: bool) -> None:
        if hot:
            self._promote(self.graph.set_hot(url))

    def _promote(self, urls: list[str]) -> None:
        for url in urls:
            entry = self.entries.get(url)
            if entry is None or not entry.queued:
                continue
            was_hot = entry.key[0] == 0
            if not was_hot and self.in_hot_queue(entry):
                entry.seq = self._next_seq()  # enqueue(hot_queue, u): to the hot queue's tail
                self.stats["promotions"] += 1
                self._rekey(entry)

    def improve(self, entry: Entry, link: Link) -> bool:
        better = False
        if link.keyword and not entry.keyword and entry.queued:
            entry.keyword = True
            if entry.key[0] != 0:
                entry.seq = self._next_seq()
                self.stats["promotions"] += 1
                better = True
        if link.parent_score > entry.score:
            entry.score = link.parent_score
            better = better or self.reorder == "score"
        if better:
            self._rekey(entry)
        return better

    def describe(self) -> dict[str, int | float]:
        hot = sum(1 for e in self.entries.values() if e.queued and e.key[0] == 0)
        return {"hot_queue": hot, "url_queue": len(self.entries) - hot}


class BestNFirst(QueueFrontier):
    """Pant, Srinivasan & Menczer's Best-N-First (Figure 1)."""

    name = "best-n-first"
    capabilities = Capabilities(batches=True)

    def __init__(self, *, n: int = default("FOCUS_BEST_N"), work_conserving: bool = False,
                 **kw: Any) -> None:
        if n < 1:
            raise ValueError("N must be at least 1")
        super().__init__(**kw)
        self.n = n
        # under politeness, open the next batch while the current one's URLs all wait on busy
        # servers and other servers idle (off: Pant et al.'s sequential crawler, exactly)
        self.work_conserving = work_conserving
        self.rng = random.Random(self.seed)
        self.batch: list[Entry] = []
        if n == 1:
            self.name = "best-first"

    def key(self, entry: Entry) -> Key:
        return (-entry.score, entry.seq)

    def value(self, entry: Entry) -> float | None:
        return entry.score if self.n == 1 else None  # a batch is drawn in random order

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """Also a link to a URL queued from a page scored no better than it is (on
        rediscovered URLs: the best parent's score stands)."""
        return super().ignores(url, parent_score) or self._ignores_queued(url, parent_score)

    def improves(self, entry: Entry, parent_score: float) -> bool:
        return entry.queued and parent_score > entry.score

    def improve(self, entry: Entry, link: Link) -> bool:
        if self.improves(entry, link.parent_score):
            self._rescore(entry, link.parent_score)
            return True
        return False

    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        if self.n == 1:
            return super().pop(ready, slack, held)
        if not self.batch:
            self.open_batch()
        i = self._first_ready(ready, 0)
        if (i is None and self.work_conserving and ready is not None
                and self.queues.has_ready(ready)):
            # every URL left in the batch waits on a busy server while others idle: the next
            # batch is chosen now, for them (its URLs come after the current batch's)
            start = len(self.batch)
            self.open_batch()
            i = self._first_ready(ready, start)
        if i is None:
            return None
        entry = self.batch.pop(i)
        self._hand_out(entry)
        return entry

    def _first_ready(self, ready: Ready, start: int) -> int | None:
        for i in range(start, len(self.batch)):
            if ready is None or ready(self.batch[i].host):
                return i
        return None

    def open_batch(self) -> None:
        """Choose the next batch: the top N queued links, in seeded random order, handed out
        after any left of the current one.  Journaled (a "batch" operation) and replayed."""
        self.balance()
        chunk: list[Entry] = []
        while len(chunk) < self.n:
            entry = self.queues.pop(None)
            if entry is None:
                break
            chunk.append(entry)
        self.rng.shuffle(chunk)
        self.batch.extend(chunk)
        self.stats["batches"] += 1

    def take(self, url: str) -> Entry | None:
        """As `QueueFrontier.take`; a pop that found no batch chose one first, so does this."""
        if self.n == 1:
            return super().take(url)
        if not self.batch:
            self.open_batch()
        for i, entry in enumerate(self.batch):
            if entry.url == url:
                del self.batch[i]
                self._hand_out(entry)
                return entry
        return super().take(url)

    def snapshot(self) -> dict:
        state = super().snapshot()
        state["batch"] = [e.url for e in self.batch]
        state["rng"] = self.rng.getstate()
        return state

    def after_restore(self, state: dict) -> None:
        self.batch = [self.entries[u] for u in state.get("batch", []) if u in self.entries]
        if "rng" in state:
            rng_state = state["rng"]
            self.rng.setstate((rng_state[0], tuple(rng_state[1]), rng_state[2]))

    def describe(self) -> dict[str, int | float]:
        return {"frontier": len(self), "batch": len(self.batch)}


class BestFirst(BestNFirst):
    name = "best-first"

    def __init__(self, **kw: Any) -> None:
        kw["n"] = 1
        super().__init__(**kw)


class Distiller(GraphOrder):
    """Classifier + distiller: parent score boosted by the parent's hub weight (HITS)."""

    name = "distiller"

    def __init__(self, *, weight: float = default("FOCUS_DISTILLER_WEIGHT"),
                 every: int = default("FOCUS_DISTILLER_EVERY"), **kw: Any) -> None:
        super().__init__(**kw)
        self.weight = weight
        self.every = max(1, every)
        self.hub: dict[str, float] = {}

    def priority(self, entry: Entry) -> float:
        parents = entry.extra or ()
        best = entry.score * (1 - self.weight)
        for p in parents:
            value = (1 - self.weight) * self.scores.get(p, 0.0) + self.weight * self.hub.get(p, 0)
            best = max(best, value)
        return best

    def key(self, entry: Entry) -> Key:
        return (-self.priority(entry), entry.seq)

    def value(self, entry: Entry) -> float | None:
        return -entry.key[0] if entry.key else None

    def on_new(self, entry: Entry, link: Link) -> None:
        entry.extra = [link.parent] if link.parent else []

    def observe(self, link: Link) -> None:
        super().observe(link)
        if link.parent is not None:
            self.graph.add_edge(link.parent, link.url)

    def improve(self, entry: Entry, link: Link) -> bool:
        if not entry.queued or link.parent is None or link.parent in entry.extra:
            return False
        before = entry.key
        if len(entry.extra) < 64:
            entry.extra.append(link.parent)
        entry.score = max(entry.score, link.parent_score)
        self._rescore(entry, entry.score)
        return entry.key < before

    def on_crawled(self, url: str, score: float, hot: bool) -> None:
        if self.stats["pages"] % self.every == 0:
            self.hub = self.graph.hubs()
            self.stats["hits_runs"] += 1
            for entry in list(self.entries.values()):
                self._rekey(entry)

    def snapshot(self) -> dict:
        state = super().snapshot()
        state["hub"] = self.hub  # as last computed: a restored crawl then orders as before
        return state

    def after_restore(self, state: dict) -> None:
        hub = state.get("hub")
        self.hub = dict(hub) if hub is not None else self.graph.hubs()
        for entry in list(self.entries.values()):
            self._rekey(entry)  # restore() keyed them before the hub weights were back
