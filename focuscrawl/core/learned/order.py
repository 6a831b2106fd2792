"""The ``learned`` crawl order: a :class:`Valuation` whose priorities are learned link values
(see the package's docstring), kept by a :class:`QueueFrontier` with the host bandit's policy
(:func:`learned_frontier`).  No Scrapy import.

It composes the parts: a :class:`Scorer` (features, model, values), a :class:`Trainer`
(labels, examples, siblings), a :class:`HostBandit` and a :class:`Reranker`; :mod:`.state` saves
and restores them.  What stays here is the order's side of the queue: the batch of links
waiting to be scored, the URLs in flight, what eviction and spilling free.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...config import LearnedOptions
from ..fingerprints import fingerprint
from ..frontier.link import Capabilities, Link
from ..frontier.queued import QueueFrontier
from ..frontier.queues import Entry
from ..frontier.valuation import Keeper, Valuation
from ..memory import trim_heap
from ..urls import host
from .bandit import HostBandit, HostBanditFirst
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


def learned_frontier(keywords: Any = (), options: LearnedOptions | None = None, *,
                     order: Learned | None = None, **kw: Any) -> QueueFrontier:
    """The learned order: its valuation (``order``, or one made of ``keywords`` and
    ``options``) kept by a frontier whose policy gives the host bandit its share of the URLs
    handed out; ``kw``: the options every order takes."""
    if order is None:
        order = Learned(keywords=keywords, options=options)
    return QueueFrontier(order, HostBanditFirst(order), **kw)


class Learned(Valuation):
    """Best-first over learned link values (see the package's docstring)."""

    name = "learned"
    capabilities = Capabilities(learns=True, explores=True)
    # while the best URL's server is busy, take another's only if worth half as much:
    # waiting a little for the best finds more relevant pages per page fetched
    default_slack = 0.5

    def __init__(self, *, keywords: Any = (), options: LearnedOptions | None = None) -> None:
        """``options``: the learned order's (:class:`focuscrawl.config.LearnedOptions`, the
        settings' declared defaults when None).  The parts are made when a frontier takes
        the order (:meth:`bind`): the host bandit and the trainer work on its queue."""
        if not keywords:
            raise ValueError("the learned strategy needs the topic's keywords")
        self.keywords = keywords
        self.options = options if options is not None else LearnedOptions()

    def bind(self, frontier: Keeper) -> None:
        super().bind(frontier)
        o = self.options
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
        # too: the spider's check places every link it drops, :meth:`linked`)
        self._counts_inlinks = not frontier.max_buffer
        self.scorer = Scorer(self.keywords, bits=FEATURE_BITS, explore=started["explore"],
                             explore_split=EXPLORE_SPLIT, hub=started["hub"], sibling=o.sibling,
                             parent_expert=_switch(o.parent_expert, PARENT_EXPERT))
        self.bandit = HostBandit(started["explore_hosts"], frontier.queues, self.scorer,
                                 frontier.round_robin,
                                 earned=_switch(o.earned_optimism, EARNED_OPTIMISM),
                                 backlinks=_switch(o.bandit_backlinks, BANDIT_BACKLINKS))
        self.trainer = Trainer(self.scorer, self.bandit, frontier.entries, frontier.rescore,
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

    @property
    def stats(self) -> Any:
        """The frontier's counters (a restore replaces them)."""
        return self.frontier.stats

    @property
    def examples(self) -> bool | None:
        """Whether the seeds are examples: said, decided, or None while undecided."""
        return self.seeds.examples

    # -- links ------------------------------------------------------------------------------
    def value(self, entry: Entry) -> float | None:
        return entry.score

    def linked(self, url: str, parent: str | None) -> None:
        """While places are kept (link nearness on, or the seeds' verdict to come) every link
        seen takes its place among its parent's, those the spider's check drops unbuilt too
        (:meth:`QueueFrontier.ignores`): as if they had been added, without a Request through
        the spider middlewares and the scheduler."""
        if parent is not None and self.keeps_places:
            self.trainer.child(parent, url)

    def new(self, entry: Entry, link: Link) -> bool:
        """Scored with the links found since, at the next :meth:`flush`."""
        if link.parent is None:
            self.seeds.seed_queued()
        entry.extra = self._featurize(link)
        self.pending.append((entry, -1))
        return False

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

    @property
    def counts_inlinks(self) -> bool:
        return self._counts_inlinks

    def only_counts(self, url: str, parent: str, parent_score: float, anchor: str,
                    context: object) -> bool:
        """:meth:`improve`'s first case, asked before the link is built: a link to a URL
        queued (or waiting to be scored) from a parent no more relevant than its first one.
        Not a link whose ``anchor`` or ``context`` names a keyword the kept link's did not: its
        words would count (:meth:`improve`).  Most of a crawl's outlinks that are not to pages
        fetched are such links, and a Request each through the spider middlewares and the
        scheduler cost more than the rest of the order's work.  Not with MAX_BUFFER (an
        eviction before the link arrived would make it a new URL).  With link nearness the
        check placed the link first (:meth:`linked`).  The link filters are not asked again: a URL
        they let through once gets the in-link even if, say, its host's robots.txt came since
        (the URL is refused when it is handed out)."""
        if not self._counts_inlinks:
            return False
        entry = self.frontier.entries.get(url)
        return (entry is not None and entry.extra is not None
                and self.trainer.relevance_of(parent, parent_score)
                <= self.scorer.store.dense_value(entry.extra, PARENT)
                and not self.scorer.names_topic_anew(entry.extra, anchor, context))

    def count_inlink(self, url: str) -> None:
        self.stats["duplicates"] += 1
        entry = self.frontier.entries[url]
        self.scorer.store.inlinks[entry.extra] += 1.0
        if (backlinks := self.bandit.backlinks) is not None:
            backlinks.linked(entry)

    def _is_pending(self, entry: Entry) -> bool:
        return not entry.queued and entry.url in self.frontier.entries

    def _featurize(self, link: Link) -> int:
        parent = link.parent
        trainer = self.trainer
        return self.scorer.add(
            link.url, link.host, anchor=link.anchor, context=str(link.context), parent=parent,
            parent_host=None if parent is None else host(parent), chrome=link.chrome,
            parent_relevance=trainer.parent_relevance(parent, link.parent_score),
            grandparent=trainer.grandparent_label(parent), depth=link.depth,
        )

    def flush(self) -> bool:
        """Score every link found since the last call and queue it (or let it improve);
        whether there were any.

        Called before every choice (pop, take), before learning from a page, and before a
        re-rank.  It changes the state (link scores): the frontier tells its events (a
        crash-safe crawl's journal records it, and replays it in its place).
        """
        pending = self.pending
        if not pending:
            return False
        f = self.frontier
        self.stats["flushes"] += 1
        self.pending = []
        store, queued = self.scorer.store, self.reranker.queued
        slots = np.array([entry.extra if new < 0 else new for entry, new in pending],
                         dtype=np.int64)
        values = self.scorer.values(slots).tolist()
        entries = f.entries
        for (entry, new), value in zip(pending, values, strict=True):
            if new < 0:
                if entry.url in entries and not entry.queued:
                    f.queue(entry, value)
            elif entry.queued and value > entry.score:
                queued.clear(entry.extra)
                store.free(entry.extra)
                store.inlinks[new] = store.inlinks[entry.extra]
                store.near[new] = store.near[entry.extra]
                entry.extra = new
                f.rescore(entry, value)
                self.stats["improved"] += 1
            else:
                store.free(new)
        return True

    # -- the queue's events -------------------------------------------------------------------
    def queued(self, entry: Entry) -> None:
        if entry.queued and entry.extra is not None:
            self.reranker.queued.set(entry.extra, entry, entry.score)

    def requeuing(self, entry: Entry) -> None:
        slot = self.fetching.pop(entry.url, None)
        if slot is not None:
            entry.extra = slot  # a compaction since it was handed out renumbered its row

    def handed_out(self, entry: Entry) -> None:
        slot = entry.extra
        self.reranker.queued.clear(slot)
        if slot is not None:
            self.fetching[entry.url] = slot
            if len(self.fetching) > MAX_FETCHING:  # pages that never reported back
                self.scorer.store.free(self.fetching.pop(next(iter(self.fetching))))
        if entry.parent is not None:
            self.trainer.parents[entry.url] = fingerprint(entry.parent)

    def evicted(self, entry: Entry) -> None:
        """MAX_BUFFER, after a page (links are scored in batches, not queued one by one)."""
        self.reranker.queued.clear(entry.extra)
        self.scorer.store.free(entry.extra)

    # -- learning ---------------------------------------------------------------------------
    def again(self, url: str) -> bool:
        # a URL with a score is known, unless it failed, was queued again (a retry) and is
        # being fetched again: then its page's label follows the error's 0, as any page's would
        return not self._failing and url in self.fetching

    def failed(self, url: str, learn: bool) -> None:
        """A URL handed out gave no page: an error teaches a negative label for its link; a
        redirect teaches nothing (its target is a link of its own)."""
        if url in self.frontier.scores or url not in self.fetching:
            return
        if learn:
            self._failing = True
            try:
                self.frontier.crawled(url, 0.0, False, None)
            finally:
                self._failing = False
        else:
            del self.fetching[url]

    def relevance(self, score: float, digest: PageDigest | None) -> tuple[float, float]:
        """A page's label in [0, 1], and its keyword match alone (:meth:`Trainer.relevance`)."""
        return self.trainer.relevance(score, digest)

    def crawled(self, url: str, score: float, hot: bool, digest: PageDigest | None) -> None:
        self.flush()
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
        if self._failing:
            # a fetch that gave no page teaches its label but is no page for the cadence: a
            # crawl among hosts that do not answer would retrain (and re-rank) per few pages
            self.stats["fetch_failures"] += 1
        if self.seeds.due(self.stats["pages"], self.every):
            settle(self)
        if not self._failing and self.answered_pages % self.every == 0:
            self.retrain()
        self.frontier.evict()  # MAX_BUFFER: after a page, links are queued in batches

    @property
    def answered_pages(self) -> int:
        """Fetches that gave a page (failed ones are labelled too, and counted apart)."""
        return self.stats["pages"] - self.stats["fetch_failures"]

    def retrain(self) -> None:
        """Every ``every`` pages that answered: rebuild the profile, replay recent examples,
        re-rank."""
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
    def spilled(self) -> None:
        """Reclaim the spilled links' feature rows by the retrain's rule: a crawl may queue
        many times the limit between two retrains, and each spilled row is garbage until a
        compaction.  Not while links wait to be scored (their slot numbers are held outside
        the entries); a compaction only renumbers, in order."""
        if not self.pending:
            self.compact_if_worth()

    def pack(self, entry: Entry) -> Any:
        return pack_row(self, entry)

    def unpack(self, entry: Entry, data: Any) -> None:
        entry.extra = None if data is None else self.scorer.store.add_row(data)

    def reloaded(self, entries: list[Entry]) -> None:
        rescore_reloaded(self, entries)

    def extra_bytes(self, entry: Entry) -> int:
        return 0 if entry.extra is None else self.scorer.store.row_bytes(entry.extra)

    # -- persistence --------------------------------------------------------------------------
    def snapshot(self, state: dict[str, Any]) -> None:
        state["learned"] = snapshot_learned(self)

    def before_restore(self, state: dict[str, Any]) -> None:
        restore_store(self, state["learned"])

    def after_restore(self, state: dict[str, Any]) -> None:
        restore_learned(self, state["learned"])

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """The parts of ``entry``'s logit under today's model, each rounded to 3 places:
        ``bias``, each dense feature's weight x value (the zero ones left out), ``words``
        (the learned weights of its hashed anchor, URL and context words), ``profile`` (the
        topic profile projected onto those words) and ``explore`` (the UCB bonus); the value
        is ``sigmoid`` of their sum (+1 for a seed).  Read only: it changes no state, so a
        crawl explained orders as one that is not.  Asked at hand-out, before a retrain."""
        return None if entry.extra is None else self.scorer.explain(entry.extra)

    def insight(self, base: dict[str, Any], top: int = 12) -> dict[str, Any]:
        """The frontier's figures and what the order has learnt
        (:func:`.insight.learned_insight`)."""
        return learned_insight(self, base, top)

    def describe(self) -> dict[str, int | float]:
        verdict = self.seeds.examples
        return {"frontier": len(self.frontier), "learned_examples": len(self.trainer.ex_slot),
                "profile_version": self.scorer.profile.version,
                "host_bandit_picks": self.bandit.picks,
                "host_bandit_backlink_picks": self.bandit.backlink_picks,
                **({} if verdict is None else {"seeds_are_examples": int(verdict)})}


def _switch(value: bool | None, default: bool) -> bool:
    """A research switch: None (the setting unset) is its current default."""
    return default if value is None else value
