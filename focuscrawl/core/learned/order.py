"""The ``learned`` crawl order: a :class:`QueueFrontier` whose priorities are learned link values
(see the package's docstring).  No Scrapy import.

It composes the parts: a :class:`Scorer` (features, model, values), a :class:`Trainer`
(labels, examples, siblings), a :class:`HostBandit` and a :class:`Reranker`; :mod:`.state` saves
and restores them.  What stays here is the frontier's side: queueing, handing out, the batch of
links waiting to be scored, the URLs in flight, eviction and spilling.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from ...config import LearnedOptions
from ..fingerprints import fingerprint
from ..frontier.protocol import Capabilities, Link, Ready
from ..frontier.queues import Entry, Key
from ..frontier.strategies import QueueFrontier
from ..memory import trim_heap
from ..urls import host
from .bandit import HostBandit
from .defaults import (
    BANDIT_BACKLINKS,
    EARNED_OPTIMISM,
    EXPLORE_SPLIT,
    FEATURE_BITS,
    KEYWORD_SCALE,
    MAX_FETCHING,
    PARENT,
    PARENT_EXPERT,
)
from .insight import learned_insight
from .profile import PageDigest
from .rerank import Reranker
from .scoring import Scorer
from .seeds import SeedVerdict, settle, starting_options
from .state import (
    compact_rows,
    pack_row,
    rescore_reloaded,
    restore_learned,
    restore_store,
    snapshot_learned,
)
from .training import Trainer


class Learned(QueueFrontier):
    """Best-first over learned link values (see the package's docstring)."""

    name = "learned"
    capabilities = Capabilities(learns=True, explores=True)
    # while the best URL's server is busy, take another's only if worth half as much:
    # waiting a little for the best finds more relevant pages per page fetched
    default_slack = 0.5

    def __init__(self, *, keywords: Any = (), options: LearnedOptions | None = None,
                 **kw: Any) -> None:
        """``options``: the learned order's (:class:`focuscrawl.config.LearnedOptions`, the
        settings' declared defaults when None); ``kw``: the options every order takes."""
        super().__init__(**kw)
        if not keywords:
            raise ValueError("the learned strategy needs the topic's keywords")
        o = options if options is not None else LearnedOptions()
        self.options = o
        self.every = max(1, o.learn_every)
        # the seeds are on-topic examples: the user says so (True, False) or the order decides
        # from the seeds' pages (None; :mod:`.seeds`)
        self.seeds = SeedVerdict(o.examples, o.relevant_score)
        started, self.auto_options = starting_options(o.examples, {
            "explore": o.explore, "profile_score": o.profile_score, "hub": o.hub,
            "sibling_window": o.sibling_window, "explore_hosts": o.explore_hosts})
        self.window = window = max(0, int(started["sibling_window"]))
        # a link to a URL queued may be counted unbuilt (only_counts): the scheduler registers
        # the counting answer for the spider once, if it can ever count (with link nearness
        # too: the spider's check places every link it drops, :meth:`ignores`)
        self.counts_inlinks = not self.max_buffer
        self.scorer = Scorer(keywords, bits=FEATURE_BITS, explore=started["explore"],
                             explore_split=EXPLORE_SPLIT, hub=started["hub"], sibling=o.sibling,
                             parent_expert=_switch(o.parent_expert, PARENT_EXPERT))
        self.bandit = HostBandit(started["explore_hosts"], self.queues, self.scorer,
                                 self.round_robin,
                                 earned=_switch(o.earned_optimism, EARNED_OPTIMISM),
                                 backlinks=_switch(o.bandit_backlinks, BANDIT_BACKLINKS))
        self.trainer = Trainer(self.scorer, self.bandit, self.entries, self._rescore,
                               relevant_score=o.relevant_score, keyword_scale=KEYWORD_SCALE,
                               profile_score=started["profile_score"], discount=o.discount,
                               memory=max(100, o.memory), window=window)
        # until the verdict, parents are areas and links keep their places: hub evidence and
        # link nearness may yet count (asked per outlink: an attribute the verdict updates)
        deciding = self.seeds.pending
        self.scorer.hub_areas = bool(self.scorer.hub) or deciding and "hub" in self.auto_options
        self.keeps_places = bool(window) or deciding and "sibling_window" in self.auto_options
        self.reranker = Reranker(self, rerank_max=o.rerank_max, rerank_batch=o.rerank_batch)
        self.pending: list[tuple[Entry, int]] = []  # links found, not scored yet
        self.fetching: dict[str, int] = {}  # URL handed out -> its example's slot
        self._digest: PageDigest | None = None
        self._failing = False

    # -- the options a resumed crawl may read or change -----------------------------------------
    @property
    def explore(self) -> float:
        return self.scorer.explore

    @explore.setter
    def explore(self, value: float) -> None:
        self.scorer.explore = value

    @property
    def hub(self) -> float:
        return self.scorer.hub

    @property
    def profile_score(self) -> float:
        return self.trainer.profile_score

    @property
    def labels(self) -> Any:
        """Fetched page -> its relevance label (a ``FingerprintMap``)."""
        return self.trainer.labels

    @property
    def bandit_picks(self) -> int:
        return self.bandit.picks

    # -- queueing ---------------------------------------------------------------------------
    def key(self, entry: Entry) -> Key:
        return (-entry.score, entry.seq)

    @property
    def examples(self) -> bool | None:
        """Whether the seeds are examples: said, decided, or None while undecided."""
        return self.seeds.examples

    def add(self, link: Link) -> bool:
        if link.parent is not None and self.keeps_places:
            self.trainer.child(link.parent, link.url)
        known = self._known(link)
        if known is not None:
            return known
        if link.parent is None:
            self.seeds.seed_queued()
        entry = Entry(
            link.url, link.host, self._next_seq(), score=0.0, keyword=link.keyword,
            depth=link.depth, parent=link.parent, anchor=link.anchor, payload=link.payload,
        )
        entry.extra = self._featurize(link)
        self.entries[link.url] = entry
        self.stats["queued"] += 1
        self.pending.append((entry, -1))
        return True

    def ignores(self, url: str, parent_score: float = 0.0, parent: str | None = None,
                anchor: str = "", context: object = "") -> bool:
        """A link to a URL handed out, as the other orders (one to a URL queued counts as an
        in-link, :meth:`only_counts`).  While places are kept (link nearness on, or the
        seeds' verdict to come) the spider's check, which sees every outlink in page order,
        first places the link among its parent's: a link dropped unbuilt keeps its place, as
        if it had been added, without a Request through the spider middlewares and the
        scheduler."""
        if self.keeps_places and parent is not None:
            self.trainer.child(parent, url)
        return super().ignores(url, parent_score, parent)

    def improve(self, entry: Entry, link: Link) -> bool:
        """Another link to a queued URL: one more in-link; its evidence may be better."""
        slot = entry.extra
        if slot is None or not entry.queued and not self._is_pending(entry):
            return False
        store = self.scorer.store
        store.inlinks[slot] += 1.0
        if (backlinks := self.bandit.backlinks) is not None and entry.queued:
            backlinks.linked(entry)
        if self.trainer.parent_relevance(link.parent, link.parent_score) <= \
                store.dense_value(slot, PARENT) and \
                not self.scorer.names_topic_anew(slot, link.anchor, link.context):
            return False  # no better parent, no keyword the kept link lacks: it stands
        new = self._featurize(link)
        store.keep_best(new, slot)
        self.pending.append((entry, new))
        return True

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str = "",
                    context: object = "") -> bool:
        """:meth:`improve`'s first case, asked before the link is built: a link to a URL
        queued (or waiting to be scored) from a parent no more relevant than its first one.
        Not a link whose ``anchor`` or ``context`` names a keyword the kept link's did not: its
        words would count (:meth:`improve`).  Most of a crawl's outlinks that are not to pages
        fetched are such links, and a Request each through the spider middlewares and the
        scheduler cost more than the rest of the order's work.  Not with MAX_BUFFER (an
        eviction before the link arrived would make it a new URL).  With link nearness the
        check placed the link first (:meth:`ignores`).  The link filters are not asked again: a URL
        they let through once gets the in-link even if, say, its host's robots.txt came since
        (the URL is refused when it is handed out)."""
        if not self.counts_inlinks:
            return False
        entry = self.entries.get(url)
        return (entry is not None and entry.extra is not None
                and self.trainer.relevance_of(parent, parent_score)
                <= self.scorer.store.dense_value(entry.extra, PARENT)
                and not self.scorer.names_topic_anew(entry.extra, anchor, context))

    def count_inlink(self, url: str) -> None:
        self.stats["duplicates"] += 1
        entry = self.entries[url]
        self.scorer.store.inlinks[entry.extra] += 1.0
        if (backlinks := self.bandit.backlinks) is not None:
            backlinks.linked(entry)

    def _is_pending(self, entry: Entry) -> bool:
        return not entry.queued and entry.url in self.entries

    def _featurize(self, link: Link) -> int:
        parent = link.parent
        trainer = self.trainer
        return self.scorer.add(
            link.url, link.host, anchor=link.anchor, context=str(link.context), parent=parent,
            parent_host=None if parent is None else host(parent), chrome=link.chrome,
            parent_relevance=trainer.parent_relevance(parent, link.parent_score),
            grandparent=trainer.grandparent_label(parent), depth=link.depth,
        )

    def flush(self) -> None:
        """Score every link found since the last call and queue it (or let it improve).

        Called before every choice (pop, take), before learning from a page, and before a
        re-rank.  It changes the state (link scores), so a crash-safe caller journals a
        pop that returned nothing but flushed (``stats["flushes"]`` moved) and replays it.
        """
        pending = self.pending
        if not pending:
            return
        self.stats["flushes"] += 1
        self.pending = []
        store, queued = self.scorer.store, self.reranker.queued
        slots = np.array([entry.extra if new < 0 else new for entry, new in pending],
                         dtype=np.int64)
        values = self.scorer.values(slots).tolist()
        for (entry, new), value in zip(pending, values, strict=True):
            if new < 0:
                if entry.url in self.entries and not entry.queued:
                    entry.score = value
                    self.queues.push(entry, self.key(entry))
                    queued.set(entry.extra, entry, value)
                    if self.max_buffer:
                        heapq.heappush(self._worst, (entry.score, -entry.seq, entry))
            elif entry.queued and value > entry.score:
                queued.clear(entry.extra)
                store.free(entry.extra)
                store.inlinks[new] = store.inlinks[entry.extra]
                store.near[new] = store.near[entry.extra]
                entry.extra = new
                self._rescore(entry, value)
                self.stats["improved"] += 1
            else:
                store.free(new)

    # -- handing out ------------------------------------------------------------------------
    def value(self, entry: Entry) -> float | None:
        return entry.score

    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        self.flush()
        if self.bandit.turn(self.stats):
            self.balance()
            entry = self.bandit.choice(ready)
            if entry is not None:
                self.queues.take(entry)
                self._hand_out(entry)
                self.bandit.picks += 1
                self.bandit.picked[entry.host] += 1
                return entry
        return super().pop(ready, slack, held)

    def take(self, url: str) -> Entry | None:
        self.flush()
        return super().take(url)

    def requeue(self, entry: Entry) -> None:
        self.flush()
        slot = self.fetching.pop(entry.url, None)
        if slot is not None:
            entry.extra = slot  # a compaction since it was handed out renumbered its row
        super().requeue(entry)
        if entry.queued and entry.extra is not None:
            self.reranker.queued.set(entry.extra, entry, entry.score)

    def _rescore(self, entry: Entry, score: float) -> None:
        super()._rescore(entry, score)
        if entry.queued and entry.extra is not None:
            self.reranker.queued.set(entry.extra, entry, score)

    def _hand_out(self, entry: Entry) -> None:
        super()._hand_out(entry)
        slot = entry.extra
        self.reranker.queued.clear(slot)
        if slot is not None:
            self.fetching[entry.url] = slot
            if len(self.fetching) > MAX_FETCHING:  # pages that never reported back
                self.scorer.store.free(self.fetching.pop(next(iter(self.fetching))))
        if entry.parent is not None:
            self.trainer.parents[entry.url] = fingerprint(entry.parent)

    # -- learning ---------------------------------------------------------------------------
    def crawled(self, url: str, score: float, hot: bool, digest: PageDigest | None = None
                ) -> None:
        self._digest = digest
        # a URL with a score is known, unless it failed, was queued again (a retry) and is
        # being fetched again: then its page's label follows the error's 0, as any page's would
        if url in self.scores and (self._failing or url not in self.fetching):
            return
        self._record(url, score, hot)

    def failed(self, url: str, learn: bool = True) -> None:
        """A URL handed out gave no page: an error teaches a negative label for its link; a
        redirect teaches nothing (its target is a link of its own)."""
        if url in self.scores or url not in self.fetching:
            return
        if learn:
            self._failing = True
            try:
                self.crawled(url, 0.0, False, None)
            finally:
                self._failing = False
        else:
            del self.fetching[url]

    def relevance(self, score: float, digest: PageDigest | None) -> tuple[float, float]:
        """A page's label in [0, 1], and its keyword match alone (:meth:`Trainer.relevance`)."""
        return self.trainer.relevance(score, digest)

    def on_crawled(self, url: str, score: float, hot: bool) -> None:
        self.flush()
        digest, self._digest = self._digest, None
        label, by_keywords = self.trainer.relevance(score, digest)
        slot = self.fetching.pop(url, None)
        seed = slot is not None and self.scorer.is_seed(slot)
        if seed and self.seeds.examples:
            label = by_keywords = 1.0  # an example of the topic (said, or the verdict)
        self.trainer.labels[url] = label
        profile = self.scorer.profile
        profile.observe(digest)
        if digest is not None and by_keywords >= 1.0:
            profile.feedback(digest, 1.0)  # a relevant page by the user's own words
        if seed:
            self.seeds.seed_crawled(score, digest, fed=by_keywords >= 1.0)
        if slot is not None:
            self.trainer.learn(url, slot, label, self._failing)
        if self.seeds.due(self.stats["pages"], self.every):
            settle(self)
        if self.stats["pages"] % self.every == 0:
            self.retrain()
        self._evict()

    def _evict(self) -> None:
        """MAX_BUFFER: drop the lowest-valued links (after a page, not per link: links are
        scored in batches)."""
        if not self.max_buffer:
            return
        worst = self._worst
        while len(self.entries) > self.max_buffer and worst:
            value, _, victim = heapq.heappop(worst)
            if not victim.queued or victim.score != value:
                continue
            self.queues.discard(victim)
            del self.entries[victim.url]
            self.reranker.queued.clear(victim.extra)
            self.scorer.store.free(victim.extra)
            self.stats["evicted"] += 1

    def retrain(self) -> None:
        """Every ``every`` pages: rebuild the profile, replay recent examples, re-rank."""
        if self.scorer.profile.rebuild():
            self.scorer.project()
        self.trainer.replay(4 * self.every)
        if self.compact_if_worth():
            trim_heap()  # the arrays' old copies (a spill's compaction: balance() trims)
        self.rerank()
        self.stats["retrains"] += 1

    def rerank(self) -> None:
        """Re-score the queued links with today's model and re-queue them
        (:meth:`Reranker.rerank`)."""
        self.reranker.rerank()

    def compact_if_worth(self) -> bool:
        """Compact once freed rows may outnumber half the live ones (amortised O(1) a row);
        whether it did."""
        store = self.scorer.store
        if store.garbage > max(4096, store.live // 2):
            self.compact()
            return True
        return False

    def compact(self) -> None:
        """Compact the feature store (:func:`.state.compact_rows`)."""
        compact_rows(self)
        self.stats["compactions"] += 1

    # -- spilling (FOCUS_FRONTIER_MEMORY) -----------------------------------------------------
    def _spill(self) -> None:
        """Spill, then reclaim the spilled links' feature rows by the retrain's rule: a crawl
        may queue many times the limit between two retrains, and each spilled row is
        garbage until a compaction.  Not while links wait to be scored (their slot numbers
        are held outside the entries); a compaction only renumbers, in order."""
        super()._spill()
        if not self.pending:
            self.compact_if_worth()

    def pack_extra(self, entry: Entry) -> Any:
        return pack_row(self, entry)

    def unpack_extra(self, entry: Entry, data: Any) -> None:
        entry.extra = None if data is None else self.scorer.store.add_row(data)

    def after_reload(self, entries: list[Entry]) -> None:
        rescore_reloaded(self, entries)

    def extra_bytes(self, entry: Entry) -> int:
        return 0 if entry.extra is None else self.scorer.store.row_bytes(entry.extra)

    # -- persistence --------------------------------------------------------------------------
    def snapshot(self) -> dict:
        snap = super().snapshot()
        snap["learned"] = snapshot_learned(self)
        return snap

    def restore(self, saved: dict) -> None:
        restore_store(self, saved["learned"])
        super().restore(saved)

    def after_restore(self, saved: dict) -> None:
        restore_learned(self, saved["learned"])

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """The parts of ``entry``'s logit under today's model, each rounded to 3 places:
        ``bias``, each dense feature's weight x value (the zero ones left out), ``words``
        (the learned weights of its hashed anchor, URL and context words), ``profile`` (the
        topic profile projected onto those words) and ``explore`` (the UCB bonus); the value
        is ``sigmoid`` of their sum (+1 for a seed).  Read only: it changes no state, so a
        crawl explained orders as one that is not.  Asked at hand-out, before a retrain."""
        return None if entry.extra is None else self.scorer.explain(entry.extra)

    def insight(self, sample: int = 20_000, bins: int = 10, top: int = 12) -> dict[str, Any]:
        """The base's figures and what the order has learnt (:func:`.insight.learned_insight`)."""
        return learned_insight(self, super().insight(sample, bins), top)

    def describe(self) -> dict[str, int | float]:
        verdict = self.seeds.examples
        return {"frontier": len(self), "learned_examples": len(self.trainer.ex_slot),
                "profile_version": self.scorer.profile.version,
                "host_bandit_picks": self.bandit.picks,
                "host_bandit_backlink_picks": self.bandit.backlink_picks,
                **({} if verdict is None else {"seeds_are_examples": int(verdict)})}


def _switch(value: bool | None, default: bool) -> bool:
    """A research switch: None (the setting unset) is its current default."""
    return default if value is None else value
