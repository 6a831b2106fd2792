"""The topic that grows: the user's keywords widened by the pages the crawl finds relevant.

No Scrapy import.  A keyword cosine misses a page on the topic that does not repeat the user's
exact words, and a short keyword list cannot tell which link texts lead to the topic.  The
profile is Rocchio's relevance feedback over the crawl's own pages: the keyword vector plus the
centroid of the relevant pages found so far (example seeds included, when they are relevant),
each page a sublinear TF-IDF vector with IDF learnt from every page fetched.  It is rebuilt
every few pages from the kept digests, so early pages' vectors are re-weighted as IDF improves.

A page reaches the profile only as a :class:`PageDigest`: its most frequent terms and its
length.  That is enough for a cosine, small enough to journal for a crash-safe resume.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import mul
from typing import Any

import numpy as np

from ..relevance import Topic

DIGEST_TERMS = 128  # terms of a page kept for the profile (most frequent first)
_VOCAB_MIN = 1 << 16  # rebuild's vocabulary is numbered again past this and 4x the live terms


@dataclass(frozen=True, slots=True)
class PageDigest:
    """A page as the learned order sees it: its most frequent terms (with counts), the length
    of its whole term-count vector, and how often each keyword occurs (phrases as phrases)."""

    terms: tuple[tuple[str, int], ...]
    rest: float = 0.0  # sum of (1 + ln tf)^2 over the terms not kept (for a cosine's length)
    hits: tuple[int, ...] = ()
    # the page classifier's probability (with user examples), and its share of the label
    relevance: float | None = None
    relevance_weight: float = 0.0

    @classmethod
    def from_counts(cls, counts: Counter[str], hits: Sequence[int] = (),
                    size: int = DIGEST_TERMS) -> PageDigest:
        if len(counts) > size:
            top = counts.most_common(size)
            kept = {t for t, _ in top}
            rest = sum((1.0 + math.log(c)) ** 2 for t, c in counts.items()
                       if t not in kept and c > 0)
        else:
            top, rest = sorted(counts.items()), 0.0
        return cls(tuple(top), rest, tuple(hits))

    @classmethod
    def from_tokens(cls, tokens: Iterable[str], hits: Sequence[int] = (),
                    size: int = DIGEST_TERMS) -> PageDigest:
        return cls.from_counts(Counter(tokens), hits, size)


class TopicProfile:
    """Keywords + Rocchio feedback from relevant pages, as one unit-length term vector.

    ``keyword_weight`` and ``feedback_weight`` are Rocchio's alpha and beta; the feedback part
    keeps the ``feedback_terms`` heaviest terms of the centroid; ``max_feedback`` digests are
    kept (the most relevant ones), so a rebuild costs a bounded amount of work.
    """

    def __init__(
        self,
        keywords: str | Sequence[str],
        *,
        keyword_weight: float = 1.0,
        feedback_weight: float = 1.0,
        feedback_terms: int = 100,
        max_feedback: int = 200,
    ) -> None:
        self.topic = Topic(keywords)
        self.keyword_weight = keyword_weight
        self.feedback_weight = feedback_weight
        self.feedback_terms = feedback_terms
        self.max_feedback = max_feedback
        self.documents = 0
        self.df: Counter[str] = Counter()
        self._idf_cache: dict[str, float] = {}
        self._idf_documents = 0
        # the last _ltc: (digest, vector, norm), while the IDF it used is today's
        self._ltc_last: tuple[PageDigest, dict[str, float], float] | None = None
        self._feedback: list[tuple[float, int, PageDigest]] = []  # min-heap by weight
        # rebuild's, derived: feedback number -> its digest's terms (as numbers in a
        # vocabulary of the kept digests' terms) and sublinear TFs
        self._rows: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._vocab: dict[str, int] = {}
        self._names: list[str] = []
        self._fed = 0
        # a phrase's words count for a share of a keyword each ("k-means" is not "mean"), and a
        # one-letter word for nothing
        counts: dict[str, float] = defaultdict(float)
        for phrase in self.topic.phrases:
            for t in phrase:
                if len(t) > 1:
                    counts[t] += 1.0 / len(phrase)
        if not counts:
            counts = dict(Counter(t for p in self.topic.phrases for t in p))
        norm = math.sqrt(sum(v * v for v in counts.values()))
        self.keyword_vector = {t: v / norm for t, v in counts.items()}
        self.weights: dict[str, float] = dict(self.keyword_vector)
        self.version = 0

    # -- what a page is ------------------------------------------------------------------
    def idf(self, term: str) -> float:
        """Smoothed IDF over the pages fetched so far (never below 1: a keyword never hurts)."""
        cache = self._idfs()
        value = cache.get(term)
        if value is None:
            value = math.log((1 + self.documents) / (1 + self.df.get(term, 0))) + 1.0
            cache[term] = value
        return value

    def _idfs(self) -> dict[str, float]:
        """The IDF cache, emptied first if a page was observed since it was filled."""
        if self._idf_documents != self.documents:
            self._idf_cache.clear()
            self._idf_documents = self.documents
            self._ltc_last = None
        return self._idf_cache

    def _ltc(self, digest: PageDigest) -> tuple[dict[str, float], float]:
        """Sublinear TF x IDF of the kept terms, and the page vector's length (the terms not
        kept counted at the kept terms' mean IDF).

        The IDF cache is read inline, not through :meth:`idf` (a rebuild weighs 200 digests
        of 128 terms), and the last answer is kept until a page is observed: a page's label
        asks for its keyword cosine, then for its similarity, of the same digest.
        """
        cache = self._idfs()
        last = self._ltc_last
        if last is not None and last[0] is digest:
            return last[1], last[2]
        documents, df, log = 1 + self.documents, self.df, math.log
        vec: dict[str, float] = {}
        for t, c in digest.terms:
            if c > 0:
                w = cache.get(t)
                if w is None:
                    w = cache[t] = log(documents / (1 + df.get(t, 0))) + 1.0
                vec[t] = (1.0 + log(c)) * w
        values = list(vec.values())
        sq = sum(map(mul, values, values))
        if digest.rest and vec:
            mean_idf = sum(map(cache.__getitem__, vec)) / len(vec)
            sq += digest.rest * mean_idf * mean_idf
        norm = math.sqrt(sq)
        self._ltc_last = (digest, vec, norm)
        return vec, norm

    def vector(self, digest: PageDigest) -> dict[str, float]:
        """Sublinear TF x IDF, unit length (SMART ltc)."""
        vec, norm = self._ltc(digest)
        return {t: x / norm for t, x in vec.items()} if norm else {}

    def similarity(self, digest: PageDigest | None) -> float:
        """Cosine of a page with the profile, in [0, 1]."""
        if digest is None or not digest.terms:
            return 0.0
        vec, norm = self._ltc(digest)
        if not norm:
            return 0.0
        weights = self.weights
        return sum(w * vec[t] for t, w in weights.items() if t in vec) / norm

    def keyword_cosine(self, digest: PageDigest) -> float:
        """SMART ltc cosine of the page with the keywords, each keyword (a phrase too) one
        dimension weighted by its IDF in the crawl so far.

        Sublinear TF rewards a page that covers several keywords over one that repeats one
        ("session" on every line of an ORM manual); IDF discounts a keyword the crawl meets
        everywhere; a phrase counts only where its words are consecutive ("k-means" is not
        every "mean").
        """
        if not digest.hits or not any(digest.hits):
            return 0.0
        _, norm = self._ltc(digest)
        if not norm:
            return 0.0
        weights = [min(self.idf(t) for t in phrase) for phrase in self.topic.phrases]
        if len(digest.hits) != len(weights):
            return 0.0  # a digest made for other keywords
        num = sum((1.0 + math.log(h)) * w
                  for h, w in zip(digest.hits, weights, strict=True) if h > 0)
        return num / (math.sqrt(sum(w * w for w in weights)) * norm)

    # -- learning ------------------------------------------------------------------------
    def observe(self, digest: PageDigest | None) -> None:
        """Every fetched page teaches document frequencies."""
        if digest is None:
            return
        self.documents += 1
        self.df.update(t for t, _ in digest.terms)

    def feedback(self, digest: PageDigest | None, weight: float) -> None:
        """A relevant page (weight in (0, 1]) joins the centroid."""
        if digest is None or weight <= 0 or not digest.terms:
            return
        self._fed += 1
        item = (weight, self._fed, digest)
        if len(self._feedback) < self.max_feedback:
            heapq.heappush(self._feedback, item)
        elif weight > self._feedback[0][0]:
            heapq.heapreplace(self._feedback, item)

    def rebuild(self) -> bool:
        """Recompute the profile from the kept digests with today's IDF; True if it changed."""
        if not self._feedback:
            return False
        total = 0.0
        parts, tfs, weights, rests = [], [], [], []
        rows, kept = self._rows, {}
        for weight, fed, digest in self._feedback:
            total += weight
            row = rows.get(fed)
            if row is None:
                row = self._row(digest)
            kept[fed] = row
            if len(row[0]):  # no term: no vector (a norm of 0)
                parts.append(row[0])
                tfs.append(row[1])
                weights.append(weight)
                rests.append(digest.rest)
        self._rows = kept
        if len(self._names) > max(_VOCAB_MIN, 4 * sum(len(r[0]) for r in kept.values())):
            self._compact_vocab()
            return self.rebuild()
        top: list[tuple[str, float]] = []
        if parts:
            top = self._top_terms(parts, tfs, weights, rests)
        vec: dict[str, float] = {t: self.keyword_weight * x
                                 for t, x in self.keyword_vector.items()}
        for t, x in top:
            vec[t] = vec.get(t, 0.0) + self.feedback_weight * x / total
        norm = math.sqrt(sum(x * x for x in vec.values()))
        self.weights = {t: x / norm for t, x in vec.items()}
        self.version += 1
        return True

    def _row(self, digest: PageDigest) -> tuple[np.ndarray, np.ndarray]:
        """A digest's terms as vocabulary numbers and their sublinear TFs (1 + ln tf), kept
        while it is in the feedback: only the IDF changes from one rebuild to the next."""
        terms = [(t, c) for t, c in digest.terms if c > 0]
        return (self._numbers(t for t, _ in terms),
                np.array([1.0 + math.log(c) for _, c in terms], dtype=np.float64))

    def _numbers(self, terms: Iterable[str]) -> np.ndarray:
        vocab, names = self._vocab, self._names
        ids = []
        for t in terms:
            i = vocab.get(t)
            if i is None:
                i = vocab[t] = len(names)
                names.append(t)
            ids.append(i)
        return np.array(ids, dtype=np.int64)

    def _compact_vocab(self) -> None:
        """Number again only the terms of the digests kept (the others left the feedback)."""
        old = self._names
        self._vocab, self._names = {}, []
        self._rows = {fed: (self._numbers(map(old.__getitem__, ids.tolist())), tf)
                      for fed, (ids, tf) in self._rows.items()}

    def _top_terms(self, parts: list[np.ndarray], tfs: list[np.ndarray], weights: list[float],
                   rests: list[float]) -> list[tuple[str, float]]:
        """The centroid's ``feedback_terms`` heaviest terms, heaviest first.

        Each digest's unit SMART ltc vector (:meth:`vector`) weighted by its feedback weight
        and summed, vectorised but the same floats in the same order as a loop over the
        digests: elementwise products and quotients are exact in numpy too, each vector's
        squared length is summed left to right in Python (numpy sums pairwise), ``bincount``
        adds each term's contributions in the digests' order, and ties are broken by the
        term's first appearance, as ``Counter.most_common`` breaks them.  (A rebuild weighs
        200 digests of 128 terms every ``learn_every`` pages: a loop was ~1 ms a page.)
        """
        documents, df_get, log = float(1 + self.documents), self.df.get, math.log
        lens = [len(p) for p in parts]
        ids = np.concatenate(parts)
        uniq, first, inv = np.unique(ids, return_index=True, return_inverse=True)
        # :meth:`idf` of each term (not through its cache: it empties with the next page); the
        # quotient of two integers below 2**53 is the same float in numpy, the log is libm's
        names = self._names
        terms = list(map(names.__getitem__, uniq.tolist()))
        dfs = np.fromiter(map(df_get, terms, repeat(0)), dtype=np.float64, count=len(terms))
        idf_u = np.fromiter(map(log, (documents / (1.0 + dfs)).tolist()), dtype=np.float64,
                            count=len(terms)) + 1.0
        idf = idf_u[inv]
        xs = np.concatenate(tfs) * idf
        xs_list, idf_list = xs.tolist(), idf.tolist()
        norms, pos = [], 0
        for n, rest in zip(lens, rests, strict=True):
            seg = xs_list[pos:pos + n]
            sq = sum(map(mul, seg, seg))
            if rest:
                mean_idf = sum(idf_list[pos:pos + n]) / n
                sq += rest * mean_idf * mean_idf
            norms.append(math.sqrt(sq))
            pos += n
        contrib = np.repeat(np.array(weights), lens) * (xs / np.repeat(np.array(norms), lens))
        centroid = np.bincount(inv, weights=contrib, minlength=len(uniq))
        order = np.lexsort((first, -centroid))[:self.feedback_terms]
        values = centroid.tolist()
        return [(names[uniq[j]], values[j]) for j in order.tolist()]

    def top_terms(self, n: int = 20) -> list[tuple[str, float]]:
        return sorted(self.weights.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    # -- persistence ---------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "df": dict(self.df),
            "feedback": list(self._feedback),
            "fed": self._fed,
            "weights": dict(self.weights),
            "version": self.version,
        }

    def restore(self, state: dict[str, Any]) -> None:
        self._idf_cache.clear()
        self._ltc_last = None
        self.documents = state["documents"]
        self.df = Counter(state["df"])
        self._feedback = [tuple(x) for x in state["feedback"]]
        heapq.heapify(self._feedback)
        self._fed = state["fed"]
        self._rows = {}  # feedback numbers of another history
        self.weights = dict(state["weights"])
        self.version = state["version"]
