"""``learned``: a crawl order that learns, from its own fetches, which links lead to the topic.

No Scrapy import.  After the research line that followed the seed papers (Chakrabarti et al.'s
apprentice, Rennie & McCallum's learned link value, ACHE's online link classifier, Pant et al.'s
exploration): a link's priority is the probability that its target is relevant, predicted from
the link's own evidence and what the crawl has learnt so far:

* **features** (``focuscrawl.core.learning.features``): hashed words of the anchor text, the URL and
  the text around the link; the parent's and grandparent's relevance; keyword matches in the
  anchor, URL and context; same host; depth; and, recomputed at every re-rank, the relevance
  seen so far on the link's host and directory and how many pages link to it;
* **prior**: before any label the model is a hand-set logistic function of those features, with
  the topic profile (the keywords) projected onto the anchor, URL and context words, so the first
  pages are ordered like best-first plus Cho's keyword-in-anchor rule;
* **labels**: each fetched page labels the link that led to it with its relevance in [0, 1]:
  its keyword match (SMART ltc with the crawl's IDF, phrases as phrases, in the page's main
  text) over ``keyword_scale``; with ``profile_score`` > 0, also its similarity to the grown
  topic profile over that (whichever is higher); with ``examples`` (the user says the seeds
  are on-topic examples) a seed page is labelled 1 and joins the profile whatever its words,
  and ``profile_score`` defaults to ``EXAMPLES_PROFILE_SCORE``; with ``discount`` > 0 a
  relevant page also raises the labels of its parent and grandparent (a link to a page that
  leads to the topic is worth following: Rennie & McCallum); a failed fetch labels its link 0;
* **the topic profile** grows by Rocchio feedback from the relevant pages (examples among the
  seeds included) and is projected onto the anchor, URL and context words, so a link whose
  text uses the topic's vocabulary, not only the user's words, scores;
* **training**: one AdaGrad step per fetched page on its label (and its ancestors' revised
  ones); every ``learn_every`` pages the profile is rebuilt, the recent examples are replayed
  once, and the frontier is re-scored in a few vectorised numpy operations, then re-queued:
  the whole of it while it holds at most ``rerank_max`` links, past that ``rerank_batch`` of
  them, the best and a window of the rest that moves on at each re-rank (see
  :meth:`Learned.rerank`: bounded work per page however large the frontier grows);
* **siblings** (the slides' distiller and link nearness; by default on with ``examples``,
  off otherwise): a fetched page's label is evidence
  about the other links of the page it was reached from: all of them (the parent's hub
  evidence, log-odds of its fetched children's rate, weighed ``hub`` in the prior) and most of
  all the ``sibling_window`` links on each side of it (a table of contents lists a chapter's
  sections together: ``label x NEAR_DECAY ** (distance - 1)``, weighed ``sibling``); those
  siblings are re-scored at once, not at the next re-rank;
* **exploration**: ``explore`` adds optimism to the logit of a link into a host or directory
  the crawl knows little about: a UCB bonus of ``explore / sqrt(1 + pages fetched there)``,
  half for the host, half for the directory; and ``explore_hosts`` of the URLs handed out are
  chosen by a bandit over hosts (after Anthelion's domain bandit): the host whose best link
  has the highest value plus ``explore / sqrt(1 + pages fetched there)`` gives that link.  A
  per-link bonus cannot pull a crawl out of a large host whose anchors repeat a keyword (a
  reference manual) towards hosts it has links to but no evidence about; the bandit does.

Links are scored in batches: a link found is queued at once but scored, with every link found
since, when the next URL is chosen (one vectorised call per page instead of one per link).
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from ..fingerprints import FingerprintMap, fingerprint
from ..learning import (
    DENSE,
    AreaStats,
    FeatureStore,
    LinkFeaturizer,
    LinkModel,
    PageDigest,
    TopicProfile,
    directory_of,
    sigmoid,
)
from ..memory import trim_heap
from ..urls import host
from .queues import Entry, Key
from .strategies import Frontier, Link, Ready

# prior weights of the dense columns: parent, grandparent, keyword in anchor / URL / context,
# same host, in the parent's chrome, log(1 + depth), a seed; then the dynamic ones: host evidence,
# directory evidence, log(in-links), the parent's hub evidence (``hub``), link nearness
# (``sibling``)
DENSE_PRIOR = (3.0, 1.0, 2.0, 1.5, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.3, 1.0, 2.0)
PRIOR_BIAS = -3.0
# how strongly the topic profile's terms count in the anchor, URL and context words
PROFILE_SCALES = {"a": 4.0, "u": 3.0, "c": 2.0}
_SEED = DENSE.index("seed")
_DYNAMIC = 5  # host, directory, parent evidence, log(in-links), sibling: at scoring time
assert len(DENSE_PRIOR) == len(DENSE) + _DYNAMIC
# the names :meth:`Learned.explain` gives the dense columns' parts (the dynamic ones in the
# order :meth:`Learned._dynamic` stacks them)
_PART_NAMES = (*DENSE, "host", "directory", "inlinks", "hub", "nearness")
assert len(_PART_NAMES) == len(DENSE_PRIOR)
# with examples among the seeds: a page this similar to the profile they grow is a full label
# (docweb, 6 topics, from the examples, 500 pages: 307 relevant vs 296 with keyword labels)
EXAMPLES_PROFILE_SCORE = 0.3
# ... and link nearness and hub evidence are on: 317 vs 307 at 500 pages, 190 vs 161 at 100
# (from the neighbours, without examples, they did not help: 192 vs 194, 92 vs 109 at 250)
EXAMPLES_SIBLING_WINDOW = 4
EXAMPLES_HUB = 1.0
# without examples, half of the URLs handed out are the host bandit's: docweb from the
# neighbours, 500 pages, leaving a seed out (30 crawls), 1,215 relevant vs 962 at a tenth
# (ahead in 20 crawls, behind in 6), once a fetch that gives no page (a host off the web)
# no longer used the page budget; from the examples it found 310 vs 317 at a tenth (the
# examples say where the topic is), so with them it stays off.  Leaving out of the bandit a
# host never fetched from until two fetched pages link to it (most hosts linked from one page
# only are off docweb) lost early harvest: the same 30 crawls found 106 / 1,231 at 100 / 500
# instead of 174 / 1,286; bench/throughput.py made 2,795 downloads instead of 4,032 and was no
# faster (0.65x best-first's pages/s both ways): its pages were larger, with more new links
EXPLORE_HOSTS = 0.5
# the exploration bonus: twice as much without examples, where the crawl must find the topic
# before it can follow it (docweb from the neighbours, 500 pages, 30 crawls each leaving a
# seed out: 935 relevant vs 882, 600 vs 505 at 250, better in 12, worse in 5); with examples
# 1.0 (2.0 found 328 vs 325 at 500 but 175 vs 190 at 100); the host bandit's index uses the
# same constant (the same 30 crawls: 1,286 relevant at 500; half of it in the index 1,079,
# twice 1,285, and 592 -> 558 at 250)
EXPLORE = 2.0
EXAMPLES_EXPLORE = 1.0


def examples_defaults(examples: bool) -> dict[str, float]:
    """The options whose default depends on whether the seeds are examples (used for the
    ones left None, here and by the Scrapy options that a JOBDIR compares)."""
    if examples:
        return {"profile_score": EXAMPLES_PROFILE_SCORE, "sibling_window": EXAMPLES_SIBLING_WINDOW,
                "hub": EXAMPLES_HUB, "explore_hosts": 0.0, "explore": EXAMPLES_EXPLORE}
    return {"profile_score": 0.0, "sibling_window": 0, "hub": 0.0,
            "explore_hosts": EXPLORE_HOSTS, "explore": EXPLORE}
# link nearness: a sibling k places away gets the page's label x NEAR_DECAY ** (k - 1)
NEAR_DECAY = 0.7
_MAX_FETCHING = 10_000  # URLs handed out and not yet reported (a page per request in flight)
# FOCUS_LEARN_RERANK's default: the frontier is re-ranked whole up to this many queued links.
# A docweb crawl's (up to ~50,000 links) stays under it, so its order is as it always was
RERANK_MAX = 65_536
# FOCUS_LEARN_RERANK_BATCH's default: links a re-rank re-scores past that.  A re-scored link
# costs ~9 us there (its features, a heap push, its share of dropping stale heap items; 590 ms
# for 65,536 of a 100,000-link frontier), so 4,096 is ~1.5 ms a page at 25 pages a retrain;
# bench/scale.py fetches a page in ~23 ms of CPU at the start of its crawl
RERANK_BATCH = 4096


class QueuedSlots:
    """Per feature-store slot, numpy arrays of the queued link that owns it: the entry, its
    score and whether it is queued.  The bounded re-rank chooses the links to re-score with
    numpy over these (no Python loop over the frontier) and gets back to their entries by slot.

    Slot order is the store's, which a snapshot keeps and a compaction keeps (it renumbers,
    in order): the choice never depends on a dict's order, which a restore could change.
    """

    def __init__(self, size: int = 256) -> None:
        self.owner, self.score, self.live = self._arrays(size)
        self.cursor = 0  # the rotating window's next slot

    @staticmethod
    def _arrays(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.empty(size, dtype=object), np.zeros(size), np.zeros(size, dtype=bool)

    def _grow(self, slot: int) -> None:
        owner, score, live = self._arrays(max(slot + 1, len(self.live) + len(self.live) // 2))
        n = len(self.live)
        owner[:n], score[:n], live[:n] = self.owner, self.score, self.live
        self.owner, self.score, self.live = owner, score, live

    def set(self, slot: int, entry: Entry, score: float) -> None:
        """``entry`` is queued in ``slot`` with ``score``."""
        if slot >= len(self.live):
            self._grow(slot)
        self.owner[slot] = entry
        self.score[slot] = score
        self.live[slot] = True

    def clear(self, slot: int | None) -> None:
        """``slot``'s link left the queue (handed out, spilled, evicted or moved)."""
        if slot is not None and slot < len(self.live):
            self.owner[slot] = None  # no reference kept to an entry handed out
            self.live[slot] = False

    def remap(self, old: np.ndarray, rows: int) -> None:
        """The store compacted: live slot ``old[i]`` is now slot ``i``; the window goes on
        from the same link."""
        owner, score, live = self._arrays(max(256, rows + rows // 4))
        keep = old[old < len(self.live)]  # a prefix: slots past the arrays were never queued
        owner[:len(keep)] = self.owner[keep]
        score[:len(keep)] = self.score[keep]
        live[:len(keep)] = self.live[keep]
        self.cursor = int(np.searchsorted(old, self.cursor))
        self.owner, self.score, self.live = owner, score, live

    def choose(self, rows: int, best: int, window: int) -> np.ndarray:
        """The queued slots to re-score, ascending: the ``best`` highest scores (ties to the
        lower slot) and the next ``window`` other queued slots from the cursor on, wrapping
        round; the cursor moves past them."""
        n = min(rows, len(self.live))  # slots past the arrays were never queued
        live = self.live[:n]
        scores = np.where(live, self.score[:n], -np.inf)
        if best >= np.count_nonzero(live):
            top = np.flatnonzero(live)
        elif best > 0:
            kth = np.partition(scores, n - best)[n - best]
            above = np.flatnonzero(scores > kth)
            ties = np.flatnonzero(scores == kth)[:best - len(above)]
            top = np.concatenate([above, ties])
        else:
            top = np.zeros(0, dtype=np.int64)
        others = live.copy()
        others[top] = False
        cursor = min(self.cursor, n)
        ahead = np.flatnonzero(others[cursor:])[:window] + cursor
        if len(ahead) < window:
            ahead = np.concatenate([ahead,
                                    np.flatnonzero(others[:cursor])[:window - len(ahead)]])
        if len(ahead):
            self.cursor = int(ahead[-1]) + 1
        return np.sort(np.concatenate([top, ahead]))


class HostTops:
    """The host bandit's index: per host, its best queued link as a heap item
    ``(-(value + bonus), seq, host, entry)``, so that a bandit turn looks at the few best
    hosts, not at every host with queued links (O(hosts) a turn: 20,000 hosts on a long
    crawl of bench/scale.py).

    Lazy: a host's item (the one in ``filed``) is never better than its true key, because
    every way a host's key can rise is reported (a new best link: :meth:`ServerQueues.risen`;
    a host that answered at last: :meth:`Learned._learn`) and filed again at once or at the
    next turn; a key that fell (the best taken or re-scored lower, more pages fetched there)
    is found when its item comes out on top and is filed again.
    """

    __slots__ = ("heap", "filed", "shut")

    def __init__(self) -> None:
        self.heap: list[tuple] = []
        self.filed: dict[str, tuple] = {}  # host -> its current heap item
        self.shut: dict[int, str] = {}  # host id -> host, left out as never reached

    def file(self, bucket: str, item: tuple | None) -> None:
        """``bucket``'s item is now ``item`` (None: the host has no link to offer)."""
        if item is None:
            self.filed.pop(bucket, None)
            return
        old = self.filed.get(bucket)
        if old is not None and old[3] is item[3] and old[:2] == item[:2]:
            return  # unchanged: no duplicate item
        self.filed[bucket] = item
        heapq.heappush(self.heap, item)

    def reset(self, items: list[tuple]) -> None:
        self.filed = {item[2]: item for item in items}
        self.heap = items
        heapq.heapify(items)

    def compact(self) -> None:
        """Drop the superseded items once they outnumber the current ones."""
        if len(self.heap) > 2 * len(self.filed) + 1024:
            self.reset(list(self.filed.values()))


class Learned(Frontier):
    """Best-first over learned link values (see the module docstring)."""

    name = "learned"
    learns = True
    # live docweb crawls (bench/live_focus.py, 250 pages, 6 topics x 2 tasks): 0.5 found
    # 16-38% (from examples) and 6-7% (from neighbours) more relevant pages than 1.0 in the
    # same number of pages, about as many as the sequential order; 0.2 found no more
    default_slack = 0.5

    def __init__(
        self,
        *,
        keywords: Any = (),
        relevant_score: float = 0.1,
        learn_every: int = 25,
        explore: float | None = None,
        discount: float = 0.5,
        profile_score: float | None = None,
        keyword_scale: float = 0.02,
        explore_split: float = 0.5,
        explore_hosts: float | None = None,
        bits: int = 18,
        memory: int = 5000,
        sibling: float = 2.0,
        sibling_window: int | None = None,
        hub: float | None = None,
        examples: bool = False,
        rerank_max: int = RERANK_MAX,
        rerank_batch: int = RERANK_BATCH,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        if not keywords:
            raise ValueError("the learned strategy needs the topic's keywords")
        self.relevant_score = relevant_score
        self.every = max(1, learn_every)
        self.rerank_max = max(0, rerank_max)  # 0: every re-rank re-scores the whole frontier
        self.rerank_batch = max(1, rerank_batch)
        self.discount = discount
        self.examples = examples  # the seeds are on-topic examples given by the user
        # from examples: a profile grown from them labels pages too, and nearness to known
        # relevant pages counts; without, both stay off
        defaults = examples_defaults(examples)
        self.explore = defaults["explore"] if explore is None else explore
        profile_score = defaults["profile_score"] if profile_score is None else profile_score
        sibling_window = int(defaults["sibling_window"] if sibling_window is None
                             else sibling_window)
        hub = defaults["hub"] if hub is None else hub
        self.profile_score = profile_score
        self.keyword_scale = keyword_scale
        self.explore_split = explore_split
        if explore_hosts is None:
            explore_hosts = defaults["explore_hosts"]
        self.explore_hosts = min(1.0, max(0.0, explore_hosts))
        self.memory = max(100, memory)
        self.profile = TopicProfile(keywords)
        self.featurizer = LinkFeaturizer(self.profile.topic.phrases, bits)
        self.store = FeatureStore(bits=bits)
        prior = list(DENSE_PRIOR)
        prior[-2], prior[-1] = hub, sibling
        self.window = max(0, sibling_window)
        # a link to a URL queued may be counted unbuilt (only_counts), decided once: the
        # scheduler registers the counting answer for the spider only if it can count
        self.counts_inlinks = not self.max_buffer and not self.window
        self.hub = hub  # 0: the column stays 0, so the order is exactly as without it
        self.model = LinkModel(self.featurizer.dim, prior, bias=PRIOR_BIAS)
        self.hosts = AreaStats()
        self.dirs = AreaStats()
        self.hubs = AreaStats()  # per parent page: how relevant its fetched children were
        #                          (only with ``hub``: otherwise every link's area is 0)
        # page (fingerprint) -> its links' URLs, in page order: the last ``memory`` pages
        self.children: dict[int, list[str]] = {}
        # per page fetched, for the whole crawl: by fingerprint, no URL string kept
        self.labels = FingerprintMap("d")  # fetched page -> its relevance label
        self.parents = FingerprintMap("Q")  # page handed out -> the page it was reached from
        self._pending: list[tuple[Entry, int]] = []  # links found, not scored yet
        self._queued = QueuedSlots()  # slot -> queued entry, score (the bounded re-rank's)
        self._fetching: dict[str, int] = {}  # URL handed out -> its example's slot
        # training examples: slot, label, dynamic features at hand-out time
        self._ex_slot: list[int] = []
        self._ex_label: list[float] = []
        self._ex_dyn: list[tuple[float, ...]] = []
        self._ex_of: dict[int, int] = {}  # fetched page (fingerprint) -> its example number
        self._ex_base = 0  # example number of _ex_slot[0]
        self._extra = self.featurizer.project(self.profile.weights, PROFILE_SCALES)
        self._digest: PageDigest | None = None
        self._failing = False
        # host id -> whether a fetch there gave a page (the host bandit skips the False ones:
        # a host that never answered is not worth exploring)
        self._reached: dict[int, bool] = {}
        self.bandit_picks = 0  # for the log only: a replayed journal does not count them
        self._tops = HostTops()
        if self.explore_hosts > 0.0 and not self.round_robin:
            self.queues.watch()

    # -- queueing ---------------------------------------------------------------------------
    def key(self, entry: Entry) -> Key:
        return (-entry.score, entry.seq)

    def add(self, link: Link) -> bool:
        if link.parent is not None and self.window:
            self._child(link.parent, link.url)
        known = self._known(link)
        if known is not None:
            return known
        entry = Entry(
            link.url, link.host, self._next_seq(), score=0.0, keyword=link.keyword,
            depth=link.depth, parent=link.parent, anchor=link.anchor, payload=link.payload,
        )
        entry.extra = self._featurize(link)
        self.entries[link.url] = entry
        self.stats["queued"] += 1
        self._pending.append((entry, -1))
        return True

    def may_ignore(self) -> bool:
        """A link to a URL handed out, as the other orders (one to a URL queued counts as an
        in-link), unless link nearness is on: it keeps every link's place among its parent's
        links, those to pages fetched included."""
        return not self.window and super().may_ignore()

    def improve(self, entry: Entry, link: Link) -> bool:
        """Another link to a queued URL: one more in-link; its evidence may be better."""
        slot = entry.extra
        if slot is None or not entry.queued and not self._is_pending(entry):
            return False
        store = self.store
        store.inlinks[slot] += 1.0
        if self._parent_relevance(link) <= store.dense_value(slot, 0):
            return False  # evidence from a parent no more relevant: the first link stands
        self._pending.append((entry, self._featurize(link)))
        return True

    def only_counts(self, url: str, parent: str, parent_score: float) -> bool:
        """:meth:`improve`'s first case, asked before the link is built: a link to a URL
        queued (or waiting to be scored) from a parent no more relevant than its first one.
        Most of a crawl's outlinks that are not to pages fetched are such links (on docweb
        11 of 16 a page), and a Request each through the spider middlewares and the scheduler
        cost more than the rest of the order's work.  Not with MAX_BUFFER (an eviction before
        the link arrived would make it a new URL) or link nearness (it keeps every link's
        place among its parent's).  The link filters are not asked again: a URL they let
        through once gets the in-link even if, say, its host's robots.txt came since (the
        URL is refused when it is handed out)."""
        if not self.counts_inlinks:
            return False
        entry = self.entries.get(url)
        return (entry is not None and entry.extra is not None
                and self._relevance_of(parent, parent_score)
                <= self.store.dense_value(entry.extra, 0))

    def count_inlink(self, url: str) -> None:
        self.stats["duplicates"] += 1
        self.store.inlinks[self.entries[url].extra] += 1.0

    def _child(self, parent: str, url: str) -> None:
        """Remember the link's place among its parent's links (for link nearness), for the
        ``memory`` most recent parents only: memory stays bounded on a long crawl."""
        key = fingerprint(parent)
        children = self.children.get(key)
        if children is None:
            children = self.children[key] = []
            if len(self.children) > self.memory:
                del self.children[next(iter(self.children))]
        children.append(url)

    def _is_pending(self, entry: Entry) -> bool:
        return not entry.queued and entry.url in self.entries

    def _parent_relevance(self, link: Link) -> float:
        if link.parent is None:
            return 1.0  # a seed: the user's own choice
        return self._relevance_of(link.parent, link.parent_score)

    def _relevance_of(self, page: str, score: float) -> float:
        """A fetched page's label; its score over the threshold if it has none."""
        label = self.labels.get(page)
        if label is None:
            label = min(1.0, score / self.relevant_score)
        return label

    def _featurize(self, link: Link) -> int:
        parent = link.parent
        grandparent = self.parents.get(parent) if parent is not None else None  # a fingerprint
        cols, vals, dense = self.featurizer.link(
            link.url, link.host, anchor=link.anchor, context=str(link.context),
            parent_host=self._host_of(parent), seed=parent is None, chrome=link.chrome,
            parent=self._parent_relevance(link),
            grandparent=self.labels.get_fp(grandparent, 0.0) if grandparent else 0.0,
            depth=link.depth,
        )
        # a parent page is an area of its own only where its hub evidence is weighed: one
        # per page fetched, ~50 bytes a page on a long crawl
        hub = self.hubs.id(parent or "") if self.hub else 0
        return self.store.add(cols, vals, dense, self.hosts.id(link.host),
                              self.dirs.id(directory_of(link.url)), hub)

    def _host_of(self, url: str | None) -> str | None:
        return None if url is None else host(url)

    def flush(self) -> None:
        """Score every link found since the last call and queue it (or let it improve).

        Called before every choice (pop, take), before learning from a page, and before a
        re-rank.  It changes the state (link scores), so a crash-safe caller journals a
        pop that returned nothing but flushed (``stats["flushes"]`` moved) and replays it.
        """
        pending = self._pending
        if not pending:
            return
        self.stats["flushes"] += 1
        self._pending = []
        slots = np.array([entry.extra if new < 0 else new for entry, new in pending],
                         dtype=np.int64)
        values = self._values(slots).tolist()
        for (entry, new), value in zip(pending, values, strict=True):
            if new < 0:
                if entry.url in self.entries and not entry.queued:
                    entry.score = value
                    self.queues.push(entry, self.key(entry))
                    self._queued.set(entry.extra, entry, value)
                    if self.max_buffer:
                        heapq.heappush(self._worst, (entry.score, -entry.seq, entry))
            elif entry.queued and value > entry.score:
                self._queued.clear(entry.extra)
                self.store.free(entry.extra)
                self.store.inlinks[new] = self.store.inlinks[entry.extra]
                self.store.near[new] = self.store.near[entry.extra]
                entry.extra = new
                self._rescore(entry, value)
                self.stats["improved"] += 1
            else:
                self.store.free(new)

    def _dynamic(self, slots: np.ndarray) -> np.ndarray:
        areas = self.store.areas(slots)
        return np.column_stack([
            self.hosts.evidence(areas[:, 0]),
            self.dirs.evidence(areas[:, 1]),
            np.log(np.maximum(self.store.inlinks[slots], 1.0)),
            self.hubs.evidence(areas[:, 2]) if self.hub else np.zeros(len(slots)),
            self.store.near[slots].astype(np.float64),
        ])

    def _bonus(self, slots: np.ndarray) -> np.ndarray:
        """The exploration bonus on the links' logits: ``explore`` x the UCB uncertainty of
        their host and directory, shared ``explore_split`` / the rest."""
        areas = self.store.areas(slots)
        return self.explore * (self.explore_split * self.hosts.uncertainty(areas[:, 0])
                               + (1 - self.explore_split) * self.dirs.uncertainty(areas[:, 1]))

    def _dense(self, slots: np.ndarray, dynamic: np.ndarray) -> np.ndarray:
        """The links' dense columns: the stored ones, then the dynamic ones (DENSE_PRIOR's)."""
        return np.hstack([self.store.dense(slots), dynamic])

    def _logits(self, slots: np.ndarray, dynamic: np.ndarray) -> np.ndarray:
        dense = self._dense(slots, dynamic)
        hashed = self.store.dot(slots, self.model.w, self._extra)
        return self.model.logits(hashed, dense)

    def _values(self, slots: np.ndarray) -> np.ndarray:
        """Priorities: P(relevant) with an exploration bonus on the logit; seeds first."""
        z = self._logits(slots, self._dynamic(slots))
        if self.explore:
            z = z + self._bonus(slots)
        values = sigmoid(z)
        seeds = self.store.dense(slots)[:, _SEED] > 0.0
        if seeds.any():
            values[seeds] += 1.0  # the user's own start pages come before any link
        return values

    # -- handing out ------------------------------------------------------------------------
    def value(self, entry: Entry) -> float | None:
        return entry.score

    def pop(self, ready: Ready = None, slack: float | None = None,
            held: Ready = None) -> Entry | None:
        self.flush()
        if self._explore_turn():
            self.balance()
            entry = self._explore_host(ready)
            if entry is not None:
                return entry
        return super().pop(ready, slack, held)

    def _explore_turn(self) -> bool:
        """Whether the next URL handed out is the host bandit's: ``explore_hosts`` of them,
        spread evenly.  A function of the count handed out alone (a journal replays hand-outs
        by URL, not by asking again, and must reach the same state); a URL put back after a
        stop with it in flight is not counted, so a resumed crawl takes the same turns."""
        share = self.explore_hosts
        if share <= 0.0 or self.round_robin:
            return False
        n = self.stats["popped"] - self.stats["requeued"]
        return int((n + 1) * share) > int(n * share)

    def _explore_host(self, ready: Ready) -> Entry | None:
        """The best link of the host with the highest value + ``explore / sqrt(1 + n)``
        among the ready hosts (n: pages fetched there); None if there is no choice to make
        (fewer than two hosts with links, never-reached hosts left out)."""
        entry = self._bandit_choice(ready)
        if entry is not None:
            self.queues.take(entry)
            self._hand_out(entry)
            self.bandit_picks += 1
        return entry

    def _bandit_item(self, bucket: str) -> tuple | None:
        """``bucket``'s item for :class:`HostTops`, or None: no queued link, or never reached
        (remembered in ``shut``, to be filed again when it answers)."""
        top = self.queues.top_of(bucket)
        if top is None:
            return None
        i = self.hosts.id(top.host)
        if not self._reached.get(i, True):
            self._tops.shut[i] = bucket
            return None
        index = top.score + self.explore * float(self.hosts.uncertainty(i))
        # ties go to the link found first: the order of the hosts' queues is not state (a
        # host's queue comes back at the end when a URL in flight at a stop is put back)
        return (-index, top.seq, bucket, top)

    def _bandit_choice(self, ready: Ready) -> Entry | None:
        """The host bandit's link (nothing moves but its index): pops the index's items best
        first, files again the stale ones, until two current ones are found and one whose
        host is ready; puts the current ones back."""
        tops = self._tops
        everything, risen = self.queues.risen()
        if everything:
            tops.shut = {}
            tops.reset([item for item in map(self._bandit_item, self.queues.buckets())
                        if item is not None])
        else:
            for bucket in risen:
                tops.file(bucket, self._bandit_item(bucket))
            tops.compact()
        heap, filed = tops.heap, tops.filed
        kept: list[tuple] = []
        asked = 0
        chosen: Entry | None = None
        while heap and (chosen is None or len(kept) < 2):
            item = heapq.heappop(heap)
            bucket = item[2]
            if filed.get(bucket) is not item:
                continue  # superseded
            fresh = self._bandit_item(bucket)
            if fresh is None:
                del filed[bucket]
                continue
            if fresh[3] is not item[3] or fresh[:2] != item[:2]:
                filed[bucket] = fresh  # its key fell: back in its place
                heapq.heappush(heap, fresh)
                continue
            kept.append(item)
            if len(kept) < 2:
                continue  # no choice to make with one host: ready() is not asked
            while chosen is None and asked < len(kept):
                entry = kept[asked][3]
                asked += 1
                if ready is None or ready(entry.host):
                    chosen = entry
        for item in kept:
            heapq.heappush(heap, item)
        return chosen if len(kept) >= 2 else None

    def take(self, url: str) -> Entry | None:
        self.flush()
        return super().take(url)

    def requeue(self, entry: Entry) -> None:
        self.flush()
        slot = self._fetching.pop(entry.url, None)
        if slot is not None:
            entry.extra = slot  # a compaction since it was handed out renumbered its row
        super().requeue(entry)
        if entry.queued and entry.extra is not None:
            self._queued.set(entry.extra, entry, entry.score)

    def _rescore(self, entry: Entry, score: float) -> None:
        super()._rescore(entry, score)
        if entry.queued and entry.extra is not None:
            self._queued.set(entry.extra, entry, score)

    def _hand_out(self, entry: Entry) -> None:
        super()._hand_out(entry)
        slot = entry.extra
        self._queued.clear(slot)
        if slot is not None:
            self._fetching[entry.url] = slot
            if len(self._fetching) > _MAX_FETCHING:  # pages that never reported back
                self.store.free(self._fetching.pop(next(iter(self._fetching))))
        if entry.parent is not None:
            self.parents[entry.url] = fingerprint(entry.parent)

    # -- learning ---------------------------------------------------------------------------
    def crawled(self, url: str, score: float, hot: bool, digest: PageDigest | None = None
                ) -> None:
        self._digest = digest
        # a URL with a score is known, unless it failed, was queued again (a retry) and is
        # being fetched again: then its page's label follows the error's 0, as any page's would
        if url in self.scores and (self._failing or url not in self._fetching):
            return
        self._record(url, score, hot)

    def failed(self, url: str, learn: bool = True) -> None:
        """A URL handed out gave no page: an error teaches a negative label for its link; a
        redirect teaches nothing (its target is a link of its own)."""
        if url in self.scores or url not in self._fetching:
            return
        if learn:
            self._failing = True
            try:
                self.crawled(url, 0.0, False, None)
            finally:
                self._failing = False
        else:
            del self._fetching[url]

    def relevance(self, score: float, digest: PageDigest | None) -> tuple[float, float]:
        """A page's label in [0, 1], and its keyword match alone (unclipped).

        The keyword match is SMART ltc over the crawl's IDF (``TopicProfile.keyword_cosine``)
        over ``keyword_scale``, or the spider's plain cosine over ``relevant_score`` when
        there is no digest; with ``profile_score`` the similarity to the grown profile may
        raise the label.
        """
        if digest is None:
            by_keywords = score / self.relevant_score if self.relevant_score else 0.0
            return min(1.0, by_keywords), by_keywords
        by_keywords = self.profile.keyword_cosine(digest) / self.keyword_scale
        label = min(1.0, by_keywords)
        if self.profile_score > 0 and self.profile.version > 0:
            label = max(label, min(1.0, self.profile.similarity(digest) / self.profile_score))
        return label, by_keywords

    def on_crawled(self, url: str, score: float, hot: bool) -> None:
        self.flush()
        digest, self._digest = self._digest, None
        label, by_keywords = self.relevance(score, digest)
        slot = self._fetching.pop(url, None)
        example = self.examples and slot is not None and self.store.dense_value(
            slot, _SEED) > 0.0
        if example:
            label = by_keywords = 1.0  # the user says so: an example of the topic
        self.labels[url] = label
        self.profile.observe(digest)
        if digest is not None and by_keywords >= 1.0:
            self.profile.feedback(digest, 1.0)  # a relevant page by the user's own words
        if slot is not None:
            self._learn(url, slot, label)
        if self.stats["pages"] % self.every == 0:
            self._retrain()
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
            self._queued.clear(victim.extra)
            self.store.free(victim.extra)
            self.stats["evicted"] += 1

    def _learn(self, url: str, slot: int, label: float) -> None:
        areas = self.store.areas(np.array([slot]))[0]
        dyn = self._dynamic(np.array([slot]))[0]
        host_id = int(areas[0])
        self.hosts.add(host_id, label)
        if not self._failing:
            was = self._reached.get(host_id)
            self._reached[host_id] = True
            if was is False and (shut := self._tops.shut.pop(host_id, None)) is not None:
                self._tops.file(shut, self._bandit_item(shut))  # answered at last: back in
        else:
            self._reached.setdefault(host_id, False)
        self.dirs.add(int(areas[1]), label)
        self._ex_of[fingerprint(url)] = self._ex_base + len(self._ex_slot)
        self._ex_slot.append(slot)
        self._ex_label.append(label)
        self._ex_dyn.append(tuple(float(x) for x in dyn))
        batch = [len(self._ex_slot) - 1]
        if self.discount > 0 and label > 0:
            # the pages that led here were worth fetching too (discounted)
            reward = label
            node = self.parents.get(url)
            for _ in range(2):
                reward *= self.discount
                if node is None:
                    break
                i = self._ex_of.get(node, -1) - self._ex_base
                if 0 <= i < len(self._ex_label) and self._ex_label[i] < reward:
                    self._ex_label[i] = reward
                    batch.append(i)
                node = self.parents.get_fp(node)
        self._train(batch)
        self._siblings(url, int(areas[2]), label)
        if len(self._ex_slot) > self.memory:
            self._forget(len(self._ex_slot) - self.memory)

    def _siblings(self, url: str, parent_id: int, label: float) -> None:
        """A page's label is evidence about its parent's other links (Chakrabarti's hubs) and
        most of all about the links next to it on the parent (the slides' link nearness: a
        table of contents lists a chapter's sections together); re-score them now."""
        if self.hub:
            self.hubs.add(parent_id, label)
        parent = self.parents.get(url)
        children = self.children.get(parent) if parent is not None else None
        if not children:
            return
        near = self.store.near
        try:
            pos = children.index(url)
        except ValueError:
            pos = -1
        if pos >= 0 and label > 0:
            for j in range(max(0, pos - self.window), min(len(children), pos + self.window + 1)):
                entry = self.entries.get(children[j])
                if entry is None or entry.extra is None or j == pos:
                    continue
                value = label * NEAR_DECAY ** (abs(j - pos) - 1)
                if value > near[entry.extra]:
                    near[entry.extra] = value
        live = [e for e in map(self.entries.get, dict.fromkeys(children))
                if e is not None and e.queued and e.extra is not None]
        if live:
            slots = np.fromiter((e.extra for e in live), dtype=np.int64, count=len(live))
            for entry, value in zip(live, self._values(slots).tolist(), strict=True):
                self._rescore(entry, value)

    def _train(self, batch: list[int]) -> None:
        index = np.array(batch, dtype=np.int64)
        slots = np.array([self._ex_slot[i] for i in batch], dtype=np.int64)
        cols, vals, rows = self.store.gather(slots)
        dense = self._dense(slots, np.array([self._ex_dyn[i] for i in batch], dtype=np.float64))
        extra = np.bincount(rows, weights=self._extra[cols] * vals, minlength=len(batch))
        labels = np.array([self._ex_label[i] for i in index], dtype=np.float64)
        self.model.update(cols, vals, rows, dense, extra, labels)

    def _forget(self, n: int) -> None:
        for slot in self._ex_slot[:n]:
            self.store.free(slot)
        del self._ex_slot[:n], self._ex_label[:n], self._ex_dyn[:n]
        self._ex_base += n
        if len(self._ex_of) > 2 * self.memory:
            # a forgotten example's number is looked up as a miss anyway: drop them (numbers
            # rise in insertion order), so this map stays the size of the memory, not the crawl
            base = self._ex_base
            self._ex_of = {u: i for u, i in self._ex_of.items() if i >= base}

    def _retrain(self) -> None:
        """Every ``every`` pages: rebuild the profile, replay recent examples, re-rank."""
        if self.profile.rebuild():
            self._extra = self.featurizer.project(self.profile.weights, PROFILE_SCALES)
        recent = list(range(max(0, len(self._ex_slot) - 4 * self.every), len(self._ex_slot)))
        for start in range(0, len(recent), 32):
            self._train(recent[start:start + 32])
        if self._compact_if_worth():
            trim_heap()  # the arrays' old copies (a spill's compaction: balance() trims)
        self.rerank()
        self.stats["retrains"] += 1

    def rerank(self) -> None:
        """Re-score the queued links with today's model (vectorised) and re-queue them.

        All of them while there are at most ``rerank_max`` (or ``rerank_max`` is 0): the
        queue is rebuilt, O(frontier) Python work, the order as it always was.  Past that,
        ``rerank_batch`` of them, so that the work per page does not grow with the frontier:
        the best quarter of the batch (what is handed out next: a link the new model likes
        less drops back before it is fetched) and the rest of it from the other queued links
        in slot order, from a cursor that moves on each time (every link is re-scored in turn,
        once in frontier / window re-ranks), each re-keyed in its heap.  Links found since the
        last re-rank were scored by a model at most ``learn_every`` pages old.  (On the hidden
        webs of tests/test_learned.py a quarter for the best did as well as a tenth and better
        than a half or more.)
        """
        self.flush()
        if not len(self.queues):
            return
        bound = self.rerank_max
        if bound and len(self.queues) > bound:
            batch = min(self.rerank_batch, bound)
            self._rerank_some(batch // 4, batch - batch // 4)
            return
        # the queued links from the slot index, not a scan of the entries (the order they
        # come in does not matter: keys are unique)
        index = self._queued
        slots = np.flatnonzero(index.live)
        live = index.owner[slots].tolist()
        values = self._values(slots)
        self._queued.score[slots] = values
        # keyed as :meth:`key` keys them, heap items made only for each server's best few
        self.queues.rebuild_ranked(live, values)
        if self.max_buffer:
            self._worst = [(e.score, -e.seq, e) for e in live]
            heapq.heapify(self._worst)

    def _rerank_some(self, best: int, window: int) -> None:
        """Re-score and re-key the ``best`` highest-valued queued links and ``window`` more
        from the cursor on (see :meth:`rerank`); O(best + window) Python work."""
        index = self._queued
        slots = index.choose(self.store.rows, best, window)
        entries = index.owner[slots].tolist()
        values = self._values(slots)
        index.score[slots] = values
        push, key = self.queues.push, self.key
        worst = self._worst if self.max_buffer else None
        for slot, entry, value in zip(slots.tolist(), entries, values.tolist(), strict=True):
            if entry is None or not entry.queued or entry.extra != slot:
                index.clear(slot)  # cannot happen: every path off the queue clears its slot
                continue
            if value == entry.score:
                continue
            entry.score = value
            push(entry, key(entry))
            if worst is not None:
                heapq.heappush(worst, (value, -entry.seq, entry))
        if worst is not None and len(worst) > 2 * len(self.entries) + 1024:
            # stale eviction items, as the queues drop their stale heap items
            self._worst = [item for item in worst
                           if item[2].queued and item[2].score == item[0]]
            heapq.heapify(self._worst)
        self.stats["partial_reranks"] += 1

    def _compact_if_worth(self) -> bool:
        """Compact once freed rows may outnumber half the live ones (amortised O(1) a row);
        whether it did."""
        if self.store.garbage > max(4096, self.store.live // 2):
            self._compact()
            return True
        return False

    def _compact(self) -> None:
        mapping = self.store.compact()
        self._queued.remap(np.fromiter(mapping, dtype=np.int64, count=len(mapping)),
                           len(mapping))
        for entry in self.entries.values():
            if entry.extra is not None:
                entry.extra = mapping[entry.extra]
        self._ex_slot = [mapping[s] for s in self._ex_slot]
        self._fetching = {u: mapping[s] for u, s in self._fetching.items()}
        self.stats["compactions"] += 1

    # -- spilling (FOCUS_FRONTIER_MEMORY) -----------------------------------------------------
    def _spill(self) -> None:
        """Spill, then reclaim the spilled links' feature rows by the retrain's rule: a crawl
        may queue many times the limit between two retrains, and each spilled row is
        garbage (~180 bytes) until a compaction.  Not while links wait to be scored (their
        slot numbers are held outside the entries); a compaction only renumbers, in order."""
        super()._spill()
        if not self._pending:
            self._compact_if_worth()

    def pack_extra(self, entry: Entry) -> Any:
        """A spilled link keeps its feature row, not its text: exact (featurising again would
        see newer parent labels), smaller (306 B pickled against 370 B for the text with ~240
        characters of context) and 14x quicker to queue again (5 us against 75 us per link;
        measured on 20,000 synthetic links).  Its slot is freed for the next compaction."""
        slot = entry.extra
        if slot is None:
            return None
        row = self.store.row(slot)
        self._queued.clear(slot)
        self.store.free(slot)
        return row

    def unpack_extra(self, entry: Entry, data: Any) -> None:
        entry.extra = None if data is None else self.store.add_row(data)

    def after_reload(self, entries: list[Entry]) -> None:
        """A batch back from disk is scored by today's model, not its frozen value."""
        live = [e for e in entries if e.extra is not None]
        if live:
            slots = np.fromiter((e.extra for e in live), dtype=np.int64, count=len(live))
            for entry, value in zip(live, self._values(slots).tolist(), strict=True):
                entry.score = value
                self._queued.set(entry.extra, entry, value)  # queued right after this

    def extra_bytes(self, entry: Entry) -> int:
        return 0 if entry.extra is None else self.store.row_bytes(entry.extra)

    # -- persistence --------------------------------------------------------------------------
    def snapshot(self) -> dict:
        # links not scored yet stay pending (no flush here: a snapshot must not change the
        # state, or a crawl with JOBDIR would order differently from one without)
        state = super().snapshot()
        state["learned"] = {
            "store": self.store.snapshot(),
            "model": self.model.snapshot(),
            "profile": self.profile.snapshot(),
            "hosts": self.hosts.snapshot(),
            "dirs": self.dirs.snapshot(),
            "hubs": self.hubs.snapshot(),
            "children": {k: list(v) for k, v in self.children.items()},
            "labels": self.labels.to_state(),
            "parents": self.parents.to_state(),
            "fetching": dict(self._fetching),
            "reached": dict(self._reached),
            "pending": [(e.url, slot) for e, slot in self._pending],
            "examples": (list(self._ex_slot), list(self._ex_label), list(self._ex_dyn),
                         dict(self._ex_of), self._ex_base),
            "rerank_cursor": self._queued.cursor,
        }
        return state

    def restore(self, state: dict) -> None:
        self.store.restore(state["learned"]["store"])
        super().restore(state)

    def after_restore(self, state: dict) -> None:
        learned = state["learned"]
        self.model.restore(learned["model"])
        self.profile.restore(learned["profile"])
        self._extra = self.featurizer.project(self.profile.weights, PROFILE_SCALES)
        self.hosts.restore(learned["hosts"])
        self.dirs.restore(learned["dirs"])
        self.hubs.restore(learned["hubs"])
        # snapshots before the fingerprint maps kept URL strings as keys (and as parents)
        self.children = {_fp(k): list(v) for k, v in learned["children"].items()}
        self.labels = FingerprintMap.from_state(learned["labels"])
        parents = learned["parents"]
        self.parents = FingerprintMap.from_state(
            {u: fingerprint(p) for u, p in parents.items()} if isinstance(parents, dict)
            else parents, "Q")
        self._fetching = dict(learned["fetching"])
        # not in snapshots made before the host bandit
        self._reached = dict(learned.get("reached", {}))
        self._tops = HostTops()
        if self.explore_hosts > 0.0 and not self.round_robin:
            self.queues.watch()  # the index is built again at the next bandit turn
        self._pending = [(self.entries[url], slot) for url, slot in learned["pending"]]
        slots, labels, dyn, ex_of, base = learned["examples"]
        self._ex_slot, self._ex_label, self._ex_dyn = list(slots), list(labels), list(dyn)
        self._ex_of, self._ex_base = {_fp(k): i for k, i in ex_of.items()}, base
        index = self._queued = QueuedSlots(max(256, self.store.rows))
        for entry in self.entries.values():
            if entry.queued and entry.extra is not None:
                index.set(entry.extra, entry, entry.score)
        index.cursor = learned.get("rerank_cursor", 0)  # not in snapshots before it
        if self.max_buffer:
            self._worst = [(e.score, -e.seq, e) for e in self.entries.values() if e.queued]
            heapq.heapify(self._worst)

    def explain(self, entry: Entry) -> dict[str, float] | None:
        """The parts of ``entry``'s logit under today's model, each rounded to 3 places:
        ``bias``, each dense feature's weight x value (the zero ones left out), ``words``
        (the learned weights of its hashed anchor, URL and context words), ``profile`` (the
        topic profile projected onto those words) and ``explore`` (the UCB bonus); the value
        is ``sigmoid`` of their sum (+1 for a seed).  Read only: it changes no state, so a
        crawl explained orders as one that is not.  Asked at hand-out, before a retrain."""
        slot = entry.extra
        if slot is None:
            return None
        slots = np.array([slot], dtype=np.int64)
        dense = self._dense(slots, self._dynamic(slots))[0]
        parts = {"bias": self.model.b}
        for name, x, weight in zip(_PART_NAMES, dense.tolist(), self.model.v.tolist(),
                                   strict=True):
            if x * weight:
                parts[name] = x * weight
        parts["words"] = float(self.store.dot(slots, self.model.w)[0])
        parts["profile"] = float(self.store.dot(slots, self._extra)[0])
        if self.explore:
            parts["explore"] = float(self._bonus(slots)[0])
        return {name: round(float(value), 3) for name, value in parts.items()}

    def describe(self) -> dict[str, int | float]:
        return {"frontier": len(self), "learned_examples": len(self._ex_slot),
                "profile_version": self.profile.version, "host_bandit_picks": self.bandit_picks}


def _fp(key: int | str) -> int:
    """A key of a snapshot's map: a fingerprint, or a URL in snapshots from before them."""
    return fingerprint(key) if isinstance(key, str) else key
