"""A page classifier learnt from example pages (no Scrapy): ACHE's way of defining a topic.

Positive and negative example pages given by the user, plus the crawl's own confident pages
labelled by the keyword rule (self-training: a page scoring at least ``positive_score`` is
on-topic, one under ``negative_score`` off it), train a logistic regression (scikit-learn's
liblinear) over hashed word features; :meth:`PageClassifier.probability` is a page's
probability of being on-topic.  The self-training labels come from the keywords, never from
the classifier's own predictions, so it cannot drift away from them; :attr:`agreement`
measures how far it does anyway.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np
import xxhash

Features = tuple[np.ndarray, np.ndarray]  # hashed column numbers, L2-normalised weights

_CACHE_MAX = 1 << 18  # terms whose column is remembered (a dict look-up beats a hash)
_REFIT_MAX = 250  # confident pages between two refits, at most


class PageClassifier:
    """Examples in, a probability per page out; refitted as the crawl's confident pages come.

    The user's examples are always in the training set; the crawl's confident pages are kept
    in two bounded queues (the ``pool`` latest of each class).  A refit comes once the
    confident pages grew by ``refit_every`` and by a quarter since the last one, or by 250.
    """

    def __init__(self, *, positive_score: float, negative_score: float, bits: int = 18,
                 pool: int = 500, refit_every: int = 25, user_weight: float = 3.0,
                 c: float = 1.0) -> None:
        self.positive_score = positive_score
        self.negative_score = negative_score
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.refit_every = max(1, refit_every)
        self.user_weight = user_weight
        self.c = c
        self.user: list[tuple[Features, int]] = []  # the user's examples, label 1 or 0
        self.pools: tuple[deque[Features], deque[Features]] = (deque(maxlen=pool),
                                                               deque(maxlen=pool))
        self.confident = 0  # confident crawl pages seen (the refit schedule's clock)
        self.fitted_at = -1  # ``confident`` at the last fit; -1: never fitted
        self.coef: np.ndarray | None = None
        self.intercept = 0.0
        self.fits = 0
        self.agreed = 0  # pages whose predicted class matched the keyword rule's
        self.judged = 0  # pages predicted while a model existed
        self._columns: dict[str, int] = {}

    # -- features ---------------------------------------------------------------------------
    def features(self, counts: Iterable[tuple[str, int]]) -> Features:
        """A page's (term, count) pairs as hashed columns weighted 1 + ln(tf), unit length."""
        columns = self._columns
        if len(columns) > _CACHE_MAX:
            columns.clear()
        index: list[int] = []
        weights: list[float] = []
        for term, count in counts:
            column = columns.get(term)
            if column is None:
                column = columns[term] = xxhash.xxh32_intdigest(term.encode()) & self.mask
            index.append(column)
            weights.append(1.0 + math.log(count) if count > 0 else 0.0)
        idx = np.array(index, dtype=np.int64)
        val = np.array(weights, dtype=np.float64)
        norm = float(np.sqrt(val @ val))
        return idx, val / norm if norm else val

    # -- examples ---------------------------------------------------------------------------
    def add_example(self, features: Features, positive: bool) -> None:
        """A page the user gave as an example (``positive``) or a counter-example."""
        self.user.append((features, int(positive)))
        self.fitted_at = -1  # refit at the next chance, whatever the schedule

    @property
    def examples(self) -> int:
        return len(self.user)

    @property
    def ready(self) -> bool:
        return self.coef is not None

    def probability(self, features: Features) -> float | None:
        """The page's probability of being on-topic; None before the first fit."""
        if self.coef is None:
            return None
        idx, val = features
        z = float(self.coef[idx] @ val) + self.intercept
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def observe(self, features: Features, score: float) -> float | None:
        """A crawled page with keyword score ``score``: its probability (by the model before
        this page), counted against the keyword rule; a confident page joins the pool."""
        p = self.probability(features)
        if p is not None:
            self.judged += 1
            self.agreed += (p >= 0.5) == (score >= self.positive_score)
        label = 1 if score >= self.positive_score else 0 if score < self.negative_score else -1
        if label >= 0:
            self.pools[label].append(features)
            self.confident += 1
        self.refit_if_due()
        return p

    @property
    def agreement(self) -> float | None:
        """Share of the crawl's pages on which the model agreed with the keyword rule."""
        return self.agreed / self.judged if self.judged else None

    # -- fitting ----------------------------------------------------------------------------
    def refit_if_due(self) -> bool:
        # a fit's cost is mostly fixed, whatever the pages: wait a quarter more, at most _REFIT_MAX
        due = self.fitted_at < 0 or self.confident - self.fitted_at >= max(
            self.refit_every, min(self.fitted_at // 4, _REFIT_MAX))
        return due and self.fit()

    def fit(self) -> bool:
        """Fit on the user's examples and the pools; False (no model change) while a class
        has no page."""
        rows = [f for f, _ in self.user]
        labels = [y for _, y in self.user]
        weights = [self.user_weight] * len(rows)
        for label, pool in enumerate(self.pools):
            rows.extend(pool)
            labels.extend([label] * len(pool))
            weights.extend([1.0] * len(pool))
        if len(set(labels)) < 2:
            return False
        from scipy.sparse import csr_matrix
        from sklearn.linear_model import LogisticRegression

        indptr = np.cumsum([0] + [len(idx) for idx, _ in rows])
        # fitted over the columns in use only: liblinear's cost grows with the width too
        used, columns = np.unique(np.concatenate([i for i, _ in rows]), return_inverse=True)
        matrix = csr_matrix((np.concatenate([v for _, v in rows]), columns, indptr),
                            shape=(len(rows), len(used)))
        model = LogisticRegression(solver="liblinear", C=self.c, class_weight="balanced")
        model.fit(matrix, np.array(labels), sample_weight=np.array(weights))
        coef = np.zeros(1 << self.bits)
        coef[used] = model.coef_[0]
        self.coef = coef
        self.intercept = float(model.intercept_[0])
        self.fitted_at = self.confident
        self.fits += 1
        return True

    # -- persistence ------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The examples, pools, counters and model (a resumed crawl does not refit)."""
        coef = self.coef
        nonzero = np.flatnonzero(coef) if coef is not None else None
        return {
            "user": list(self.user), "pools": [list(p) for p in self.pools],
            "confident": self.confident, "fitted_at": self.fitted_at, "fits": self.fits,
            "agreed": self.agreed, "judged": self.judged, "intercept": self.intercept,
            "coef": None if coef is None else (nonzero, coef[nonzero]),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.user = list(state["user"])
        for pool, saved in zip(self.pools, state["pools"], strict=True):
            pool.clear()
            pool.extend(saved)
        self.confident, self.fitted_at = state["confident"], state["fitted_at"]
        self.fits, self.agreed, self.judged = state["fits"], state["agreed"], state["judged"]
        self.intercept = state["intercept"]
        self.coef = None
        if state["coef"] is not None:
            nonzero, values = state["coef"]
            self.coef = np.zeros(1 << self.bits)
            self.coef[nonzero] = values
