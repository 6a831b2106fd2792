"""How a revisit budget is spread over pages (Cho & Garcia-Molina, "Synchronizing a database to
improve freshness", SIGMOD 2000; "Effective page refresh policies for Web crawlers", TODS 2003).

A page changing as a Poisson process of rate λ and visited every 1/f seconds is fresh (our copy
equals the live page) a time-averaged fraction F(λ, f) = (f/λ)(1 − e^{−λ/f}) of the time.  With
a budget of B visits per second, the policies are:

* ``optimal`` -- maximise Σ w_i F(λ_i, f_i) subject to Σ f_i = B, with w_i the page's relevance
  (a stale relevant page costs more than a stale off-topic one).  The Lagrange condition is
  w_i ∂F/∂f = μ, i.e. (w_i/λ_i)(1 − (1 + x_i) e^{−x_i}) = μ with x_i = λ_i/f_i; a page with
  w_i/λ_i <= μ gets no visit at all.  So the allocation rises with λ and then falls: a page that
  changes faster than the budget can follow is revisited *less* (each visit buys little
  freshness that lasts), and given up past a point.  Solved exactly: x = −1 − W₋₁(−(1 − c)/e)
  (Lambert's W), μ by bisection.
* ``uniform`` -- every page the same frequency: Cho & Garcia-Molina's robust baseline, better
  than proportional.
* ``proportional`` -- f ∝ λ: the intuitive policy, which spends most on pages that are stale
  again moments after each visit.

Politeness bounds the budget per server, not only overall: ``caps`` gives each group (server)
its own most, and a group whose share would exceed it gets its own larger multiplier μ_g
(the same condition within the group), the rest of the budget going to the others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

POLICIES = ("optimal", "uniform", "proportional")
_LOG_MU = (-90.0, 90.0)  # bisection bracket of log μ: wide enough for any unit of time
_STEPS = 64
_SERIES = 1e-5  # below this, x(c) from its series: Lambert's W loses precision at the branch


def freshness(rate: np.ndarray | float, freq: np.ndarray | float) -> np.ndarray:
    """Time-averaged freshness of pages changing at ``rate`` visited every 1/``freq``."""
    lam = np.asarray(rate, dtype=float)
    f = np.asarray(freq, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = lam / f
        out = np.where(x > 0, -np.expm1(-x) / x, 1.0)
    out = np.where(lam <= 0, 1.0, np.where(f <= 0, 0.0, out))
    return out


def _x_of(c: np.ndarray) -> np.ndarray:
    """x with 1 − (1 + x) e^{−x} = c, for c in [0, 1)."""
    # imported here: scipy.special costs every crawl's start, and only a revisit policy uses it
    from scipy.special import lambertw

    c = np.clip(c, 0.0, 1.0)
    s = np.sqrt(2 * c)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = -1.0 - lambertw(-(1.0 - c) / math.e, -1).real
    return np.where(c < _SERIES, s * (1 + s / 3), np.where(c >= 1.0, np.inf, exact))


def _x_one(c: float) -> float:
    """:func:`_x_of` for one value, by Newton's method (no array round trip)."""
    if c < _SERIES:
        s = math.sqrt(2 * max(c, 0.0))
        return s * (1 + s / 3)
    if c >= 1.0:
        return math.inf
    lo, hi = 0.0, math.inf
    x = math.sqrt(2 * c) if c < 0.3 else -math.log1p(-c) + math.log1p(-math.log1p(-c))
    for _ in range(60):
        g = -math.expm1(-x) - x * math.exp(-x) - c  # 1 − (1 + x) e^{−x} − c, increasing in x
        if g > 0:
            hi = x
        else:
            lo = x
        slope = x * math.exp(-x)
        nxt = x - g / slope if slope > 0 else (lo + hi) / 2
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2 if hi < math.inf else 2 * x + 1
        if abs(nxt - x) <= 1e-12 * max(1.0, x):
            return nxt
        x = nxt
    return x


def frequency(policy: str, rate: float, weight: float, mu: float) -> float:
    """One page's visit frequency under ``policy`` for the multiplier ``mu``."""
    if policy == "uniform":
        return 1.0 / mu
    if policy == "proportional":
        return rate / mu
    if policy != "optimal":
        raise ValueError(f"unknown refresh policy {policy!r}: one of {', '.join(POLICIES)}")
    if rate <= 0 or weight <= 0 or weight / rate <= mu:
        return 0.0
    x = _x_one(mu * rate / weight)
    return rate / x if 0 < x < math.inf else 0.0


