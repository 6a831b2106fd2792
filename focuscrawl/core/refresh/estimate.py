"""A page's change rate from incomplete observation (Cho & Garcia-Molina, "Estimating frequency
of change", TOIT 2003).

A page changes as a Poisson process of rate λ; a crawler sees, at each visit, only *whether* it
changed since the last one, never how many times.  Counting detected changes over time
(X / (n I)) therefore underestimates λ, badly once the page changes more than once an interval.

* Regular visits (n visits I apart, X found a change): the paper's bias-reduced estimator
  r̂ = −log((n − X + 0.5) / (n + 0.5)) / I (:func:`rate_regular`).
* Irregular visits (the crawler's case: intervals follow the policy and the server's delay): the
  maximum-likelihood estimator, the root of
  Σ_changed t_i / (e^{λ t_i} − 1) = Σ_unchanged t_j  (each visit i changed with probability
  1 − e^{−λ t_i}).  It has no finite root when every visit found a change, and little data
  says little, so it is taken here with a Gamma prior (the MAP estimate): the log-posterior's
  derivative adds (α − 1)/λ − β, still decreasing in λ, so one bisection finds the root.

The prior is learnt, not fixed (:class:`RateEstimator`): a page starts from its directory's
pooled observations, the directory from its server's, the server from the whole crawl's, the
crawl from ``prior_rate``.  A new page on a busy news directory is thus not treated like a new
page on a static manual.

Observations are kept as sufficient statistics (:class:`ChangeStats`): the unchanged intervals
only through their sum, the changed ones in powers-of-two bins of their length (count and sum),
so a page's state stays a few numbers however often it is visited.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

#: changed intervals are binned by floor(log2(seconds)), clamped to this range
_BIN_LO, _BIN_HI = -10, 40
_NEWTON_STEPS = 200
_RATE_LO, _RATE_HI = 1e-15, 1e9  # per second: never changes .. changes every nanosecond


def rate_regular(visits: int, changes: int, interval: float) -> float:
    """Cho & Garcia-Molina's bias-reduced estimator for ``visits`` regular visits ``interval``
    seconds apart of which ``changes`` found the page changed (changes per second)."""
    if visits <= 0 or interval <= 0 or not 0 <= changes <= visits:
        raise ValueError("need visits > 0, interval > 0 and 0 <= changes <= visits")
    return -math.log((visits - changes + 0.5) / (visits + 0.5)) / interval


def _bin(interval: float) -> int:
    return min(_BIN_HI, max(_BIN_LO, math.floor(math.log2(interval)))) if interval > 0 else _BIN_LO


class ChangeStats:
    """Sufficient statistics of a page's (or a group's) visits: additive, so groups pool."""

    __slots__ = ("changed", "unchanged", "unchanged_time")

    def __init__(self) -> None:
        self.changed: dict[int, list[float]] = {}  # bin -> [count, sum of intervals]
        self.unchanged = 0
        self.unchanged_time = 0.0

    def add(self, interval: float, changed: bool, sign: int = 1) -> None:
        """One visit ``interval`` seconds after the previous one (``sign=-1`` takes it out)."""
        if interval <= 0:
            return  # no time passed: the visit says nothing about the rate
        if changed:
            cell = self.changed.setdefault(_bin(interval), [0.0, 0.0])
            cell[0] += sign
            cell[1] += sign * interval
            if cell[0] <= 0:
                del self.changed[_bin(interval)]
        else:
            self.unchanged += sign
            self.unchanged_time = max(0.0, self.unchanged_time + sign * interval)

    def merge(self, other: ChangeStats, sign: int = 1) -> None:
        for b, (n, s) in other.changed.items():
            cell = self.changed.setdefault(b, [0.0, 0.0])
            cell[0] += sign * n
            cell[1] += sign * s
            if cell[0] <= 1e-9:
                del self.changed[b]
        self.unchanged += sign * other.unchanged
        self.unchanged_time = max(0.0, self.unchanged_time + sign * other.unchanged_time)

    def minus(self, other: ChangeStats) -> ChangeStats:
        out = self.copy()
        out.merge(other, -1)
        return out

    def copy(self) -> ChangeStats:
        out = ChangeStats()
        out.changed = {b: list(c) for b, c in self.changed.items()}
        out.unchanged, out.unchanged_time = self.unchanged, self.unchanged_time
        return out

    @property
    def changes(self) -> int:
        return round(sum(c[0] for c in self.changed.values()))

    @property
    def visits(self) -> int:
        """Observed intervals (visits after the first)."""
        return self.changes + self.unchanged

    def to_list(self) -> list:
        """A JSON-able form (:meth:`from_list` reads it back)."""
        return [self.unchanged, self.unchanged_time,
                [[b, c[0], c[1]] for b, c in sorted(self.changed.items())]]

    @classmethod
    def from_list(cls, data: Iterable) -> ChangeStats:
        unchanged, unchanged_time, cells = data
        out = cls()
        out.unchanged, out.unchanged_time = int(unchanged), float(unchanged_time)
        out.changed = {int(b): [float(n), float(s)] for b, n, s in cells}
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChangeStats) and self.to_list() == other.to_list()

    def __repr__(self) -> str:
        return f"ChangeStats(visits={self.visits}, changes={self.changes})"


def map_rate(stats: ChangeStats, alpha: float = 1.0, beta: float = 0.0) -> float:
    """The rate maximising the incomplete-observation likelihood times a Gamma(α, β) prior.

    α = 1, β = 0 is the plain maximum-likelihood estimator (infinite, here ``_RATE_HI``, when
    every visit found a change; 0 when none did).  The root is that of λ times the
    log-posterior's slope, h(λ) = (α − 1) − (U + β) λ + Σ n_b q(λ t_b) with q(x) = x/(e^x − 1):
    h is convex and decreasing, so Newton's method from λ = 0 climbs to the root monotonically.
    """
    cells = [(c[0], c[1] / c[0]) for c in stats.changed.values() if c[0] > 0]
    pull = alpha - 1.0
    push = stats.unchanged_time + beta
    if not cells and pull <= 0:
        return 0.0  # nothing ever seen changing, and no prior saying it might
    if push <= 0:
        return _RATE_HI  # every visit found a change: no finite rate explains it better
    rate = 0.0
    for _ in range(_NEWTON_STEPS):
        value, deriv = pull - push * rate, -push
        for n, t in cells:
            x = rate * t
            if x < 1e-9:
                value += n * (1.0 - x / 2)
                deriv -= n * t / 2
            elif x < 700.0:
                e = math.expm1(x)
                value += n * x / e
                deriv += n * t * (e - x * (e + 1.0)) / (e * e)
        step = -value / deriv
        rate += step
        if step <= 1e-10 * rate or rate >= _RATE_HI:
            break
    return min(max(rate, _RATE_LO), _RATE_HI)


class RateEstimator:
    """Change rates with a prior pooled over the crawl, each server and each directory.

    ``prior_rate`` (changes per second) is where a crawl with no observation starts;
    ``strength`` is how many observed changes' worth each level's prior counts (a Gamma prior
    with mode the level above's rate: α = 1 + strength, β = strength / rate).  The pools count
    every observation of every page once; a page's directory prior leaves the page's own
    observations out, so a page alone in its directory is not its own prior.
    """

    def __init__(self, prior_rate: float = 1 / 86400, strength: float = 1.0) -> None:
        if prior_rate <= 0 or strength <= 0:
            raise ValueError("prior_rate and strength must be > 0")
        self.prior_rate = prior_rate
        self.strength = strength
        self.crawl = ChangeStats()
        self.hosts: dict[str, ChangeStats] = {}
        self.dirs: dict[str, ChangeStats] = {}
        self._cache: dict[str, tuple[int, float]] = {}  # key -> (visits then, rate)

    def _posterior(self, stats: ChangeStats, prior: float) -> float:
        prior = min(max(prior, _RATE_LO), _RATE_HI)
        return map_rate(stats, 1.0 + self.strength, self.strength / prior)

    def observe(self, host: str, directory: str, interval: float, changed: bool) -> None:
        """Pool one visit of a page of ``host`` in ``directory``."""
        for stats in (self.crawl, self.hosts.setdefault(host, ChangeStats()),
                      self.dirs.setdefault(directory, ChangeStats())):
            stats.add(interval, changed)

    def pool(self, host: str, directory: str, stats: ChangeStats, sign: int = 1) -> None:
        """Add (or take out) a page's whole record, as when a saved crawl is loaded."""
        for pooled in (self.crawl, self.hosts.setdefault(host, ChangeStats()),
                       self.dirs.setdefault(directory, ChangeStats())):
            pooled.merge(stats, sign)

    def _cached(self, key: str, stats: ChangeStats, prior: float) -> float:
        seen = self._cache.get(key)
        if seen is not None and seen[0] == stats.visits:
            return seen[1]
        rate = self._posterior(stats, prior)
        self._cache[key] = (stats.visits, rate)
        return rate

    def crawl_rate(self) -> float:
        return self._cached("", self.crawl, self.prior_rate)

    def host_rate(self, host: str) -> float:
        stats = self.hosts.get(host)
        if stats is None:
            return self.crawl_rate()
        return self._cached("h " + host, stats, self.crawl_rate())

    def prior(self, host: str, directory: str, own: ChangeStats | None = None) -> float:
        """The rate a page of ``directory`` starts from (its own observations ``own`` left
        out of the directory's)."""
        stats = self.dirs.get(directory)
        if stats is None:
            return self.host_rate(host)
        if own is not None and own.visits:
            return self._posterior(stats.minus(own), self.host_rate(host))
        return self._cached("d " + directory, stats, self.host_rate(host))

    def rate(self, host: str, directory: str, own: ChangeStats) -> float:
        """A page's estimated change rate (per second) from its own visits and its prior."""
        prior = self.prior(host, directory, own)
        if not own.visits:
            return prior
        return self._posterior(own, prior)
