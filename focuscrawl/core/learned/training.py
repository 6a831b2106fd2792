"""How the learned order learns from its own fetches (no Scrapy): a fetched page's label, the
training examples it makes (for the link that led to it and, discounted, the pages that led
there), and what the label says about its siblings on the parent page."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..fingerprints import FingerprintMap, fingerprint
from ..frontier.queues import Entry
from .bandit import HostBandit
from .defaults import NEAR_DECAY, PARENT
from .profile import PageDigest
from .scoring import Scorer


class Trainer:
    """Per page fetched: its label and the page it was reached from (by fingerprint, for the
    whole crawl); the last ``memory`` training examples; the last ``memory`` parents' links in
    page order (for link nearness)."""

    def __init__(self, scorer: Scorer, bandit: HostBandit, entries: dict[str, Entry],
                 rescore: Callable[[Entry, float], None], *, relevant_score: float,
                 keyword_scale: float, profile_score: float, discount: float, memory: int,
                 window: int) -> None:
        self.scorer = scorer
        self.bandit = bandit
        self.entries = entries  # the frontier's queued entries (siblings are re-scored)
        self.rescore = rescore
        self.relevant_score = relevant_score
        self.keyword_scale = keyword_scale
        self.profile_score = profile_score
        self.discount = discount
        self.memory = memory
        self.window = window
        # page (fingerprint) -> its links' URLs, each with its place in page order (the first
        # link to a URL is its place): the last ``memory`` pages
        self.children: dict[int, dict[str, int]] = {}
        self._last: tuple[str, int] = ("", 0)  # the last parent and its fingerprint
        # per page fetched, for the whole crawl: by fingerprint, no URL string kept
        self.labels = FingerprintMap("d")  # fetched page -> its relevance label
        self.parents = FingerprintMap("Q")  # page handed out -> the page it was reached from
        # training examples: slot, label, dynamic features at hand-out time
        self.ex_slot: list[int] = []
        self.ex_label: list[float] = []
        self.ex_dyn: list[tuple[float, ...]] = []
        self.ex_of: dict[int, int] = {}  # fetched page (fingerprint) -> its example number
        self.ex_base = 0  # example number of ex_slot[0]

    # -- what a link's parent is worth ------------------------------------------------------
    def relevance_of(self, page: str, score: float) -> float:
        """A fetched page's label; its score over the threshold if it has none."""
        label = self.labels.get(page)
        if label is None:
            label = min(1.0, score / self.relevant_score)
        return label

    def parent_relevance(self, parent: str | None, parent_score: float) -> float:
        if parent is None:
            return 1.0  # a seed: the user's own choice
        return self.relevance_of(parent, parent_score)

    def grandparent_label(self, parent: str | None) -> float:
        grandparent = self.parents.get(parent) if parent is not None else None  # a fingerprint
        return self.labels.get_fp(grandparent, 0.0) if grandparent else 0.0

    def child(self, parent: str, url: str) -> None:
        """Remember the link's place among its parent's links (for link nearness), for the
        ``memory`` most recent parents only: memory stays bounded on a long crawl.  A link
        already placed keeps its place: the spider's check places every outlink, and the
        links it lets through are placed again when they are added."""
        last, key = self._last
        if parent != last:
            key = fingerprint(parent)
            self._last = (parent, key)
        children = self.children.get(key)
        if children is None:
            children = self.children[key] = {}
            if len(self.children) > self.memory:
                del self.children[next(iter(self.children))]
        if url not in children:
            children[url] = len(children)

    # -- a page's label ---------------------------------------------------------------------
    def relevance(self, score: float, digest: PageDigest | None) -> tuple[float, float]:
        """A page's label in [0, 1], and its keyword match alone (unclipped).

        The keyword match is SMART ltc over the crawl's IDF (``TopicProfile.keyword_cosine``)
        over ``keyword_scale``, or the spider's plain cosine over ``relevant_score`` when
        there is no digest; with ``profile_score`` the similarity to the grown profile may
        raise the label; a digest's classifier probability is mixed in by its weight.
        """
        if digest is None:
            by_keywords = score / self.relevant_score if self.relevant_score else 0.0
            return min(1.0, by_keywords), by_keywords
        profile = self.scorer.profile
        by_keywords = profile.keyword_cosine(digest) / self.keyword_scale
        label = min(1.0, by_keywords)
        if self.profile_score > 0 and profile.version > 0:
            label = max(label, min(1.0, profile.similarity(digest) / self.profile_score))
        if digest.relevance is not None:  # the user's example pages' classifier
            weight = digest.relevance_weight
            label = (1.0 - weight) * label + weight * digest.relevance
        return label, by_keywords

    # -- training ---------------------------------------------------------------------------
    def learn(self, url: str, slot: int, label: float, failing: bool) -> None:
        """The page at ``url``, reached by the link in ``slot``, is labelled ``label``: update
        the areas, train on it (and its ancestors' revised labels), re-score its siblings."""
        scorer = self.scorer
        areas = scorer.store.areas(np.array([slot]))[0]
        dyn = scorer.dynamic(np.array([slot]))[0]
        host_id = int(areas[0])
        scorer.hosts.add(host_id, label)
        self.bandit.answered(host_id, failing)
        scorer.dirs.add(int(areas[1]), label)
        self.ex_of[fingerprint(url)] = self.ex_base + len(self.ex_slot)
        self.ex_slot.append(slot)
        self.ex_label.append(label)
        self.ex_dyn.append(tuple(float(x) for x in dyn))
        batch = [len(self.ex_slot) - 1]
        if scorer.parent_expert and not scorer.is_seed(slot):
            # how well each expert predicted this page, before either learns from it
            z = float(scorer.logits(np.array([slot]), dyn[None, :])[0])
            scorer.mixture.observe(z, scorer.store.dense_value(slot, PARENT), label)
        if self.discount > 0 and label > 0:
            # the pages that led here were worth fetching too (discounted)
            reward = label
            node = self.parents.get(url)
            for _ in range(2):
                reward *= self.discount
                if node is None:
                    break
                i = self.ex_of.get(node, -1) - self.ex_base
                if 0 <= i < len(self.ex_label) and self.ex_label[i] < reward:
                    self.ex_label[i] = reward
                    batch.append(i)
                node = self.parents.get_fp(node)
        self.train(batch)
        self.siblings(url, int(areas[2]), label)
        if len(self.ex_slot) > self.memory:
            self.forget(len(self.ex_slot) - self.memory)

    def siblings(self, url: str, parent_id: int, label: float) -> None:
        """A page's label is evidence about its parent's other links (Chakrabarti's hubs) and
        most of all about the links next to it on the parent (the slides' link nearness: a
        table of contents lists a chapter's sections together); re-score them now."""
        scorer = self.scorer
        if scorer.hub_areas:
            scorer.hubs.add(parent_id, label)
        parent = self.parents.get(url)
        children = self.children.get(parent) if parent is not None else None
        if not children:
            return
        near = scorer.store.near
        pos = children.get(url, -1)
        urls = list(children)
        if pos >= 0 and label > 0:
            for j in range(max(0, pos - self.window), min(len(urls), pos + self.window + 1)):
                entry = self.entries.get(urls[j])
                if entry is None or entry.extra is None or j == pos:
                    continue
                value = label * NEAR_DECAY ** (abs(j - pos) - 1)
                if value > near[entry.extra]:
                    near[entry.extra] = value
        live = [e for e in map(self.entries.get, urls)
                if e is not None and e.queued and e.extra is not None]
        if live:
            slots = np.fromiter((e.extra for e in live), dtype=np.int64, count=len(live))
            for entry, value in zip(live, scorer.values(slots).tolist(), strict=True):
                self.rescore(entry, value)

    def train(self, batch: list[int]) -> None:
        """One AdaGrad step on the examples numbered ``batch`` (from ``ex_base``)."""
        scorer = self.scorer
        index = np.array(batch, dtype=np.int64)
        slots = np.array([self.ex_slot[i] for i in batch], dtype=np.int64)
        cols, vals, rows = scorer.store.gather(slots)
        dense = scorer.dense(slots, np.array([self.ex_dyn[i] for i in batch],
                                             dtype=np.float64))
        extra = np.bincount(rows, weights=scorer.extra[cols] * vals, minlength=len(batch))
        labels = np.array([self.ex_label[i] for i in index], dtype=np.float64)
        scorer.model.update(cols, vals, rows, dense, extra, labels)

    def replay(self, recent: int) -> None:
        """Train once more on the last ``recent`` examples, 32 at a time."""
        n = len(self.ex_slot)
        examples = list(range(max(0, n - recent), n))
        for start in range(0, len(examples), 32):
            self.train(examples[start:start + 32])

    def forget(self, n: int) -> None:
        """Drop the ``n`` oldest examples (their feature rows are freed)."""
        for slot in self.ex_slot[:n]:
            self.scorer.store.free(slot)
        del self.ex_slot[:n], self.ex_label[:n], self.ex_dyn[:n]
        self.ex_base += n
        if len(self.ex_of) > 2 * self.memory:
            # a forgotten example's number is looked up as a miss anyway: drop them (numbers
            # rise in insertion order), so this map stays the size of the memory, not the crawl
            base = self.ex_base
            self.ex_of = {u: i for u, i in self.ex_of.items() if i >= base}

    def remap(self, mapping: Mapping[int, int]) -> None:
        """The feature store compacted: row ``s`` is now row ``mapping[s]``."""
        self.ex_slot = [mapping[s] for s in self.ex_slot]
