"""The next fetch: discover a new page, or revisit a known one.

Adaptive (the default): each candidate is valued in the same unit, relevance-weighted pages
brought up to date.  The next new page is worth its expected relevance (the frontier's estimate
for its best URL: a page the crawl does not have is as stale as a page can be); the next revisit
is worth its page's relevance times the probability that it changed since it was last seen,
w (1 − e^{−λ·age}) -- a revisit that finds nothing new buys nothing.  The larger wins; either
wins when the other has nothing to offer.

Fixed (``share``): revisits take that share of the fetches, counted as the crawl goes (the
deficit of either kind goes first), for a crawl whose user wants a known split.
"""

from __future__ import annotations

DISCOVER, REVISIT = "discover", "revisit"


class Split:
    """Chooses between the two kinds of fetch and counts what it chose."""

    def __init__(self, share: float | None = None) -> None:
        if share is not None and not 0.0 <= share <= 1.0:
            raise ValueError(f"the revisit share must be within [0, 1], not {share}")
        self.share = share
        self.counts = {DISCOVER: 0, REVISIT: 0}

    def choose(self, discover: float | None, revisit: float | None) -> str | None:
        """``discover``/``revisit``: the value of the best candidate of each kind, None when
        that kind has none ready.  Returns the kind to fetch (None: nothing to fetch)."""
        if discover is None or revisit is None:
            kind = REVISIT if discover is None else DISCOVER
            return None if discover is None and revisit is None else kind
        if self.share is None:
            return REVISIT if revisit > discover else DISCOVER
        done = self.counts[REVISIT] + self.counts[DISCOVER]
        return REVISIT if self.counts[REVISIT] < self.share * (done + 1) else DISCOVER

    def record(self, kind: str) -> None:
        self.counts[kind] += 1

    @property
    def revisit_share(self) -> float:
        """The share of the fetches so far that were revisits."""
        done = self.counts[REVISIT] + self.counts[DISCOVER]
        return self.counts[REVISIT] / done if done else 0.0
