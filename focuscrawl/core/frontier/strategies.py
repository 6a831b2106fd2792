"""The seed papers' crawl orders, as valuations a :class:`~.queued.QueueFrontier` keeps
(no Scrapy; :mod:`focuscrawl.core.orders` composes them by name).

* :class:`BreadthFirst` -- FIFO, optionally bounded to MAX_BUFFER (Pant et al.'s blind
  baseline): links found while the frontier is full are dropped.
* :class:`Cho` -- ``hot_queue`` / ``url_queue`` with ``dequeue2`` (Cho et al., Figure 4), and
  with ``distance=True`` the modified crawler of Figure 5: a URL within
  ``distance_from_hotpage < 3`` also goes hot, computed over every link seen so far, with
  promotion of queued URLs.  ``reorder`` is ``reorder_queue``: FIFO, backlink count, or the
  parent's cosine score.
* :class:`BestFirst` -- links carry their parent's cosine score (the best seen), the lowest-scored
  is evicted beyond MAX_BUFFER.  With the :class:`~.policies.Batches` policy it is Pant et al.'s
  Best-N-First (Figure 1): the top N popped as a batch, handed out in seeded random order.
* :class:`Distiller` -- best-first whose link priority mixes the parent's score with the
  parent's HITS hub weight over the crawled graph, recomputed every K pages (focused-crawler
  slides).
"""

from __future__ import annotations

from typing import Any

from ...config import default
from .link import Capabilities, Link
from .linkgraph import LinkGraph
from .queues import Entry, Key
from .valuation import Valuation


class BreadthFirst(Valuation):
    """FIFO; with MAX_BUFFER, links found while the frontier is full are dropped."""

    name = "breadth-first"
    stands = True  # FIFO: the first link stands
    evicts = False

    def key(self, entry: Entry) -> Key:
        return (entry.seq,)

    def improves(self, entry: Entry, parent_score: float) -> bool:
        return False

    def admit(self, link: Link) -> bool:
        f = self.frontier
        if f.max_buffer and len(f.entries) >= f.max_buffer:
            f.stats["dropped_full"] += 1
            return False
        return True


class BestFirst(Valuation):
    """A link's priority is its best parent's score (Pant et al.)."""

    name = "best-first"
    stands = True  # a link from a page scored no better than the URL's best parent: nothing

    def value(self, entry: Entry) -> float | None:
        return entry.score

    def improves(self, entry: Entry, parent_score: float) -> bool:
        return entry.queued and parent_score > entry.score

    def improve(self, entry: Entry, link: Link) -> bool:
        if self.improves(entry, link.parent_score):
            self.frontier.rescore(entry, link.parent_score)
            return True
        return False


class _GraphOrder(Valuation):
    """An order that keeps a link graph: the frontier makes one (``uses_graph``)."""

    capabilities = Capabilities(uses_graph=True)

    @property
    def graph(self) -> LinkGraph:
        graph = self.frontier.graph
        assert graph is not None  # made by the frontier: capabilities.uses_graph
        return graph


class Cho(_GraphOrder):
    """Cho, Garcia-Molina & Page's similarity-based crawler (Figures 4 and 5)."""

    name = "cho"
    REORDERS = ("none", "backlinks", "score")

    def __init__(self, *, distance: bool = False,
                 reorder: str = default("FOCUS_REORDER")) -> None:
        if reorder not in self.REORDERS:
            raise ValueError(f"reorder must be one of {self.REORDERS}, not {reorder!r}")
        self.distance = distance
        self.reorder = reorder
        if distance:
            self.name = "cho-distance"

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
        if link.parent is None:
            return
        changed = self.graph.add_edge(link.parent, link.url)
        self._promote(changed)
        if self.reorder == "backlinks":
            entry = self.frontier.entries.get(link.url)
            if entry is not None:
                self.frontier.rekey(entry)

    def crawled(self, url: str, score: float, hot: bool, digest: Any) -> None:
        if hot:
            self._promote(self.graph.set_hot(url))

    def _promote(self, urls: list[str]) -> None:
        f = self.frontier
        for url in urls:
            entry = f.entries.get(url)
            if entry is None or not entry.queued:
                continue
            was_hot = entry.key[0] == 0
            if not was_hot and self.in_hot_queue(entry):
                entry.seq = f.next_seq()  # enqueue(hot_queue, u): to the hot queue's tail
                f.stats["promotions"] += 1
                f.rekey(entry)

    def improve(self, entry: Entry, link: Link) -> bool:
        f = self.frontier
        better = False
        if link.keyword and not entry.keyword and entry.queued:
            entry.keyword = True
            if entry.key[0] != 0:
                entry.seq = f.next_seq()
                f.stats["promotions"] += 1
                better = True
        if link.parent_score > entry.score:
            f.set_score(entry, link.parent_score)
            better = better or self.reorder == "score"
        if better:
            f.rekey(entry)
        return better

    def describe(self) -> dict[str, int | float]:
        entries = self.frontier.entries
        hot = sum(1 for e in entries.values() if e.queued and e.key[0] == 0)
        return {"hot_queue": hot, "url_queue": len(entries) - hot}


class Distiller(_GraphOrder):
    """Classifier + distiller: parent score boosted by the parent's hub weight (HITS)."""

    name = "distiller"

    def __init__(self, *, weight: float = default("FOCUS_DISTILLER_WEIGHT"),
                 every: int = default("FOCUS_DISTILLER_EVERY")) -> None:
        self.weight = weight
        self.every = max(1, every)
        self.hub: dict[str, float] = {}

    def priority(self, entry: Entry) -> float:
        parents = entry.extra or ()
        scores = self.frontier.scores
        best = entry.score * (1 - self.weight)
        for p in parents:
            value = (1 - self.weight) * scores.get(p, 0.0) + self.weight * self.hub.get(p, 0)
            best = max(best, value)
        return best

    def key(self, entry: Entry) -> Key:
        return (-self.priority(entry), entry.seq)

    def value(self, entry: Entry) -> float | None:
        return -entry.key[0] if entry.key else None

    def new(self, entry: Entry, link: Link) -> bool:
        entry.extra = [link.parent] if link.parent else []
        return True

    def observe(self, link: Link) -> None:
        if link.parent is not None:
            self.graph.add_edge(link.parent, link.url)

    def improve(self, entry: Entry, link: Link) -> bool:
        if not entry.queued or link.parent is None or link.parent in entry.extra:
            return False
        before = entry.key
        if len(entry.extra) < 64:
            entry.extra.append(link.parent)
        self.frontier.rescore(entry, max(entry.score, link.parent_score))
        return entry.key < before

    def crawled(self, url: str, score: float, hot: bool, digest: Any) -> None:
        f = self.frontier
        if f.stats["pages"] % self.every == 0:
            self.hub = self.graph.hubs()
            f.stats["hits_runs"] += 1
            for entry in list(f.entries.values()):
                f.rekey(entry)

    def snapshot(self, state: dict[str, Any]) -> None:
        state["hub"] = self.hub  # as last computed: a restored crawl then orders as before

    def after_restore(self, state: dict[str, Any]) -> None:
        hub = state.get("hub")
        self.hub = dict(hub) if hub is not None else self.graph.hubs()
        for entry in list(self.frontier.entries.values()):
            self.frontier.rekey(entry)  # restore() keyed them before the hub weights were back
