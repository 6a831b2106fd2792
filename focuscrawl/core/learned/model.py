"""Link value: P(a link's target is relevant), a logistic regression trained on the crawl's own
fetches.  Plain numpy, no Scrapy import.

Why numpy and not scikit-learn's ``SGDClassifier.partial_fit``: the model must (1) start from a
prior, not from zero, so that the first pages are ordered no worse than best-first, and be
pulled back toward that prior while labels are few (L2 toward the prior weights); (2) learn
from soft labels (a page half as relevant as the threshold is worth half a positive); (3) score
the whole frontier with the same weights plus a profile projection that changes every few pages.
``SGDClassifier`` does none of the three without wrapping, and its per-call overhead on a batch
of a few rows is larger than this whole update.  It is AdaGrad on a log loss over sparse rows:
about 40 lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))


class LinkModel:
    """z = bias + dense . v + hashed . (w + extra); p = sigmoid(z).

    ``v`` starts at ``dense_prior`` and is regularised toward it; ``w`` starts at 0 and is
    regularised toward 0; ``extra`` is a fixed weight vector given by the caller at scoring time
    (the topic profile projected onto the hashed text columns).
    """

    def __init__(
        self,
        dim: int,
        dense_prior: Sequence[float],
        *,
        bias: float = -3.0,
        rate: float = 0.2,
        l2_dense: float = 0.05,
        l2_hashed: float = 0.01,
    ) -> None:
        self.dim = dim
        self.v0 = np.asarray(dense_prior, dtype=np.float64)
        self.v = self.v0.copy()
        self.b = float(bias)
        self.w = np.zeros(dim, dtype=np.float64)
        self.rate = rate
        self.l2_dense = l2_dense
        self.l2_hashed = l2_hashed
        self._gw = np.zeros(dim, dtype=np.float64)  # AdaGrad sums of squared gradients
        self._gv = np.zeros(len(self.v0), dtype=np.float64)
        self._gb = 0.0
        self.updates = 0

    def logits(self, hashed: np.ndarray, dense: np.ndarray) -> np.ndarray:
        """``hashed``: each row's hashed part (row . (w + extra)), computed by the caller."""
        return self.b + dense @ self.v + hashed

    def update(
        self,
        cols: np.ndarray,
        vals: np.ndarray,
        rows: np.ndarray,
        dense: np.ndarray,
        extra: np.ndarray,
        labels: np.ndarray,
    ) -> None:
        """One AdaGrad step on a batch of rows (soft labels in [0, 1]).

        ``cols``/``vals``/``rows``: the batch's hashed features, concatenated, with the row
        (0..n-1) each belongs to; ``extra``: each row's fixed part of the logit.
        """
        n = len(labels)
        if n == 0:
            return
        hashed = np.bincount(rows, weights=self.w[cols] * vals, minlength=n) + extra
        g = sigmoid(self.logits(hashed, dense)) - labels
        eps = 1e-8
        # dense weights, pulled toward the prior
        grad_v = dense.T @ g / n + self.l2_dense * (self.v - self.v0)
        self._gv += grad_v * grad_v
        self.v -= self.rate * grad_v / np.sqrt(self._gv + eps)
        grad_b = float(g.mean())
        self._gb += grad_b * grad_b
        self.b -= self.rate * grad_b / np.sqrt(self._gb + eps)
        # hashed weights: only the columns this batch touches
        touched, inverse = np.unique(cols, return_inverse=True)
        grad = np.bincount(inverse, weights=g[rows] * vals, minlength=len(touched)) / n
        grad += self.l2_hashed * self.w[touched]
        self._gw[touched] += grad * grad
        self.w[touched] -= self.rate * grad / np.sqrt(self._gw[touched] + eps)
        self.updates += 1

    # -- persistence ---------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Plain bytes and numbers (comparable with ``==``); only the columns ever trained."""
        nz = np.flatnonzero(self._gw)
        return {"v": self.v.tobytes(), "b": self.b, "gv": self._gv.tobytes(), "gb": self._gb,
                "cols": nz.astype(np.int64).tobytes(), "w": self.w[nz].tobytes(),
                "gw": self._gw[nz].tobytes(), "updates": self.updates}

    def restore(self, state: dict[str, Any]) -> None:
        self.v = np.frombuffer(state["v"], dtype=np.float64).copy()
        self.b = float(state["b"])
        self._gv = np.frombuffer(state["gv"], dtype=np.float64).copy()
        self._gb = float(state["gb"])
        self.w = np.zeros(self.dim, dtype=np.float64)
        self._gw = np.zeros(self.dim, dtype=np.float64)
        cols = np.frombuffer(state["cols"], dtype=np.int64)
        self.w[cols] = np.frombuffer(state["w"], dtype=np.float64)
        self._gw[cols] = np.frombuffer(state["gw"], dtype=np.float64)
        self.updates = state["updates"]
