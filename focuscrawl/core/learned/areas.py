"""What the crawl has learnt about areas of the web (hosts, directories): how relevant the pages
fetched there were, and how little is known yet.  No Scrapy import.

Relevant pages cluster: by site, and within a site by directory.  An area's evidence is the
log-odds of its smoothed relevance rate against the crawl's overall rate (0 for an area never
fetched), a feature the link model weighs like any other; its uncertainty, ``1/sqrt(1 + n)``,
is what the exploration bonus spends fetches on (UCB: optimism where little is known).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fingerprints import FingerprintMap, fingerprint


class AreaStats:
    """Per-area counts of fetched pages and the sum of their relevance labels."""

    def __init__(self, prior_weight: float = 2.0) -> None:
        self.prior_weight = prior_weight
        # area (a host, a directory, a page) -> its number, by fingerprint: a crawl meets
        # an area per page it fetches (the pages are the hub areas), no string is kept
        self.ids = FingerprintMap("q")
        self.n = np.zeros(64, dtype=np.float64)
        self.s = np.zeros(64, dtype=np.float64)
        self.total_n = 0.0
        self.total_s = 0.0

    def __len__(self) -> int:
        return len(self.ids)

    def id(self, key: str) -> int:
        fp = fingerprint(key)  # once: a new area is looked up, then set
        i = self.ids.get_fp(fp)
        if i is None:
            i = len(self.ids)
            self.ids.set_fp(fp, i)
            if i >= len(self.n):
                self.n = np.resize(self.n, 2 * i)
                self.s = np.resize(self.s, 2 * i)
                self.n[i:] = 0.0
                self.s[i:] = 0.0
        return i

    def add(self, area: int, label: float) -> None:
        self.n[area] += 1.0
        self.s[area] += label
        self.total_n += 1.0
        self.total_s += label

    def _mean(self) -> float:
        return (self.total_s + 0.5) / (self.total_n + 1.0)

    def evidence(self, areas: np.ndarray) -> np.ndarray:
        """Log-odds of each area's smoothed rate against the overall rate (0: no pages yet)."""
        m = self._mean()
        a = self.prior_weight
        rate = (self.s[areas] + a * m) / (self.n[areas] + a)
        rate = np.clip(rate, 1e-4, 1 - 1e-4)
        return np.log(rate / (1 - rate)) - np.log(m / (1 - m))

    def uncertainty(self, areas: np.ndarray | int) -> np.ndarray:
        """UCB's bonus factor ``1 / sqrt(1 + pages)`` per area (or of one area)."""
        return 1.0 / np.sqrt(1.0 + self.n[areas])

    def snapshot(self) -> dict[str, Any]:
        k = len(self.ids)
        return {"ids": self.ids.to_state(), "n": self.n[:k].tobytes(), "s": self.s[:k].tobytes(),
                "total": (self.total_n, self.total_s)}

    def restore(self, state: dict[str, Any]) -> None:
        self.ids = FingerprintMap.from_state(state["ids"], "q")  # a dict of strings before
        k = len(self.ids)
        self.n = np.zeros(max(64, 2 * k))
        self.s = np.zeros(max(64, 2 * k))
        self.n[:k] = np.frombuffer(state["n"], dtype=np.float64)
        self.s[:k] = np.frombuffer(state["s"], dtype=np.float64)
        self.total_n, self.total_s = state["total"]