def frequencies(policy: str, rates: np.ndarray, weights: np.ndarray,
                mu: np.ndarray | float) -> np.ndarray:
    """Each page's visit frequency under ``policy`` for the multiplier(s) ``mu``."""
    lam = np.asarray(rates, dtype=float)
    w = np.asarray(weights, dtype=float)
    mu = np.asarray(mu, dtype=float)
    if policy == "uniform":
        return np.broadcast_to(1.0 / mu, lam.shape).astype(float)
    if policy == "proportional":
        return lam / mu
    if policy != "optimal":
        raise ValueError(f"unknown refresh policy {policy!r}: one of {', '.join(POLICIES)}")
    active = (lam > 0) & (w > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(active, mu * lam / np.where(w > 0, w, 1.0), 1.0)
        x = _x_of(c)
        f = np.where(active & (c < 1.0), lam / x, 0.0)
    return np.where(np.isfinite(f), f, 0.0)


@dataclass
class Allocation:
    """A solved allocation: each page's frequency, and the multipliers that give any page's."""

    policy: str
    mu: float                      # the overall multiplier (a group without its own uses it)
    group_mu: dict[object, float] = field(default_factory=dict)
    freqs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    expected: float = 0.0          # relevance-weighted freshness the allocation predicts

    def frequency(self, rate: float, weight: float, group: object = None) -> float:
        """Visits per second for one page (a page added since the allocation was solved)."""
        return frequency(self.policy, rate, weight, self.group_mu.get(group, self.mu))


def _total(policy: str, lam: np.ndarray, w: np.ndarray, log_mu: np.ndarray,
           groups: np.ndarray, n_groups: int) -> np.ndarray:
    return np.bincount(groups, frequencies(policy, lam, w, np.exp(log_mu)), n_groups)


def allocate(policy: str, rates: np.ndarray, weights: np.ndarray, budget: float,
             groups: list | None = None, caps: dict | None = None) -> Allocation:
    """Spread ``budget`` visits per second over pages changing at ``rates``.

    ``groups`` names each page's server and ``caps`` the most visits per second a server takes
    (politeness); without them only the total binds.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown refresh policy {policy!r}: one of {', '.join(POLICIES)}")
    lam = np.asarray(rates, dtype=float)
    w = np.asarray(weights, dtype=float)
    if lam.size == 0 or budget <= 0:
        return Allocation(policy, math.inf, freqs=np.zeros(lam.size))
    names = list(dict.fromkeys(groups)) if groups is not None else [None]
    index = {g: i for i, g in enumerate(names)}
    gid = (np.array([index[g] for g in groups], dtype=np.int64) if groups is not None
           else np.zeros(lam.size, dtype=np.int64))
    n_groups = len(names)
    cap = np.array([(caps or {}).get(g, math.inf) for g in names], dtype=float)
    # each capped group's own multiplier: the smallest that keeps it within its cap
    own = np.full(n_groups, _LOG_MU[0])
    if np.isfinite(cap).any():
        g_lo, g_hi = np.full(n_groups, _LOG_MU[0]), np.full(n_groups, _LOG_MU[1])
        for _ in range(_STEPS):
            g_mid = (g_lo + g_hi) / 2
            over = _total(policy, lam, w, g_mid[gid], gid, n_groups) > cap
            g_lo, g_hi = np.where(over, g_mid, g_lo), np.where(over, g_hi, g_mid)
        own = np.where(np.isfinite(cap), g_hi, _LOG_MU[0])
    # then the overall multiplier: the budget, with no group above its own
    lo, hi = _LOG_MU
    if _total(policy, lam, w, own[gid], gid, n_groups).sum() <= budget:
        hi = _LOG_MU[0]  # the caps spend less than the budget: each group at its cap
    else:
        for _ in range(_STEPS):
            mid = (lo + hi) / 2
            spent = _total(policy, lam, w, np.maximum(own, mid)[gid], gid, n_groups).sum()
            lo, hi = (mid, hi) if spent > budget else (lo, mid)
    log_mu = np.maximum(own, hi)
    freqs = frequencies(policy, lam, w, np.exp(log_mu[gid]))
    total_w = w.sum()
    expected = float((w * freshness(lam, freqs)).sum() / total_w) if total_w > 0 else 0.0
    return Allocation(policy, float(math.exp(hi)),
                      {g: float(math.exp(log_mu[i])) for i, g in enumerate(names)},
                      freqs, expected)
