"""Best-first's evidence as a second opinion beside the learned model (no Scrapy).

The learned model weighs many features; on a crawl where they mislead it (a manual whose every
anchor repeats a keyword, a host it knows well against one a relevant page links to and it has
never tried) it can do worse than best-first's one feature, the parent page's relevance.  So
each link's probability is a mixture of two experts: the learned model's and a calibrated
parent-only model (``sigmoid(c + a * parent relevance)``, trained on the same labels), weighted
by how well each has predicted this crawl's labels so far (Bayesian model averaging: weights
``exp(-log loss)``, the losses discounted so that the weights follow the crawl).  Where the
learned model predicts better, as on most crawls, the mixture is the learned model.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .defaults import MIXTURE_DISCOUNT as DISCOUNT
from .defaults import PARENT_PRIOR
from .model import sigmoid

RATE = 0.2  # the parent expert's AdaGrad rate: the learned model's


def _log_loss(p: float, label: float) -> float:
    p = min(1.0 - 1e-6, max(1e-6, p))
    return -(label * math.log(p) + (1.0 - label) * math.log(1.0 - p))


class ParentMixture:
    """The parent-only expert, and both experts' discounted log losses on the pages fetched."""

    def __init__(self) -> None:
        self.a, self.c = PARENT_PRIOR
        self._g = np.zeros(2)  # AdaGrad sums of squared gradients (a, c)
        self.loss = np.zeros(2)  # learned, parent
        self.seen = 0

    def weight(self) -> float:
        """The learned model's weight in the mixture (the parent expert's is 1 minus it)."""
        return 1.0 / (1.0 + math.exp(max(-50.0, min(50.0, self.loss[0] - self.loss[1]))))

    def parent_p(self, parent: np.ndarray) -> np.ndarray:
        return sigmoid(self.c + self.a * parent)

    def mix(self, z: np.ndarray, parent: np.ndarray) -> np.ndarray:
        """The mixture's logits, from the learned model's logits ``z`` and the links'
        parent relevance."""
        if self.seen == 0:
            return z  # nothing observed: the learned model's prior is best-first's already
        w = self.weight()
        if w > 1.0 - 1e-9:
            return z
        p = w * sigmoid(z) + (1.0 - w) * self.parent_p(parent)
        p = np.clip(p, 1e-12, 1.0 - 1e-12)
        return np.log(p) - np.log1p(-p)

    def observe(self, z: float, parent: float, label: float) -> None:
        """A page fetched: each expert's prediction for its link (the learned one's logit
        ``z``, made before training on it) is scored against its ``label``, then the parent
        expert takes a step."""
        p_parent = float(self.parent_p(np.array([parent]))[0])
        p_learned = float(sigmoid(np.array([z]))[0])
        self.loss *= DISCOUNT
        self.loss += (_log_loss(p_learned, label), _log_loss(p_parent, label))
        self.seen += 1
        g = p_parent - label
        grad = np.array([g * parent, g])
        self._g += grad * grad
        step = RATE * grad / np.sqrt(self._g + 1e-8)
        self.a -= float(step[0])
        self.c -= float(step[1])

    def snapshot(self) -> dict[str, Any]:
        return {"a": self.a, "c": self.c, "g": self._g.tobytes(), "loss": self.loss.tobytes(),
                "seen": self.seen}

    def restore(self, state: dict[str, Any] | None) -> None:
        if state is None:  # a snapshot from before the mixture: start afresh
            self.__init__()  # type: ignore[misc]
            return
        self.a, self.c = state["a"], state["c"]
        self._g = np.frombuffer(state["g"], dtype=np.float64).copy()
        self.loss = np.frombuffer(state["loss"], dtype=np.float64).copy()
        self.seen = state["seen"]
